// What the service adds to a cloud change, beside the provider's own time for the same calls: IAM roles created
// and deleted through the service against a real moto_server, and the same IAM calls made directly with
// @aws-sdk/client-iam against the same moto, in alternating rounds; where the service's time goes (its
// cloud_change_phase_seconds: queue, provider, commit), a durable write through the service with no provider
// call and a bare fsync on its data dir, measured in the same rounds; then the time to snapshot an account of
// --roles roles through POST /cloud/connections/{id}/snapshots, beside listing them directly.
// The latency is compared one change at a time (--concurrency 1, the default): a user asking what the service adds
// to a call times one call, and through one organization the service runs its changes one at a time by design
// (src/cloud/serial.ts), so with loops overlapping its p50 would be queueing, which direct calls do not have.
//   npm run bench -- cloud [--duration 3] [--rounds 3] [--concurrency 1] [--roles 10000] [--profile]
import { closeSync, fdatasyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { open as openLmdb } from 'lmdb';
import { performance } from 'node:perf_hooks';
import {
  CreateRoleCommand,
  DeleteRoleCommand,
  type IAMClient,
  ListRolesCommand,
} from '@aws-sdk/client-iam';
import { awsClient } from '../src/cloud/aws.js';
import { findMotoServer, MOTO_MISSING, startMoto, type Moto } from '../test/support/moto.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { Histogram, type LatencySummary } from './lib/histogram.js';
import { cpuSeconds } from './lib/process-cpu.js';
import { count, environment, environmentLine, formatTable, ms, pct, writeResults, type Column } from './lib/report.js';
import { SERVICE_AUTH, startService, type ServerProcess, type ServiceProcess } from './lib/server-process.js';
import { createAddressGuard } from '../src/lib/address-guard.js';
import { createOutbound } from '../src/lib/guarded-connect.js';

const USAGE = `usage: npm run bench -- cloud [options]   (or: npx tsx bench/cloud.ts [options])
  --duration <s>      seconds per measured run (default 3)
  --warmup <s>        unmeasured seconds before each run (default 1)
  --rounds <n>        rounds, each: the service (durable commits), the service with SERVICE_DURABILITY=nosync,
                      the SDK directly; then a durable write through the service, an empty LMDB commit and
                      a bare fdatasync on its data dir (default 3)
  --concurrency <n>   create/delete loops running at once, each on its own roles (default 1: the latency comparison;
                      above 1 a throughput reading, where the service's changes of one organization queue by design)
  --roles <n>         roles in the account the snapshot inventories, created directly in parallel (default 10000)
  --profile           run the durable service with --cpu-prof; its profile in bench/results/profiles/cloud/
  --help              this text
Needs moto_server (moto 5, the pyenv Python). Prints a table and ratios, and writes bench/results/cloud-<time>.json.`;

interface Options {
  duration: number;
  warmup: number;
  rounds: number;
  concurrency: number;
  roles: number;
  profile: boolean;
}

function options(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '3' },
      warmup: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '3' },
      concurrency: { type: 'string', default: '1' },
      roles: { type: 'string', default: '10000' },
      profile: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  return {
    duration: numberFlag('duration', values.duration, 0.1, USAGE),
    warmup: numberFlag('warmup', values.warmup, 0, USAGE),
    rounds: Math.round(numberFlag('rounds', values.rounds, 1, USAGE)),
    concurrency: Math.round(numberFlag('concurrency', values.concurrency, 1, USAGE)),
    roles: Math.round(numberFlag('roles', values.roles, 0, USAGE)),
    profile: values.profile,
  };
}

/** The loops' account and the snapshot's account are kept apart in moto by x-moto-account-id. */
const LOOP_ACCOUNT = '111111111111';
const SNAPSHOT_ACCOUNT = '222222222222';
const ACCESS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'bench-secret-access-key-not-a-real-one';
const TRUST = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }] });

/**
 * The direct side's client is the one the service builds for a connection with this config and these credentials
 * (src/cloud/aws.ts): the same region, endpoint, static credentials, retries, keep-alive request handler and moto
 * account header, so the two sides differ only by what the service does around the same SDK calls.
 */
