// Requests/s and latency of the service over loopback, beside a hello-world uWebSockets.js route measured in the
// same run (the ceiling of one server core on this machine), as ratios to it.
//   npm run bench -- http [--duration 5] [--warmup 1] [--connections 50] [--rate N] [--persons 1000] [--cases ...]
//   npx tsx bench/http.ts --help
// Each server runs in a child process and the load generator in this one: on two cores that gives each its own
// core, and a run where either shows ~100% CPU is bounded by that side (both are in the table).
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { spawnNode, spawnService, type NodeProcess } from '../test/support/process.js';
import { removeDir } from '../test/support/server.js';
import { encodeRequest } from './lib/connection.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { cpuSeconds } from './lib/process-cpu.js';
import { environment, formatTable, ms, writeResults, type Column } from './lib/report.js';

const CASES = ['hello', 'get-person', 'put-attributes', 'put-attributes-nosync'] as const;
type CaseName = (typeof CASES)[number];

const HOST = '127.0.0.1';

interface Settings {
  durationMs: number;
  warmupMs: number;
  connections: number;
  rate: number | undefined;
  persons: number;
  cases: CaseName[];
}

interface Row extends LoadResult {
  case: CaseName;
  what: string;
  serverCpuPercent: number | undefined;
  /** server CPU time per request: steadier than req/s when other work shares the cores */
  serverCpuUsPerRequest: number | undefined;
  /** requests/s as a share of the hello-world ceiling of the same run */
  vsCeiling?: number;
}

const USAGE = `usage: npm run bench -- http [options]   (or: npx tsx bench/http.ts [options])
  --duration S      measured seconds per case (default 5)
  --warmup S        unmeasured seconds before each case (default 1)
  --connections N   keep-alive connections, one request in flight on each (default 50)
  --rate N          open loop at N requests/s instead of the closed loop
  --persons N       persons created for the GET case (default 1000)
  --cases LIST      comma-separated subset of ${CASES.join(', ')}`;

function settings(argv: string[]): Settings {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '50' },
      rate: { type: 'string' },
      persons: { type: 'string', default: '1000' },
      cases: { type: 'string', default: CASES.join(',') },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const num = (name: string, raw: string, min: number) => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number ≥ ${min}, got "${raw}"\n${USAGE}`);
    return n;
  };
  const cases = values.cases.split(',').map((c) => c.trim()) as CaseName[];
  for (const c of cases) if (!CASES.includes(c)) throw new Error(`--cases: unknown case "${c}" (known: ${CASES.join(', ')})`);
  return {
    durationMs: num('duration', values.duration, 0.1) * 1000,
    warmupMs: num('warmup', values.warmup, 0) * 1000,
    connections: Math.floor(num('connections', values.connections, 1)),
    rate: values.rate === undefined ? undefined : num('rate', values.rate, 1),
    persons: Math.floor(num('persons', values.persons, 1)),
    cases,
  };
}

/** Runs one case against a server process, with the server's CPU share over the measured window. */
async function measure(s: Settings, server: NodeProcess, name: CaseName, what: string, request: (i: number) => Buffer, ok?: (status: number) => boolean): Promise<Row> {
  const port = Number(server.ready[1]);
  const pid = server.child.pid as number;
  let cpu0: number | undefined;
  let t0 = 0;
  let serverCpuPercent: number | undefined;
  const result = await runLoad({
    url: `http://${HOST}:${port}`,
    request,
    connections: s.connections,
    durationMs: s.durationMs,
    warmupMs: s.warmupMs,
    ...(s.rate === undefined ? {} : { rate: s.rate }),
    ...(ok ? { ok } : {}),
    onWindow(phase) {
      const now = cpuSeconds(pid);
      if (phase === 'start') {
        cpu0 = now;
        t0 = performance.now();
      } else if (now !== undefined && cpu0 !== undefined) {
        serverCpuPercent = Math.round(((now - cpu0) / ((performance.now() - t0) / 1000)) * 100);
      }
    },
  });
  const serverCpuUsPerRequest = serverCpuPercent === undefined || result.rps === 0 ? undefined : Math.round((serverCpuPercent / 100 / result.rps) * 1e6);
  const row: Row = { ...result, case: name, what, serverCpuPercent, serverCpuUsPerRequest };
  console.error(`  ${name}: ${row.rps} req/s, p50 ${ms(row.latency.p50_us)} ms, p99 ${ms(row.latency.p99_us)} ms${row.errors ? `, ${row.errors} errors ${JSON.stringify(row.statuses)} ${row.failures.join('; ')}` : ''}`);
  return row;
}

async function helloCase(s: Settings): Promise<Row> {
  const server = await spawnNode({ script: 'bench/hello-server.ts', ready: /^listening on http:\/\/[^\s]+:(\d+) /, env: { SERVICE_HOST: HOST, SERVICE_PORT: '0' } });
  try {
    const req = encodeRequest(HOST, { method: 'GET', path: '/hello' });
    return await measure(s, server, 'hello', 'GET /hello, uWebSockets.js hello world (ceiling)', () => req);
  } finally {
    await server.kill('SIGTERM');
  }
}

