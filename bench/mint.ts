// How fast can this machine mint identity tokens, and how close does the service come to that?
// One run measures side by side: signing alone on one core; the HTTP layer alone; a minimal mint server
// (HTTP + the same signing code, nothing else); the real POST /persons/{id}/mint-token with durable
// commits, closed loop and then open loop at half its maximum rate; the same service without fsync; and
// the disk's durable-commit latency. Servers run in child processes, the load generator here.
//
//   npx tsx bench/mint.ts --duration 5 --connections 32
import { cpus, tmpdir } from 'node:os';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { TOKEN_ALGS, type TokenAlg } from '../src/config.js';
import { closedLoop, httpRequest, openLoop, type LatencySummary, type LoadResult, type LoadTarget } from './lib/mint-load.js';
import { cpuSeconds, jsonPort, startChild, type Child } from './lib/mint-procs.js';
import { durableCommitLatency, signingCeiling } from './lib/mint-probes.js';

const PARTS = ['sign', 'hello', 'minimal', 'real', 'nosync', 'disk'] as const;
type Part = (typeof PARTS)[number];

const HELP = `Usage: npx tsx bench/mint.ts [options]

  --duration <s>      seconds per measured run (default 5)
  --connections <n>   keep-alive connections of the load generator (default 32)
  --alg <alg>         ES256 | RS256 | EdDSA (default ES256)
  --warmup <s>        unmeasured seconds before each closed-loop run (default 1)
  --persons <n>       persons minted for, in turn (default 64)
  --rate <n>          open-loop rate per second (default: half the real service's closed-loop rate)
  --only <parts>      comma-separated subset of ${PARTS.join(',')} (default: all)
  --profile           write a CPU profile of the real service (durable run) to bench/results/profiles/
  --help              this text

Prints a table and writes the figures as JSON to bench/results/mint-<time>.json.`;

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ORG = 'bench-org';
const KEY = 'bench-api-key-0123456789abcdef';

interface Options {
  duration: number;
  connections: number;
  alg: TokenAlg;
  warmup: number;
  persons: number;
  rate: number | undefined;
  only: Set<Part>;
  profile: boolean;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      connections: { type: 'string', default: '32' },
      alg: { type: 'string', default: 'ES256' },
      warmup: { type: 'string', default: '1' },
      persons: { type: 'string', default: '64' },
      rate: { type: 'string' },
      only: { type: 'string', default: PARTS.join(',') },
      profile: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    process.exit(0);
  }
  const num = (name: string, raw: string | undefined, min: number) => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number ≥ ${min}, got "${raw}"`);
    return n;
  };
  if (!(TOKEN_ALGS as readonly string[]).includes(values.alg)) throw new Error(`--alg must be one of ${TOKEN_ALGS.join(', ')}`);
  const only = new Set(values.only.split(',').map((s) => s.trim()) as Part[]);
  for (const part of only) if (!PARTS.includes(part)) throw new Error(`--only: unknown part "${part}" (parts: ${PARTS.join(', ')})`);
  return {
    duration: num('duration', values.duration, 0.5),
    connections: Math.round(num('connections', values.connections, 1)),
    alg: values.alg as TokenAlg,
    warmup: num('warmup', values.warmup, 0),
    persons: Math.round(num('persons', values.persons, 1)),
    rate: values.rate === undefined ? undefined : num('rate', values.rate, 1),
    only,
    profile: values.profile,
  };
}

type Measured = LoadResult & { serverCpuUsPerRequest?: number };

/**
 * Closed loop after a warm-up. Besides throughput, the server's CPU time per request: on a shared
 * machine it moves far less than throughput does when other processes compete for the cores.
 */
async function measure(label: string, target: LoadTarget, o: Options, pid: number | undefined): Promise<Measured> {
  console.error(`  ${label}: ${o.warmup} s warm-up, ${o.duration} s closed loop over ${o.connections} connections`);
  if (o.warmup > 0) await closedLoop(target, o.connections, o.warmup);
  const before = cpuSeconds(pid);
  const result: Measured = await closedLoop(target, o.connections, o.duration);
  const after = cpuSeconds(pid);
  if (before !== undefined && after !== undefined) result.serverCpuUsPerRequest = ((after - before) * 1e6) / result.requests;
  return result;
}

async function createPersons(port: number, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const r = await fetch(`http://127.0.0.1:${port}/persons`, {
      method: 'POST',
      headers: { 'Service-OrgID': ORG, 'Service-API-Key': KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ handles: [{ type: 'email_address', value: `bench-${i}@example.com` }] }),
    });
    if (r.status !== 201) throw new Error(`creating a person: ${r.status} ${await r.text()}`);
    ids.push(((await r.json()) as { result: { person_id: string } }).result.person_id);
  }
  return ids;
}

