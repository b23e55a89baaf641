// What high availability costs and how fast it recovers, on one machine: a JetStream cluster of three nats-servers
// and two service processes of one region (SERVICE_COMMIT=quorum). First, `--kills` times: kill -9 of the writer
// while a client writes, and the time from the kill to the first write acknowledged through the standby (the killed
// process is started again as a standby before the next kill). Then the rate of durable writes (person creation,
// mint-token) through the quorum writer against a process of the same region with SERVICE_COMMIT=local, closed loop,
// the two taking turns round after round, with p50/p99.
//   npm run bench -- failover [--kills 20] [--ttl-ms 2000] [--rounds 3] [--duration 5] [--connections 32]
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../test/support/free-port.js';
import { startNatsCluster, type NatsServer } from '../test/support/nats.js';
import { spawnService, type ServiceProcess } from '../test/support/process.js';
import { removeDir, ROOT_KEY, ROOT_ORG, tempDir } from '../test/support/server.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { encodeRequest } from './lib/connection.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { count, environment, environmentLine, ms, pct, writeResults } from './lib/report.js';

const USAGE = `usage: npm run bench -- failover [options]   (or: npx tsx bench/failover.ts [options])
  --kills <n>         kill -9 cycles of the writer (default 20)
  --ttl-ms <ms>       SERVICE_LEASE_TTL (default 2000; renewals every quarter of it)
  --rounds <n>        closed-loop rounds of quorum and local taking turns (default 3)
  --duration <s>      seconds per closed-loop run (default 5)
  --connections <n>   keep-alive connections of the closed loops (default 32)`;

const REGION = 'europe-belgium';
const AUTH = { 'Service-OrgID': ROOT_ORG, 'Service-API-Key': ROOT_KEY };

interface Options {
  kills: number;
  ttlMs: number;
  rounds: number;
  duration: number;
  connections: number;
}