function iamOf(moto: Moto, account: string): IAMClient {
  return awsClient({ account_id: account, endpoint: moto.url }, { access_key_id: ACCESS_KEY, secret_access_key: SECRET }, createOutbound(createAddressGuard({ allowInsecure: true })));
}

/** One change: a role created, or deleted. Each side does it with the provider calls the service makes. */
interface Side {
  create(name: string): Promise<void>;
  delete(name: string): Promise<void>;
}

/**
 * One request through node:http and a keep-alive agent: the HTTP stack the SDK's default request handler uses
 * for the direct side's calls, so neither side's client costs more per request than the other's (fetch, undici,
 * costs about a millisecond of CPU per request more, on cores the service and moto share).
 */
function httpCall(agent: Agent, url: string, method: string, body: string | undefined): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...SERVICE_AUTH };
    if (body !== undefined) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    const req = request(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Through the service: POST …/aws/roles and DELETE …/aws/roles/{name}, each answered after its event commits. */
function serviceSide(service: ServerProcess, connection: string): Side {
  const base = `${service.url}/cloud/connections/${connection}/aws/roles`;
  const agent = new Agent({ keepAlive: true, maxSockets: 50 });
  const call = async (method: string, path: string, body: unknown, want: number) => {
    const r = await httpCall(agent, `${base}${path}`, method, body === undefined ? undefined : JSON.stringify(body));
    if (r.status !== want) throw new Error(`${method} ${path || '/'}: ${r.status} ${r.text}`);
  };
  return {
    create: (name) => call('POST', '', { role_name: name, assume_role_policy_doc: TRUST }, 201),
    delete: (name) => call('DELETE', `/${name}`, undefined, 204),
  };
}

/**
 * Directly with the SDK, the calls a user making these two changes would make, which are the calls src/cloud/aws.ts
 * makes for them: CreateRole, whose answer holds every field of the event (ARN, role id, creation time...), and
 * DeleteRole (the service lists and removes policies and instance profiles only when DeleteRole answers
 * DeleteConflict, which a role with none never does). One client, reused, as the service reuses one per
 * connection. The difference is what the service itself adds: HTTP, validation, the queue and the commit.
 */
function directSide(iam: IAMClient): Side {
  return {
    create: async (name) => {
      await iam.send(new CreateRoleCommand({ RoleName: name, Path: '/', AssumeRolePolicyDocument: TRUST }));
    },
    delete: async (name) => {
      await iam.send(new DeleteRoleCommand({ RoleName: name }));
    },
  };
}

/**
 * The service's fixed costs, without a provider: PATCH the connection's name (HTTP, the queue, the actor, one
 * durable WAL commit), and a bare 4 KiB write + fdatasync of a file in the service's data dir (the disk's own sync).
 */
async function durableWrite(service: ServerProcess, connection: string, o: Options): Promise<LatencySummary> {
  const hist = new Histogram();
  const end = performance.now() + (o.warmup + o.duration) * 1000;
  const measureFrom = end - o.duration * 1000;
  const agent = new Agent({ keepAlive: true });
  for (let i = 0; performance.now() < end; i++) {
    const t0 = performance.now();
    const r = await httpCall(agent, `${service.url}/cloud/connections/${connection}`, 'PATCH', JSON.stringify({ name: `loops-${i}` }));
    if (r.status !== 200) throw new Error(`PATCH /cloud/connections/{id}: ${r.status} ${r.text}`);
    if (t0 >= measureFrom) hist.record((performance.now() - t0) * 1000);
  }
  agent.destroy();
  return hist.summary();
}

function bareFsync(dataDir: string, o: Options): LatencySummary {
  const hist = new Histogram();
  const path = join(dataDir, 'bench-fsync.tmp');
  const fd = openSync(path, 'w');
  const page = Buffer.alloc(4096, 1);
  try {
    const end = performance.now() + o.duration * 1000;
    for (let i = 0; performance.now() < end; i++) {
      const t0 = performance.now();
      writeSync(fd, page, 0, page.length, (i % 256) * page.length);
      fdatasyncSync(fd);
      hist.record((performance.now() - t0) * 1000);
    }
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
  return hist.summary();
}

/**
 * An empty durable commit as the WAL makes it (src/wal/store.ts: lmdb, overlappingSync false, synced): one small
 * value put in an environment of its own in the service's data dir. LMDB syncs its data pages (fdatasync) and
 * then writes its meta page through an O_DSYNC descriptor: two device flushes per commit.
 */
async function lmdbCommit(dataDir: string, o: Options): Promise<LatencySummary> {
  const hist = new Histogram();
  const root = openLmdb({ path: join(dataDir, 'bench-commit.mdb'), overlappingSync: false, noSync: false });
  const value = Buffer.alloc(512, 1);
  try {
    const end = performance.now() + o.duration * 1000;
    for (let i = 0; performance.now() < end; i++) {
      const t0 = performance.now();
      await root.put(`k${i % 1000}`, value);
      hist.record((performance.now() - t0) * 1000);
    }
  } finally {
    await root.close();
    rmSync(join(dataDir, 'bench-commit.mdb'), { force: true });
    rmSync(join(dataDir, 'bench-commit.mdb-lock'), { force: true });
  }
  return hist.summary();
}

/** The service's cloud_change_phase_seconds sums and counts, from its /metrics. */
type Phases = Record<string, { sum: number; count: number }>;
async function phases(service: ServerProcess): Promise<Phases> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const out: Phases = {};
  for (const m of text.matchAll(/^cloud_change_phase_seconds_(sum|count)\{phase="(\w+)"\} (\S+)$/gm)) {
    const p = (out[m[2] as string] ??= { sum: 0, count: 0 });
    p[m[1] as 'sum' | 'count'] = Number(m[3]);
  }
  return out;
}

/** Mean µs per change of each phase between two readings. */
function phaseMeans(before: Phases, after: Phases): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [phase, a] of Object.entries(after)) {
    const b = before[phase] ?? { sum: 0, count: 0 };
    if (a.count > b.count) out[phase] = ((a.sum - b.sum) / (a.count - b.count)) * 1e6;
  }
  return out;
}