/** Creates persons through the API, 50 at a time, and returns their IDs. */
async function createPersons(base: string, headers: Record<string, string>, n: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(50, n) }, async () => {
      while (next < n) {
        const i = next++;
        const res = await fetch(`${base}/persons`, {
          method: 'POST',
          headers: { ...headers, 'Content-Type': 'application/json' },
          body: JSON.stringify({ handles: [{ type: 'email_address', value: `bench-${i}@example.com` }], attributes: { end_user_read_write: { plan: 'pro', seats: i } } }),
        });
        if (res.status !== 201) throw new Error(`creating person ${i}: ${res.status} ${await res.text()}`);
        ids.push(((await res.json()) as { result: { person_id: string } }).result.person_id);
      }
    }),
  );
  return ids;
}

async function serviceCases(s: Settings, durability: 'sync' | 'nosync', cases: CaseName[]): Promise<Row[]> {
  const service = await spawnService({ SERVICE_DURABILITY: durability });
  const rows: Row[] = [];
  try {
    const auth = { 'Service-OrgID': service.client.orgId, 'Service-API-Key': service.client.apiKey };
    if (cases.includes('get-person')) {
      const ids = await createPersons(service.base, auth, s.persons);
      const reqs = ids.map((id) => encodeRequest(HOST, { method: 'GET', path: `/persons/${id}`, headers: auth }));
      rows.push(await measure(s, service.process, 'get-person', `GET /persons/{id}, ${ids.length} persons, SERVICE_DURABILITY=${durability}`, (i) => reqs[i % reqs.length] as Buffer));
    }
    for (const name of ['put-attributes', 'put-attributes-nosync'] as const) {
      if (!cases.includes(name)) continue;
      const headers = { ...auth, 'Content-Type': 'application/json' };
      const put = (i: number) => encodeRequest(HOST, { method: 'PUT', path: '/organizations/attributes/end_user_read_write', headers, body: `{"plan":"pro","seats":${i}}` });
      rows.push(await measure(s, service.process, name, `PUT /organizations/attributes/{bucket}, one organization, SERVICE_DURABILITY=${durability}`, put, (st) => st === 204));
    }
  } finally {
    await service.stop();
    removeDir(service.dataDir);
  }
  return rows;
}

export async function main(argv: string[]): Promise<void> {
  const s = settings(argv);
  const loop = s.rate === undefined ? 'closed loop' : `open loop at ${s.rate} req/s`;
  const env = environment();
  console.error(`http: ${s.connections} keep-alive connections over loopback, ${loop}, ${s.durationMs / 1000} s per case after ${s.warmupMs / 1000} s warm-up`);
  console.error(`  ${env['cpus']} cpus, load average ${Number(env['loadavg_1m']).toFixed(2)} at the start (other work on the machine skews the figures), node ${env['node']}, commit ${env['commit']}`);
  const rows: Row[] = [];
  if (s.cases.includes('hello')) rows.push(await helloCase(s));
  const sync = s.cases.filter((c) => c === 'get-person' || c === 'put-attributes');
  if (sync.length > 0) rows.push(...(await serviceCases(s, 'sync', sync)));
  if (s.cases.includes('put-attributes-nosync')) rows.push(...(await serviceCases(s, 'nosync', ['put-attributes-nosync'])));

  const ceiling = rows.find((r) => r.case === 'hello');
  if (ceiling) for (const r of rows) r.vsCeiling = r.rps / ceiling.rps;

  const columns: Column<Row>[] = [
    { title: 'case', value: (r) => r.case },
    { title: 'req/s', value: (r) => r.rps },
    { title: 'vs hello', value: (r) => (r.vsCeiling === undefined ? '-' : `${(r.vsCeiling * 100).toFixed(1)}%`), align: 'right' },
    { title: 'p50 ms', value: (r) => ms(r.latency.p50_us), align: 'right' },
    { title: 'p99 ms', value: (r) => ms(r.latency.p99_us), align: 'right' },
    { title: 'p99.9 ms', value: (r) => ms(r.latency.p999_us), align: 'right' },
    { title: 'max ms', value: (r) => ms(r.latency.max_us), align: 'right' },
    { title: 'errors', value: (r) => r.errors },
    { title: 'server cpu', value: (r) => (r.serverCpuPercent === undefined ? '-' : `${r.serverCpuPercent}%`), align: 'right' },
    { title: 'server µs/req', value: (r) => r.serverCpuUsPerRequest ?? '-', align: 'right' },
    { title: 'client cpu', value: (r) => `${r.clientCpuPercent}%`, align: 'right' },
    { title: 'what', value: (r) => r.what },
  ];
  console.log(formatTable(columns, rows));
  const path = writeResults('http', { bench: 'http', at: new Date().toISOString(), environment: env, settings: s, results: rows });
  console.log(`\nwritten to ${path}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