/** The same bytes go to the minimal server and the service: the minimal one just ignores the headers. */
const mintRequests = (ids: readonly string[]) => ids.map((id) => httpRequest('POST', `/persons/${id}/mint-token`, { 'Service-OrgID': ORG, 'Service-API-Key': KEY }));

function startService(o: Options, durability: 'sync' | 'nosync', dataDir: string, profileDir: string | undefined): Promise<Child> {
  const args = profileDir === undefined ? ['src/main.ts'] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, 'src/main.ts'];
  const env = { SERVICE_TOKEN_ALG: o.alg, SERVICE_PORT: '0', SERVICE_DATA_DIR: dataDir, SERVICE_ROOT_ORG_ID: ORG, SERVICE_ROOT_API_KEY: KEY, SERVICE_DURABILITY: durability };
  return startChild(root, args, env, (line) => {
    const m = /^listening on http:\/\/[^:]+:(\d+)/.exec(line);
    return m ? Number(m[1]) : undefined;
  });
}

const fmt = (n: number | undefined, digits = 0) => (n === undefined || Number.isNaN(n) ? '' : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));

type Row = [string, string, string, string, string, string, string];

function table(rows: Row[]): string {
  const widths = (rows[0] as Row).map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')).join('\n');
}

interface Results {
  sign?: { node: number; jose: number };
  hello?: Measured;
  minimal?: Measured;
  minimalOpen?: LoadResult;
  real?: Measured;
  realOpen?: LoadResult;
  nosync?: Measured;
  disk?: LatencySummary & { commits: number };
}

