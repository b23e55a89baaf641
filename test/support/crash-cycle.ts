// The kill -9 loop shared by test/e2e/crash.test.ts and scripts/crash-loop.ts: concurrent writers in several
// organizations, SIGKILL at a random moment, restart on the same data dir, check every acknowledged write.
import { spawnService, type ServiceProcess } from './process.js';
import { verifyTenant, type PersonRecord, type Resolution, type TenantModel, type Writer } from './crash-model.js';
import { Client, email, removeDir, tempDir } from './server.js';

export const BUCKETS = [
  'end_user_read_write',
  'end_user_read_only',
  'end_user_no_access',
  'person_pool-end_user_read_write',
  'person_pool-end_user_read_only',
  'person_pool-end_user_no_access',
] as const;
const GROUPS = ['g0', 'g1', 'g2'];

export interface CrashLoopOptions {
  seed: number;
  /** organizations written at once: the root and orgs - 1 suborganizations */
  orgs: number;
  /** sequential writers per organization, each with its own attribute bucket (at most 6) */
  writersPerOrg: number;
  /** acknowledged writes to wait for in a cycle before the kill timer starts, so every cycle writes */
  minAcks: number;
  /** the kill comes at a uniformly random moment up to this long after minAcks */
  maxKillDelayMs: number;
  env?: Record<string, string>;
}

export interface CycleReport {
  cycle: number;
  /** from the first write of the cycle to the kill */
  killAfterMs: number;
  acknowledged: { persons: number; attributes: number; groups: number };
  inFlight: number;
  inFlightApplied: number;
  restartMs: number;
  persons: number;
  /** the service's own start-up line about recovery */
  recovery: string;
}

export interface CrashLoop {
  readonly dataDir: string;
  cycle(): Promise<CycleReport>;
  /** stops the service and removes the data dir */
  close(): Promise<void>;
}

/** mulberry32: a seeded generator, so that a failing run's kill delays can be repeated with its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Counts {
  persons: number;
  attributes: number;
  groups: number;
}

const total = (c: Counts) => c.persons + c.attributes + c.groups;

interface Answer {
  status?: number;
  text?: string;
  body?: any;
  /** set when no answer came: the outcome of the write is then unknown */
  error?: unknown;
}