type SideName = 'service' | 'nosync' | 'direct';
const SIDES: SideName[] = ['service', 'nosync', 'direct'];
const LABELS: Record<SideName, string> = { service: 'through the service, durable', nosync: 'through the service, nosync', direct: 'SDK directly, same calls' };

interface RunResult {
  /** changes (creates + deletes) per second */
  changes_per_s: number;
  changes: number;
  errors: number;
  failures: string[];
  /** the service process's CPU per change, warm-up included (service side only) */
  server_cpu_us_per_change?: number;
  /** this process's CPU per change, warm-up included: the SDK's own work on the direct sides */
  bench_cpu_us_per_change: number;
  all: LatencySummary;
  create: LatencySummary;
  delete: LatencySummary;
  /** service side only: mean µs per change in each phase inside the service (queue, provider, commit), measured changes only */
  phases_mean_us?: Record<string, number>;
}

let serial = 0;

/** `concurrency` closed loops of create-then-delete, each on a fresh role name; warm-up first, unmeasured. */
async function run(label: string, side: Side, o: Options, service?: ServerProcess): Promise<RunResult> {
  const serverPid = service?.pid;
  console.error(`  ${label}: ${o.warmup} s warm-up, ${o.duration} s of create + delete in ${o.concurrency} loop(s)`);
  const hist = { all: new Histogram(), create: new Histogram(), delete: new Histogram() };
  let changes = 0;
  let errors = 0;
  let done = 0;
  const failures: string[] = [];
  const start = performance.now();
  const measureFrom = start + o.warmup * 1000;
  const end = measureFrom + o.duration * 1000;
  // a change counts when it starts inside the measured window (the last ones may finish just after it)
  const timed = async (kind: 'create' | 'delete', f: () => Promise<void>) => {
    const t0 = performance.now();
    const measuring = t0 >= measureFrom && t0 < end;
    try {
      await f();
    } catch (error) {
      if (measuring) errors++;
      if (failures.length < 5) failures.push(error instanceof Error ? error.message : String(error));
      return;
    }
    done++;
    if (!measuring) return;
    const us = (performance.now() - t0) * 1000;
    hist[kind].record(us);
    hist.all.record(us);
    changes++;
  };
  // the service's phase sums are read when the first change of the measured window starts, and at the end
  let phasesAtStart: Promise<Phases> | undefined;
  const loop = async (l: number) => {
    while (performance.now() < end) {
      if (service && performance.now() >= measureFrom) await (phasesAtStart ??= phases(service));
      const name = `bench-${process.pid}-${l}-${serial++}`;
      await timed('create', () => side.create(name));
      await timed('delete', () => side.delete(name));
    }
  };
  const cpu0 = cpuSeconds(serverPid);
  const own0 = process.cpuUsage();
  await Promise.all(Array.from({ length: o.concurrency }, (_, l) => loop(l)));
  const cpu1 = cpuSeconds(serverPid);
  const phases_mean_us = service && phasesAtStart ? phaseMeans(await phasesAtStart, await phases(service)) : undefined;
  const own = process.cpuUsage(own0);
  const seconds = (performance.now() - measureFrom) / 1000;
  if (errors > 0) console.error(`    ${label}: ${errors} errors; ${failures.join('; ')}`);
  const server_cpu_us_per_change = cpu0 !== undefined && cpu1 !== undefined && done > 0 ? ((cpu1 - cpu0) * 1e6) / done : undefined;
  const bench_cpu_us_per_change = done > 0 ? (own.user + own.system) / done : 0;
  return { changes_per_s: changes / seconds, changes, errors, failures, bench_cpu_us_per_change, ...(server_cpu_us_per_change === undefined ? {} : { server_cpu_us_per_change }), all: hist.all.summary(), create: hist.create.summary(), delete: hist.delete.summary(), ...(phases_mean_us && { phases_mean_us }) };
}