function report(o: Options, r: Results): Record<string, number> {
  const rows: Row[] = [['', 'req/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'errors', 'server CPU µs/req']];
  if (r.sign) {
    rows.push(['sign only, node:crypto, whole token (1 core)', fmt(r.sign.node), '', '', '', '', fmt(1e6 / r.sign.node, 1)]);
    rows.push(['sign only, jose SignJWT (1 core, reference)', fmt(r.sign.jose), '', '', '', '', fmt(1e6 / r.sign.jose, 1)]);
  }
  const row = (label: string, m: Measured | undefined) =>
    m && rows.push([label, fmt(m.rps), fmt(m.latency.p50, 2), fmt(m.latency.p99, 2), fmt(m.latency.p999, 2), fmt(m.errors), fmt(m.serverCpuUsPerRequest, 1)]);
  row('hello world, uWebSockets.js', r.hello);
  row('minimal mint server (uWS + signing)', r.minimal);
  row(`  open loop at ${fmt(r.minimalOpen?.targetRate)}/s`, r.minimalOpen);
  row('POST /persons/{id}/mint-token, sync', r.real);
  row(`  open loop at ${fmt(r.realOpen?.targetRate)}/s`, r.realOpen);
  row('POST /persons/{id}/mint-token, nosync', r.nosync);
  if (r.disk) rows.push([`disk: one durable WAL commit at a time`, fmt(r.disk.commits / o.duration), fmt(r.disk.p50, 2), fmt(r.disk.p99, 2), fmt(r.disk.p999, 2), '', '']);
  console.log(`\nmint benchmark: ${o.alg}, ${o.connections} keep-alive connections, ${o.duration} s runs, ${cpus().length} cores, node ${process.version}\n`);
  console.log(table(rows));
  console.log('\nopen-loop latencies count from when each request was due, so queueing behind a stall shows.\n');

  const ratios: Record<string, number> = {};
  const line = (label: string, value: number | undefined, text: (v: number) => string) => {
    if (value === undefined || !Number.isFinite(value)) return;
    ratios[label] = value;
    console.log(text(value));
  };
  const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
  line('real_over_minimal', r.real && r.minimal && r.real.rps / r.minimal.rps, (v) => `mint-token (sync) / minimal server throughput:  ${pct(v)}   (target ≥ 90%)`);
  line('real_over_sign', r.real && r.sign && r.real.rps / r.sign.node, (v) => `mint-token (sync) / signing ceiling of 1 core:  ${pct(v)}`);
  line('nosync_over_minimal', r.nosync && r.minimal && r.nosync.rps / r.minimal.rps, (v) => `mint-token (nosync) / minimal server:           ${pct(v)}`);
  line('cpu_real_over_minimal', r.real?.serverCpuUsPerRequest !== undefined && r.minimal?.serverCpuUsPerRequest !== undefined ? r.real.serverCpuUsPerRequest / r.minimal.serverCpuUsPerRequest : undefined, (v) => `server CPU per request, sync / minimal:          ${v.toFixed(2)}×`);
  line('cpu_nosync_over_minimal', r.nosync?.serverCpuUsPerRequest !== undefined && r.minimal?.serverCpuUsPerRequest !== undefined ? r.nosync.serverCpuUsPerRequest / r.minimal.serverCpuUsPerRequest : undefined, (v) => `server CPU per request, nosync / minimal:        ${v.toFixed(2)}×`);
  line('node_over_jose', r.sign && r.sign.node / r.sign.jose, (v) => `node:crypto / jose signing:                      ${v.toFixed(2)}×`);
  line('open_p99_ms', r.realOpen?.latency.p99, (v) => `mint-token p99 at half its max rate:             ${v.toFixed(2)} ms   (target < 2 ms)`);
  return ratios;
}

async function main(): Promise<void> {
  const o = options();
  const r: Results = {};
  const dataDirs: string[] = [];
  const children: Child[] = [];
  const run = async <T>(child: Child, fn: (c: Child) => Promise<T>): Promise<T> => {
    children.push(child);
    try {
      return await fn(child);
    } finally {
      await child.stop();
    }
  };
  const freshDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'mint-bench-'));
    dataDirs.push(dir);
    return dir;
  };
  console.error(`mint benchmark: ${o.alg}, ${o.connections} connections, ${o.duration} s per run, ${cpus().length} cores, node ${process.version}`);
  let profileDir: string | undefined;
  try {
    if (o.only.has('sign')) {
      const seconds = Math.min(o.duration, 3);
      console.error(`  sign only: ${seconds} s node:crypto, ${seconds} s jose`);
      r.sign = await signingCeiling(o.alg, seconds);
    }
    // The person ids only shape the URL here: the minimal server reads no state.
    const placeholders = Array.from({ length: o.persons }, (_, i) => `01938f6e-7d3c-7000-8000-${String(i).padStart(12, '0')}`);
    if (o.only.has('hello')) {
      r.hello = await run(await startChild(root, ['bench/mint-hello-server.ts'], {}, jsonPort), (c) =>
        measure('hello world', { host: '127.0.0.1', port: c.port, requests: [httpRequest('GET', '/', {})], expectStatus: 200 }, o, c.process.pid),
      );
    }
    let minimalTarget: LoadTarget | undefined;
    const minimal = o.only.has('minimal') ? await startChild(root, ['bench/minimal-mint-server.ts'], { SERVICE_TOKEN_ALG: o.alg }, jsonPort) : undefined;
    if (minimal) {
      children.push(minimal);
      minimalTarget = { host: '127.0.0.1', port: minimal.port, requests: mintRequests(placeholders), expectStatus: 201 };
      r.minimal = await measure('minimal mint server', minimalTarget, o, minimal.process.pid);
    }
    if (o.only.has('real')) {
      if (o.profile) mkdirSync((profileDir = join(root, 'bench/results/profiles')), { recursive: true });
      await run(await startService(o, 'sync', freshDir(), profileDir), async (c) => {
        const target: LoadTarget = { host: '127.0.0.1', port: c.port, requests: mintRequests(await createPersons(c.port, o.persons)), expectStatus: 201 };
        r.real = await measure('mint-token, sync', target, o, c.process.pid);
        const rate = Math.max(1, Math.round(o.rate ?? r.real.rps / 2));
        console.error(`  mint-token, sync: ${o.duration} s open loop at ${rate}/s`);
        r.realOpen = await openLoop(target, o.connections, rate, o.duration);
      });
    }
    // The minimal server at the same fixed rate: the latency floor of HTTP plus signing.
    if (minimal && minimalTarget) {
      const rate = Math.max(1, Math.round(o.rate ?? (r.real ? r.real.rps : (r.minimal?.rps ?? 2)) / 2));
      console.error(`  minimal mint server: ${o.duration} s open loop at ${rate}/s`);
      r.minimalOpen = await openLoop(minimalTarget, o.connections, rate, o.duration);
      await minimal.stop();
    }
    if (o.only.has('nosync')) {
      await run(await startService(o, 'nosync', freshDir(), undefined), async (c) => {
        const target: LoadTarget = { host: '127.0.0.1', port: c.port, requests: mintRequests(await createPersons(c.port, o.persons)), expectStatus: 201 };
        r.nosync = await measure('mint-token, nosync', target, o, c.process.pid);
      });
    }
    if (o.only.has('disk')) {
      console.error(`  disk: ${o.duration} s of durable WAL commits, one at a time`);
      r.disk = await durableCommitLatency(o.duration);
    }

    const ratios = report(o, r);
    if (profileDir) console.log(`CPU profile of the real service: ${profileDir}`);
    const out = join(root, 'bench/results', `mint-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify({ when: new Date().toISOString(), node: process.version, cores: cpus().length, options: { ...o, only: [...o.only] }, results: r, ratios }, null, 2));
    console.log(`figures: ${out}`);
  } finally {
    for (const c of children) await c.stop();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
