// Soak of high availability inside a region (not part of npm test): a JetStream cluster of three nats-servers and
// two service processes sharing the region (SERVICE_COMMIT=quorum), clients writing all along; then `--cycles` times
// kill -9 of a random one of them (the writer, the standby, or a nats-server), wait until a write is acknowledged
// again, start the killed one again, and check the invariants: every write acknowledged so far is stored exactly
// once at the writer, and nothing twice at the standby (how far the standby is behind is printed). Prints one line
// per cycle and a summary; exits 1 on a violation.
// `--seconds` stops starting cycles after that long (test/regions/ha-soak.test.ts runs a 30-second soak).
//   npx tsx scripts/ha-soak.ts [--cycles 200] [--seconds N] [--ttl-ms 2000] [--clients 4] [--seed 1]
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../test/support/free-port.js';
import { startNatsCluster, type NatsServer } from '../test/support/nats.js';
import { spawnService, type ServiceProcess } from '../test/support/process.js';
import { removeDir, ROOT_KEY, ROOT_ORG, tempDir } from '../test/support/server.js';

const { values } = parseArgs({ options: { cycles: { type: 'string', default: '200' }, seconds: { type: 'string', default: '0' }, 'ttl-ms': { type: 'string', default: '2000' }, clients: { type: 'string', default: '4' }, seed: { type: 'string', default: '1' } } });
const CYCLES = Number(values.cycles);
const SECONDS = Number(values.seconds);
const TTL_MS = Number(values['ttl-ms']);
const CLIENTS = Number(values.clients);
let seed = Number(values.seed) >>> 0 || 1;
/** xorshift32: the same seed kills the same sequence of victims */
const random = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
};

const REGION = 'europe-belgium';
const AUTH = { 'Service-OrgID': ROOT_ORG, 'Service-API-Key': ROOT_KEY };
const dir = tempDir('identity-ha-soak-');

async function startProcess(name: string, nats: NatsServer[]): Promise<ServiceProcess> {
  const port = await freePort();
  return spawnService({ SERVICE_PORT: String(port), SERVICE_REGIONS: REGION, SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_URL: nats.map((n) => n.url).join(','), SERVICE_NATS_REPLICAS: '3', SERVICE_PROCESS_NAME: name, SERVICE_PUBLIC_URL: `http://127.0.0.1:${port}`, SERVICE_LEASE_TTL: `${TTL_MS}ms`, SERVICE_LEASE_RENEW: `${Math.round(TTL_MS / 4)}ms`, SERVICE_NATS_PING: '500ms', SERVICE_SIGNING_THREADS: '0' }, join(dir, name));
}

async function health(base: string): Promise<any> {
  return ((await (await fetch(`${base}/health?org=${ROOT_ORG}`)).json()) as any).result;
}

async function personsAt(base: string): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = ((await (await fetch(`${base}/persons?limit=1000&offset=${offset}`, { headers: AUTH })).json()) as any).result as Array<{ person_id: string }>;
    ids.push(...page.map((p) => p.person_id));
    if (page.length < 1000) return ids;
  }
}