async function call(base: string, w: Writer, method: string, path: string, body: unknown): Promise<Answer> {
  try {
    const res = await fetch(base + path, {
      method,
      headers: { 'Service-OrgID': w.tenant.orgId, 'Service-API-Key': w.tenant.apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return { status: res.status, text, body: text === '' ? undefined : JSON.parse(text) };
  } catch (error) {
    return { error };
  }
}

export async function createCrashLoop(options: CrashLoopOptions): Promise<CrashLoop> {
  if (options.writersPerOrg < 1 || options.writersPerOrg > BUCKETS.length) throw new Error(`writersPerOrg must be 1-${BUCKETS.length}`);
  const rand = random(options.seed);
  const dataDir = tempDir('identity-crash-');
  let service: ServiceProcess = await spawnService(options.env ?? {}, dataDir);
  let cycleNo = 0;

  // Set-up is acknowledged before the first kill, so it is part of what must survive.
  const tenants: TenantModel[] = [{ tenant: { orgId: service.client.orgId, apiKey: service.client.apiKey }, groups: GROUPS, persons: new Map() }];
  for (let i = 1; i < options.orgs; i++) {
    const r = await service.client.post('/organizations/suborganizations', { sub_org_name: `crash-${i}` });
    if (r.status !== 200) throw new Error(`creating a suborganization: ${r.status} ${r.text}`);
    tenants.push({ tenant: { orgId: r.body.result.id, apiKey: r.body.result.api_key }, groups: GROUPS, persons: new Map() });
  }
  for (const t of tenants) {
    const c = new Client(service.base, t.tenant.orgId, t.tenant.apiKey);
    for (const name of GROUPS) {
      const r = await c.post('/groups', { name });
      if (r.status !== 201) throw new Error(`creating group ${name}: ${r.status} ${r.text}`);
    }
  }
  const writers: Writer[] = tenants.flatMap((t, o) =>
    BUCKETS.slice(0, options.writersPerOrg).map((bucket, b) => ({ name: `w${o}-${b}`, tenant: t.tenant, bucket, seq: 0, attribute: undefined })),
  );
  const modelOf = (w: Writer) => tenants.find((t) => t.tenant === w.tenant) as TenantModel;

  async function write(w: Writer, base: string, counts: Counts, killed: () => boolean): Promise<void> {
    const persons = modelOf(w).persons;
    const unexpected = (what: string, r: Answer) =>
      new Error(`cycle ${cycleNo} (seed ${options.seed}): ${w.name} ${what} got ${r.status ?? ''} ${r.text ?? String(r.error)} before the kill`);
    for (;;) {
      if (killed()) return;
      w.seq++;
      const handle = `${w.name}-${cycleNo}-${w.seq}@crash.test`;
      w.pendingPerson = handle;
      let r = await call(base, w, 'POST', '/persons', email(handle));
      if (r.status !== 201) {
        if (r.error !== undefined && killed()) return;
        throw unexpected(`POST /persons ${handle}`, r);
      }
      delete w.pendingPerson;
      const person: PersonRecord = { id: r.body.result.person_id as string, groups: [] };
      persons.set(handle, person);
      counts.persons++;

      w.pendingAttribute = w.seq;
      r = await call(base, w, 'PUT', `/organizations/attributes/${w.bucket}`, { writer: w.name, seq: w.seq });
      if (r.status !== 204) {
        if (r.error !== undefined && killed()) return;
        throw unexpected(`PUT attributes ${w.bucket}`, r);
      }
      w.attribute = w.seq;
      delete w.pendingAttribute;
      counts.attributes++;

      const groups = GROUPS.filter((_, i) => (w.seq >> i) & 1);
      person.pendingGroups = groups;
      r = await call(base, w, 'PUT', `/persons/${person.id}/groups`, { groups });
      if (r.status !== 200) {
        if (r.error !== undefined && killed()) return;
        throw unexpected(`PUT groups of ${person.id}`, r);
      }
      person.groups = r.body.result;
      delete person.pendingGroups;
      counts.groups++;
    }
  }

  async function waitUntil(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`cycle ${cycleNo} (seed ${options.seed}): timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`cycle ${cycleNo} (seed ${options.seed}): timed out waiting for ${what}`)), timeoutMs);
    });
    try {
      return await Promise.race([promise, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    dataDir,
    async cycle() {
      cycleNo++;
      const counts: Counts = { persons: 0, attributes: 0, groups: 0 };
      let killed = false;
      const base = service.base;
      const started = performance.now();
      let failure: unknown;
      const settled = Promise.all(writers.map((w) => write(w, base, counts, () => killed).catch((e: unknown) => (failure ??= e))));

      // Drawn every cycle, even one that fails early, so that a seed fixes every cycle's kill delay.
      const delay = rand() * options.maxKillDelayMs;
      await waitUntil(() => total(counts) >= options.minAcks || failure !== undefined, 30_000, `${options.minAcks} acknowledged writes`).catch((e: unknown) => (failure ??= e));
      if (failure === undefined) await new Promise((r) => setTimeout(r, delay));
      killed = true;
      const killAfterMs = performance.now() - started;
      await service.kill('SIGKILL');
      await within(settled, 30_000, 'the writers to notice the kill').catch((e: unknown) => (failure ??= e));
      if (failure !== undefined) throw failure;

      const restartStarted = performance.now();
      service = await service.restart();
      const restartMs = performance.now() - restartStarted;
      const recovery = service.process.output().match(/^recovered .*$/m)?.[0] ?? '(no recovery line)';

      const sum: Resolution = { inFlight: 0, applied: 0, persons: 0 };
      for (const t of tenants) {
        const r = await verifyTenant(service.base, t, writers.filter((w) => w.tenant === t.tenant), `cycle ${cycleNo} (seed ${options.seed})`);
        sum.inFlight += r.inFlight;
        sum.applied += r.applied;
        sum.persons += r.persons;
      }
      return { cycle: cycleNo, killAfterMs, acknowledged: { ...counts }, inFlight: sum.inFlight, inFlightApplied: sum.applied, restartMs, persons: sum.persons, recovery };
    },
    async close() {
      await service.stop().catch(() => service.kill('SIGKILL'));
      removeDir(dataDir);
    },
  };
}