function parse(argv: string[]): Options | undefined {
  const { values } = parseArgs({ args: argv, options: { kills: { type: 'string', default: '20' }, 'ttl-ms': { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '32' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) return undefined;
  return {
    kills: Math.round(numberFlag('kills', values.kills, 0, USAGE)),
    ttlMs: Math.round(numberFlag('ttl-ms', values['ttl-ms'], 500, USAGE)),
    rounds: Math.round(numberFlag('rounds', values.rounds, 1, USAGE)),
    duration: numberFlag('duration', values.duration, 1, USAGE),
    connections: Math.round(numberFlag('connections', values.connections, 1, USAGE)),
  };
}

async function startProcess(dir: string, name: string, nats: NatsServer[], o: Options, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const port = await freePort();
  return spawnService({
    SERVICE_PORT: String(port),
    SERVICE_REGIONS: REGION,
    SERVICE_REGION_TRANSPORT: 'jetstream',
    SERVICE_NATS_URL: nats.map((n) => n.url).join(','),
    SERVICE_NATS_REPLICAS: '3',
    SERVICE_PROCESS_NAME: name,
    SERVICE_PUBLIC_URL: `http://127.0.0.1:${port}`,
    SERVICE_LEASE_TTL: `${o.ttlMs}ms`,
    SERVICE_LEASE_RENEW: `${Math.max(50, Math.round(o.ttlMs / 4))}ms`,
    SERVICE_NATS_PING: '500ms',
    SERVICE_SIGNING_THREADS: '0',
    ...env,
  }, join(dir, name));
}

async function health(base: string): Promise<{ role: string; lag_entries: number; lease?: { writing: boolean } }> {
  return ((await (await fetch(`${base}/health?org=${ROOT_ORG}`)).json()) as { result: { role: string; lag_entries: number; lease?: { writing: boolean } } }).result;
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not answering yet
    }
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const createPerson = async (base: string, handle: string): Promise<number> => {
  try {
    const res = await fetch(`${base}/persons`, { method: 'POST', headers: { ...AUTH, 'Content-Type': 'application/json' }, body: JSON.stringify({ handles: [{ type: 'email_address', value: handle }] }), redirect: 'manual' });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
};

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] as number;

/** Kill -9 of the writer, `kills` times: ms from each kill to the first write acknowledged by the standby. */
async function failovers(o: Options, pair: ServiceProcess[]): Promise<number[]> {
  const times: number[] = [];
  let n = 0;
  for (let k = 0; k < o.kills; k++) {
    const roles = await Promise.all(pair.map((p) => health(p.base)));
    const w = roles.findIndex((h) => h.lease?.writing);
    if (w < 0) throw new Error('no writer before the kill');
    const writer = pair[w] as ServiceProcess;
    const standby = pair[1 - w] as ServiceProcess;
    await waitUntil(async () => (await createPerson(writer.base, `before-${k}-${n++}@example.com`)) === 201, 10_000, 'a write before the kill');
    await writer.kill('SIGKILL');
    const killedAt = performance.now();
    while ((await createPerson(standby.base, `after-${k}-${n++}@example.com`)) !== 201) {
      if (performance.now() - killedAt > o.ttlMs + 30_000) throw new Error(`kill ${k + 1}: the standby did not serve within ${o.ttlMs + 30_000} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const t = performance.now() - killedAt;
    times.push(t);
    console.log(`  kill ${String(k + 1).padStart(2)}: the standby acknowledged a write ${Math.round(t)} ms after kill -9 of the writer`);
    const restarted = await writer.restart();
    pair[w] = restarted;
    await waitUntil(async () => (await health(restarted.base)).role === 'standby' && (await health(restarted.base)).lag_entries === 0, 30_000, 'the restarted process to catch up');
  }
  return times;
}

async function rates(o: Options, quorum: ServiceProcess, local: ServiceProcess): Promise<Record<string, LoadResult[]>> {
  const out: Record<string, LoadResult[]> = {};
  const person = async (s: ServiceProcess) => {
    const res = await fetch(`${s.base}/persons`, { method: 'POST', headers: { ...AUTH, 'Content-Type': 'application/json' }, body: JSON.stringify({ handles: [{ type: 'email_address', value: `mint-${s.port}@example.com` }] }) });
    return ((await res.json()) as { result: { person_id: string } }).result.person_id;
  };
  const targets = [
    { name: 'quorum', s: quorum, id: await person(quorum) },
    { name: 'local', s: local, id: await person(local) },
  ];
  for (let round = 0; round < o.rounds; round++) {
    for (const t of targets) {
      for (const kind of ['persons', 'mint'] as const) {
        const request = (i: number) =>
          kind === 'mint'
            ? encodeRequest('127.0.0.1', { method: 'POST', path: `/persons/${t.id}/mint-token`, headers: AUTH })
            : encodeRequest('127.0.0.1', { method: 'POST', path: '/persons', headers: { ...AUTH, 'Content-Type': 'application/json' }, body: JSON.stringify({ handles: [{ type: 'email_address', value: `r${round}-${t.name}-${i}@example.com` }] }) });
        const r = await runLoad({ url: t.s.base, request, connections: o.connections, durationMs: o.duration * 1000, warmupMs: 1000, serverPid: t.s.process.child.pid as number });
        (out[`${kind} ${t.name}`] ??= []).push(r);
        console.log(`  round ${round + 1} ${kind.padEnd(7)} ${t.name.padEnd(6)} ${count(r.rps)}/s  p50 ${ms(r.latency.p50_us)}  p99 ${ms(r.latency.p99_us)}${r.errors ? `  ${r.errors} errors ${JSON.stringify(r.statuses)}` : ''}`);
      }
    }
  }
  return out;
}

export async function main(argv: string[]): Promise<void> {
  const o = parse(argv);
  if (!o) return console.log(USAGE);
  const env = environment();
  const dir = tempDir('identity-bench-failover-');
  const started: Array<{ kill(): Promise<unknown> }> = [];
  try {
    const nats = await startNatsCluster(REGION, dir);
    for (const n of nats) started.push({ kill: () => n.kill() });
    const pair = [await startProcess(dir, 'a', nats, o), await startProcess(dir, 'b', nats, o)];
    started.push({ kill: () => Promise.all(pair.map((p) => p.kill())) });
    await waitUntil(async () => (await Promise.all(pair.map((p) => health(p.base)))).some((h) => h.lease?.writing), 30_000, 'a writer');
    console.log(`kill -9 of the writer, ${o.kills} times (SERVICE_LEASE_TTL ${o.ttlMs} ms):`);
    const times = await failovers(o, pair);
    if (times.length > 0) console.log(`failover: p50 ${Math.round(quantile(times, 0.5))} ms, max ${Math.round(Math.max(...times))} ms over ${times.length} kills (target ≤ TTL + 2 s = ${o.ttlMs + 2000} ms)`);

    // The quorum writer against a process that acknowledges after its local flush, on the same cluster.
    const writer = (await Promise.all(pair.map(async (p) => ((await health(p.base)).lease?.writing ? p : undefined)))).find(Boolean) as ServiceProcess;
    const localDir = tempDir('identity-bench-local-');
    const local = await spawnService({ SERVICE_REGIONS: REGION, SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_URL: nats.map((n) => n.url).join(','), SERVICE_NATS_REPLICAS: '3', SERVICE_COMMIT: 'local', SERVICE_SIGNING_THREADS: '0' }, localDir);
    started.push({ kill: async () => (await local.kill(), removeDir(localDir)) });
    console.log(`\ndurable writes, closed loop over ${o.connections} connections, ${o.rounds} rounds of ${o.duration} s:`);
    const r = await rates(o, writer, local);
    const median = (xs: LoadResult[]) => [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)] as LoadResult;
    for (const kind of ['persons', 'mint']) {
      const q = median(r[`${kind} quorum`] as LoadResult[]);
      const l = median(r[`${kind} local`] as LoadResult[]);
      console.log(`${kind.padEnd(8)} quorum ${count(q.rps)}/s p50 ${ms(q.latency.p50_us)} p99 ${ms(q.latency.p99_us)} | local ${count(l.rps)}/s p50 ${ms(l.latency.p50_us)} p99 ${ms(l.latency.p99_us)} | quorum/local ${pct(q.rps / l.rps)} (target ≥ 80%), p99 +${((q.latency.p99_us - l.latency.p99_us) / 1000).toFixed(2)} ms (target ≤ +2 ms)`);
    }
    console.log(environmentLine(env));
    console.log(`results: ${writeResults('failover', env, { options: o, failover_ms: times, rates: r })}`);
  } finally {
    for (const p of started.reverse()) await p.kill().catch(() => {});
    removeDir(dir);
  }
}

runIfMain(import.meta.url, main);