async function main(): Promise<void> {
  const nats = await startNatsCluster(REGION, dir);
  const procs = [await startProcess('a', nats), await startProcess('b', nats)];
  const acked: string[] = [];
  let lastAckAt = performance.now();
  let stop = false;
  let n = 0;
  // Each client writes to a process, follows a 307 to the holder, and waits a moment on a 503 or a dead socket.
  const client = async (i: number) => {
    let target = procs[i % 2]?.base as string;
    while (!stop) {
      try {
        const res = await fetch(`${target}/persons`, { method: 'POST', headers: { ...AUTH, 'Content-Type': 'application/json' }, body: JSON.stringify({ handles: [{ type: 'email_address', value: `soak-${n++}@example.com` }] }), redirect: 'manual' });
        const body = (await res.json()) as any;
        if (res.status === 201) {
          acked.push(body.result.person_id);
          lastAckAt = performance.now();
          continue;
        }
        if (res.status === 307) target = new URL(res.headers.get('location') as string).origin;
      } catch {
        target = procs[Math.floor(random() * 2)]?.base as string;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const clients = Array.from({ length: CLIENTS }, (_, i) => client(i));
  let violations = 0;
  let maxBehind = 0;
  const kills = { writer: 0, standby: 0, 'nats-server': 0 };
  const downtimes: number[] = [];
  const startedAt = performance.now();
  let cycles = 0;
  try {
    for (let cycle = 1; cycle <= CYCLES && (SECONDS === 0 || performance.now() - startedAt < SECONDS * 1000); cycle++) {
      cycles = cycle;
      const pick = Math.floor(random() * 5);
      const roles = await Promise.all(procs.map((p) => health(p.base).catch(() => undefined)));
      const writer = roles.findIndex((h) => h?.lease?.writing);
      let victim: string;
      const killedAt = performance.now();
      if (pick < 2) {
        // the writer (or, when none writes at this moment, process a)
        const w = Math.max(0, pick === 0 ? writer : 1 - Math.max(0, writer));
        victim = `${pick === 0 ? 'writer' : 'standby'} ${w === 0 ? 'a' : 'b'}`;
        kills[writer === w ? 'writer' : 'standby']++;
        const p = procs[w] as ServiceProcess;
        await p.kill('SIGKILL');
        const before = acked.length;
        const deadline = performance.now() + TTL_MS + 30_000;
        while (acked.length === before && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        if (acked.length === before) throw new Error(`cycle ${cycle}: nothing acknowledged for ${TTL_MS + 30_000} ms after kill -9 of ${victim}`);
        downtimes.push(lastAckAt - killedAt);
        procs[w] = await p.restart();
      } else {
        const s = nats[pick - 2] as NatsServer;
        victim = `nats-${pick - 1}`;
        kills['nats-server']++;
        await s.kill();
        const before = acked.length;
        const deadline = performance.now() + 30_000;
        while (acked.length === before && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        if (acked.length === before) throw new Error(`cycle ${cycle}: nothing acknowledged for 30 s with ${victim} down`);
        await s.start();
      }
      // Invariants, at the writer: every write acknowledged so far stored exactly once (the region's quorum holds
      // them, and the writer serves from it). At the standby: nothing twice, and how far it is behind, reported.
      const snapshot = [...acked];
      const deadline = performance.now() + 30_000;
      let problem = '';
      let standbyBehind = 0;
      for (;;) {
        problem = '';
        standbyBehind = 0;
        const roles = await Promise.all(procs.map((p) => health(p.base).catch(() => undefined)));
        for (const [i, p] of procs.entries()) {
          let stored: string[];
          try {
            stored = await personsAt(p.base);
          } catch (error) {
            problem = `${p.base}: ${(error as Error).message}`;
            continue;
          }
          const counts = new Map<string, number>();
          for (const id of stored) counts.set(id, (counts.get(id) ?? 0) + 1);
          const missing = snapshot.filter((id) => counts.get(id) === undefined).length;
          const doubled = [...counts.values()].filter((c) => c > 1).length;
          if (doubled > 0) problem = `${p.base}: ${doubled} persons stored twice`;
          else if (roles[i]?.lease?.writing && missing > 0) problem ||= `the writer ${p.base}: ${missing} acknowledged writes missing`;
          else if (!roles[i]?.lease?.writing) standbyBehind = missing;
        }
        if (problem.includes('twice') || (!problem && roles.some((h) => h?.lease?.writing)) || performance.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      if (problem) violations++;
      maxBehind = Math.max(maxBehind, standbyBehind);
      console.log(`cycle ${String(cycle).padStart(3)}: kill -9 ${victim.padEnd(9)} ${problem ? `VIOLATION ${problem}` : 'ok'}  (${acked.length} acknowledged so far; the standby ${standbyBehind} behind)`);
    }
  } catch (error) {
    // A stall: what each process said last, for the cause.
    for (const p of procs) console.log(`---- ${p.base}\n${p.process.output().split('\n').filter((l) => !/^(POST|GET) /.test(l)).slice(-40).join('\n')}`);
    throw error;
  } finally {
    stop = true;
    await Promise.all(clients);
    for (const p of procs) await p.kill().catch(() => {});
    for (const s of nats) await s.kill().catch(() => {});
    removeDir(dir);
  }
  const sorted = [...downtimes].sort((a, b) => a - b);
  console.log(`${cycles} cycles (kill -9 of ${kills.writer} writers, ${kills.standby} standbys, ${kills['nats-server']} nats-servers), ${acked.length} writes acknowledged, ${violations} cycles with an acknowledged write lost or doubled (the standby at most ${maxBehind} writes behind at a check); writer/standby kills: first write after the kill p50 ${Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0)} ms, max ${Math.round(sorted.at(-1) ?? 0)} ms`);
  if (violations > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