/**
 * moto, many requests at once, now and then answers one with an HTML error page (the SDK then reports an XML
 * parse error): a role is tried up to 3 times, and one that exists after a failed try counts as created.
 */
async function createRetried(iam: IAMClient, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await iam.send(new CreateRoleCommand({ RoleName: name, AssumeRolePolicyDocument: TRUST }));
      return;
    } catch (error) {
      if (attempt > 1 && (error as { name?: string }).name === 'EntityAlreadyExistsException') return;
      const message = error instanceof Error ? error.message : String(error);
      if (attempt >= 3) throw new Error(`creating role ${name}: ${message}`);
      console.error(`    creating role ${name} failed (${message.slice(0, 80)}), trying again`);
    }
  }
}

/** Creates `n` roles directly, `parallel` at a time. */
async function createRoles(iam: IAMClient, n: number, parallel: number): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  let last = t0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      await createRetried(iam, `inventory-${String(i).padStart(6, '0')}`);
      if (performance.now() - last > 10_000) {
        last = performance.now();
        console.error(`    ${i + 1} of ${n} roles created`);
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return (performance.now() - t0) / 1000;
}

async function connect(service: ServerProcess, moto: Moto, name: string, account: string): Promise<string> {
  const r = await fetch(`${service.url}/cloud/connections`, {
    method: 'POST',
    headers: { ...SERVICE_AUTH, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, type: 'aws', config: { account_id: account, endpoint: moto.url }, credentials: { access_key_id: ACCESS_KEY, secret_access_key: SECRET } }),
  });
  const text = await r.text();
  if (r.status !== 201) throw new Error(`POST /cloud/connections: ${r.status} ${text}`);
  return (JSON.parse(text) as { result: { connection_id: string } }).result.connection_id;
}

interface SnapshotResult {
  roles: number;
  create_s: number;
  /** POST /cloud/connections/{id}/snapshots, answered after the snapshot's commit */
  service_s: number;
  /** ListRoles (and ListUsers) pages of 1000 directly: the provider's share of the snapshot */
  direct_s: number;
  answer: Record<string, unknown>;
}

/** moto (werkzeug, threaded) answers more of a burst with error pages, and has stopped under one, at 16 at a time */
const CREATE_PARALLEL = 8;

async function snapshot(service: ServerProcess, moto: Moto, roles: number): Promise<SnapshotResult> {
  const iam = iamOf(moto, SNAPSHOT_ACCOUNT);
  console.error(`  creating ${roles} roles directly, ${CREATE_PARALLEL} at a time`);
  const create_s = await createRoles(iam, roles, CREATE_PARALLEL);
  const connection = await connect(service, moto, 'inventory', SNAPSHOT_ACCOUNT);
  console.error('  POST /cloud/connections/{id}/snapshots');
  const t0 = performance.now();
  const r = await fetch(`${service.url}/cloud/connections/${connection}/snapshots`, { method: 'POST', headers: { ...SERVICE_AUTH } });
  const text = await r.text();
  const service_s = (performance.now() - t0) / 1000;
  if (r.status !== 201) throw new Error(`POST snapshots: ${r.status} ${text}`);
  const answer = (JSON.parse(text) as { result: Record<string, unknown> }).result;
  if (answer['non_human_identities'] !== roles) throw new Error(`the snapshot counted ${String(answer['non_human_identities'])} roles, not ${roles}: ${text}`);
  console.error('  the same listing directly');
  const t1 = performance.now();
  let listed = 0;
  let Marker: string | undefined;
  do {
    const page = await iam.send(new ListRolesCommand({ Marker, MaxItems: 1000 })).catch((error: unknown) => {
      throw new Error(`ListRoles directly: ${error instanceof Error ? error.message : String(error)}`);
    });
    listed += page.Roles?.length ?? 0;
    Marker = page.IsTruncated ? page.Marker : undefined;
  } while (Marker);
  const direct_s = (performance.now() - t1) / 1000;
  if (listed !== roles) throw new Error(`ListRoles listed ${listed} roles, not ${roles}`);
  return { roles, create_s, service_s, direct_s, answer };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

export async function main(argv: string[]): Promise<void> {
  const o = options(argv);
  if (!o) return console.log(USAGE);
  if (!findMotoServer()) throw new Error(MOTO_MISSING);
  const env = environment();
  const rounds: Record<SideName, RunResult[]> = { service: [], nosync: [], direct: [] };
  const writes: LatencySummary[] = [];
  const fsyncs: LatencySummary[] = [];
  const commits: LatencySummary[] = [];
  let snap: SnapshotResult | undefined;
  let snapshotError: string | undefined;
  console.error(`cloud benchmark: ${o.rounds} rounds of ${o.duration} s, ${o.concurrency} loop(s); snapshot of ${o.roles} roles`);
  const moto = await startMoto();
  let service: ServiceProcess | undefined;
  let nosync: ServiceProcess | undefined;
  const serviceEnv = { SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_CLOUD_SNAPSHOT_INTERVAL: '0', SERVICE_BILLING_INTERVAL: '0' };
  try {
    // the service as deployed (each event's commit synced before the answer), and one without syncs beside it:
    // the difference is the disk's share; what nosync still adds over the provider is the service's own
    const profileDir = o.profile ? join(fileURLToPath(new URL('..', import.meta.url)), 'bench/results/profiles/cloud') : undefined;
    if (profileDir) mkdirSync(profileDir, { recursive: true });
    service = await startService({ ...serviceEnv, SERVICE_DURABILITY: 'sync' }, profileDir === undefined ? {} : { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] });
    nosync = await startService({ ...serviceEnv, SERVICE_DURABILITY: 'nosync' });
    const loops = await connect(service, moto, 'loops', LOOP_ACCOUNT);
    const services: Partial<Record<SideName, ServiceProcess>> = { service, nosync };
    const sides: Record<SideName, Side> = { service: serviceSide(service, loops), nosync: serviceSide(nosync, await connect(nosync, moto, 'loops', LOOP_ACCOUNT)), direct: directSide(iamOf(moto, LOOP_ACCOUNT)) };
    // every side warmed once before the rounds, unmeasured: the first run of a fresh process would otherwise pay
    // its start (JIT, the SDK's first calls, the service's first commits) inside the first round's warm-up
    for (const name of SIDES) await run(`${LABELS[name]} (warming up)`, sides[name], { ...o, warmup: 0, duration: o.warmup + 1 }, services[name]);
    for (let round = 1; round <= o.rounds; round++) {
      // rotate which side goes first, so none always runs first or after the same one
      const order = SIDES.map((_, i) => SIDES[(i + round - 1) % SIDES.length] as SideName);
      for (const name of order) rounds[name].push(await run(`${LABELS[name]} (round ${round} of ${o.rounds})`, sides[name], o, services[name]));
      console.error(`  a durable write through the service (PATCH a connection's name), an empty LMDB commit, a bare fdatasync (round ${round} of ${o.rounds})`);
      writes.push(await durableWrite(service, loops, o));
      commits.push(await lmdbCommit(service.dataDir, o));
      fsyncs.push(bareFsync(service.dataDir, o));
    }
    // the rounds' figures are kept and printed even when the snapshot's part fails
    if (o.roles > 0) {
      try {
        snap = await snapshot(service, moto, o.roles);
      } catch (error) {
        snapshotError = error instanceof Error ? error.message : String(error);
        console.error(`  the snapshot failed: ${snapshotError}`);
      }
    }
  } finally {
    await nosync?.stop();
    await service?.stop();
    await moto.stop();
  }

  type Row = [string, RunResult];
  const rows: Row[] = [];
  for (let i = 0; i < o.rounds; i++) for (const name of SIDES) rows.push([`${LABELS[name]}, round ${i + 1}`, rounds[name][i] as RunResult]);
  const phase = (r: RunResult, p: string) => (r.phases_mean_us?.[p] === undefined ? '' : ms(r.phases_mean_us[p]));
  const columns: Column<Row>[] = [
    { title: 'create + delete role', value: ([label]) => label, align: 'left' },
    { title: 'changes/s', value: ([, r]) => count(r.changes_per_s, 1), align: 'right' },
    { title: 'p50 ms', value: ([, r]) => ms(r.all.p50_us), align: 'right' },
    { title: 'p99 ms', value: ([, r]) => ms(r.all.p99_us), align: 'right' },
    { title: 'mean ms', value: ([, r]) => ms(r.all.mean_us), align: 'right' },
    { title: 'create p50', value: ([, r]) => ms(r.create.p50_us), align: 'right' },
    { title: 'delete p50', value: ([, r]) => ms(r.delete.p50_us), align: 'right' },
    { title: 'errors', value: ([, r]) => count(r.errors), align: 'right' },
    { title: 'queue', value: ([, r]) => phase(r, 'queue'), align: 'right' },
    { title: 'provider', value: ([, r]) => phase(r, 'provider'), align: 'right' },
    { title: 'commit', value: ([, r]) => phase(r, 'commit'), align: 'right' },
    { title: 'service CPU µs/change', value: ([, r]) => count(r.server_cpu_us_per_change), align: 'right' },
    { title: 'bench CPU µs/change', value: ([, r]) => count(r.bench_cpu_us_per_change), align: 'right' },
  ];
  console.log(`\ncloud benchmark: create + delete role against moto, ${o.concurrency} loop(s), ${o.duration} s runs, ${o.rounds} rounds`);
  if (o.concurrency > 1) console.log(`${o.concurrency} loops: a throughput reading; the service runs one organization's changes one at a time, so its latency here includes that queue (compare latency at --concurrency 1)`);
  console.log('queue, provider, commit: mean ms per change inside the service (cloud_change_phase_seconds); the rest of its mean is HTTP, validation and the answer\n');
  console.log(formatTable(columns, rows));
  type FixedRow = [string, LatencySummary];
  const fixed: FixedRow[] = [];
  for (let i = 0; i < o.rounds; i++) {
    fixed.push(
      [`durable write through the service (PATCH), round ${i + 1}`, writes[i] as LatencySummary],
      [`empty durable LMDB commit on its data dir, round ${i + 1}`, commits[i] as LatencySummary],
      [`bare 4 KiB write + fdatasync on its data dir, round ${i + 1}`, fsyncs[i] as LatencySummary],
    );
  }
  console.log('');
  console.log(
    formatTable<FixedRow>(
      [
        { title: 'no provider call', value: ([label]) => label, align: 'left' },
        { title: 'count', value: ([, r]) => count(r.count), align: 'right' },
        { title: 'p50 ms', value: ([, r]) => ms(r.p50_us), align: 'right' },
        { title: 'p99 ms', value: ([, r]) => ms(r.p99_us), align: 'right' },
        { title: 'mean ms', value: ([, r]) => ms(r.mean_us), align: 'right' },
      ],
      fixed,
    ),
  );

  // The service's added latency at p50, as a share of the provider's own p50 for the same calls, per round. Each
  // kind of change is compared with its own kind, and the headline is a create + delete pair (the sum of the two
  // p50s): the p50 of creates and deletes pooled falls in the gap between the two kinds' latencies, where a few
  // changes more of one kind move it by milliseconds.
  const pairP50 = (r: RunResult) => r.create.p50_us + r.delete.p50_us;
  const addedIn = (side: RunResult[], p50: (r: RunResult) => number) => side.map((s, i) => (p50(s) - p50(rounds.direct[i] as RunResult)) / p50(rounds.direct[i] as RunResult));
  const addedBy = (side: RunResult[]) => addedIn(side, pairP50);
  const added = addedBy(rounds.service);
  const addedNosync = addedBy(rounds.nosync);
  const addedCreate = addedIn(rounds.service, (r) => r.create.p50_us);
  const addedDelete = addedIn(rounds.service, (r) => r.delete.p50_us);
  const share = (xs: LatencySummary[]) => xs.map((x, i) => x.p50_us / (rounds.direct[i] as RunResult).all.p50_us);
  const ratios = {
    added_p50_per_round: added,
    added_p50_median: median(added),
    added_p50_nosync_per_round: addedNosync,
    added_p50_nosync_median: median(addedNosync),
    added_create_p50_per_round: addedCreate,
    added_delete_p50_per_round: addedDelete,
    /** an empty durable LMDB commit's p50 over the provider's own p50: the floor of the commit's share */
    lmdb_commit_p50_over_direct_p50_per_round: share(commits),
    lmdb_commit_p50_over_direct_p50_median: median(share(commits)),
    /** a bare fdatasync's p50 over the provider's own p50 for the same calls */
    fsync_p50_over_direct_p50_per_round: share(fsyncs),
    fsync_p50_over_direct_p50_median: median(share(fsyncs)),
    durable_write_p50_over_direct_p50_median: median(share(writes)),
    service_over_direct_changes_per_s: median(rounds.service.map((s, i) => s.changes_per_s / (rounds.direct[i] as RunResult).changes_per_s)),
  };
  console.log('');
  console.log(`added latency at p50 of a create + delete (service − direct) / direct, durable: ${added.map(pct).join(', ')}; median ${pct(ratios.added_p50_median)}   (target ≤ 10%)`);
  console.log(`  creates alone: ${addedCreate.map(pct).join(', ')}; median ${pct(median(addedCreate))}   deletes alone: ${addedDelete.map(pct).join(', ')}; median ${pct(median(addedDelete))}`);
  console.log(`the same with SERVICE_DURABILITY=nosync:            ${addedNosync.map(pct).join(', ')}; median ${pct(ratios.added_p50_nosync_median)}`);
  console.log(`an empty durable LMDB commit's p50 / direct p50:    ${ratios.lmdb_commit_p50_over_direct_p50_per_round.map(pct).join(', ')}; median ${pct(ratios.lmdb_commit_p50_over_direct_p50_median)}   (each event is durable before its answer)`);
  console.log(`a bare fdatasync's p50 / direct p50:                ${ratios.fsync_p50_over_direct_p50_per_round.map(pct).join(', ')}; median ${pct(ratios.fsync_p50_over_direct_p50_median)}`);
  console.log(`a durable write through the service (no provider), p50 / direct p50: median ${pct(ratios.durable_write_p50_over_direct_p50_median)}`);
  console.log(`changes/s, durable service / direct (median of rounds): ${pct(ratios.service_over_direct_changes_per_s)}`);
  if (snap) {
    console.log('');
    console.log(
      `snapshot of ${count(snap.roles)} roles: POST /cloud/connections/{id}/snapshots ${snap.service_s.toFixed(2)} s (${((snap.service_s * 1000) / snap.roles).toFixed(3)} ms/role); ListRoles directly ${snap.direct_s.toFixed(2)} s (${((snap.direct_s * 1000) / snap.roles).toFixed(3)} ms/role); (creating them: ${snap.create_s.toFixed(1)} s, ${count(snap.roles / snap.create_s, 0)} roles/s)`,
    );
  }
  if (snapshotError) console.log(`\nsnapshot of ${count(o.roles)} roles: failed: ${snapshotError}`);
  console.log(`\n${environmentLine(env)}`);
  console.log(`figures: ${writeResults('cloud', env, { options: o, rounds, durable_write: writes, lmdb_commit: commits, bare_fsync: fsyncs, ratios, snapshot: snap, ...(snapshotError && { snapshot_error: snapshotError }) })}`);
}

runIfMain(import.meta.url, main);
