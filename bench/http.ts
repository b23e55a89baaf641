// Requests/s and latency of the service over loopback, beside a hello-world uWebSockets.js route measured in the
// same run (the ceiling of one server core on this machine), as ratios to it.
//   npm run bench -- http [--duration 2] [--warmup 1] [--connections 50] [--rate N] [--persons 1000] [--cases ...]
//                         [--baseline-ref REF [--rounds 3]]
// The console-on-off case runs two services at once, one with the console and one with SERVICE_CONSOLE=0, and
// measures GET /persons/{id} on each in turn, round after round: the console must add nothing to that path.
// console-off-off is its control: the same with both services off, so the spread an identical pair shows on
// this machine is measured beside the difference.
// The console-pages case measures, page by page, the API calls each console page makes on opening, with an
// administrator's console access token (bench/lib/console-pages.ts), beside GET /persons/{id} with either credential.
// Each server runs in a child process and the load generator in this one: on two cores that gives each its own
// core, and a run where either shows ~100% CPU is bounded by that side (both are in the table).
import { parseArgs } from 'node:util';
import { checkoutBaseline, type Baseline } from './lib/baseline.js';
import { consolePages, seedConsoleOrganization } from './lib/console-pages.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { encodeRequest } from './lib/connection.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { createPersons } from './lib/persons.js';
import { cpuColumns, environment, environmentLine, formatTable, ms, pct, writeResults, type Column } from './lib/report.js';
import { profiled, startServer, startService, type ServerProcess, type ServiceProcess } from './lib/server-process.js';

const CASES = ['hello', 'get-person', 'rbac-check', 'put-attributes', 'put-attributes-nosync', 'console-on-off', 'console-off-off', 'console-pages'] as const;
type CaseName = (typeof CASES)[number];

const HOST = '127.0.0.1';

interface Settings {
  durationMs: number;
  warmupMs: number;
  connections: number;
  rate: number | undefined;
  persons: number;
  cases: CaseName[];
  profile: boolean;
  baselineRef: string | undefined;
  rounds: number;
}

interface Row extends LoadResult {
  case: string;
  what: string;
  /** a console page's calls per opening: its openings/s are req/s over this */
  calls?: number;
  /** requests/s as a share of the hello-world ceiling of the same run */
  vsCeiling?: number;
}

const USAGE = `usage: npm run bench -- http [options]   (or: npx tsx bench/http.ts [options])
  --duration S      measured seconds per case (default 2)
  --warmup S        unmeasured seconds before each case (default 1)
  --connections N   keep-alive connections, one request in flight on each (default 50)
  --rate N          open loop at N requests/s instead of the closed loop
  --persons N       persons created for the GET and check cases (default 1000)
  --cases LIST      comma-separated subset of ${CASES.join(', ')}
  --profile         write CPU profiles of the service to bench/results/profiles/ (npm run bench -- profile-summary <file>)
  --baseline-ref R  GET /persons/{id} also against the service as it was at git ref R (unpacked into a temporary
                    directory, same node_modules), both up at once and measured in turn, round after round; prints
                    the ratio current / baseline of the round with the median ratio (issue 22: ≥ 97%, R = ad810ac^1)
  --rounds N        rounds of that comparison, and of console-on-off's and console-off-off's (default 3)
console-pages: one row per console page, its calls on opening with a console access token; pages/s = req/s / calls`;

function settings(argv: string[]): Settings | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '2' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '50' },
      rate: { type: 'string' },
      persons: { type: 'string', default: '1000' },
      cases: { type: 'string', default: CASES.join(',') },
      profile: { type: 'boolean', default: false },
      'baseline-ref': { type: 'string' },
      rounds: { type: 'string', default: '3' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  const cases = values.cases.split(',').map((c) => c.trim()) as CaseName[];
  for (const c of cases) if (!CASES.includes(c)) throw new Error(`--cases: unknown case "${c}" (known: ${CASES.join(', ')})`);
  return {
    durationMs: numberFlag('duration', values.duration, 0.1, USAGE) * 1000,
    warmupMs: numberFlag('warmup', values.warmup, 0, USAGE) * 1000,
    connections: Math.floor(numberFlag('connections', values.connections, 1, USAGE)),
    rate: values.rate === undefined ? undefined : numberFlag('rate', values.rate, 1, USAGE),
    persons: Math.floor(numberFlag('persons', values.persons, 1, USAGE)),
    cases,
    profile: values.profile,
    baselineRef: values['baseline-ref'],
    rounds: Math.round(numberFlag('rounds', values.rounds, 1, USAGE)),
  };
}

/** Runs one case against a server process, with the server's CPU over the measured window. */
async function measure(s: Settings, server: ServerProcess, name: Row['case'], what: string, request: (i: number) => Buffer, ok?: (status: number) => boolean): Promise<Row> {
  const result = await runLoad({
    url: server.url,
    request,
    connections: s.connections,
    durationMs: s.durationMs,
    warmupMs: s.warmupMs,
    serverPid: server.pid,
    ...(s.rate === undefined ? {} : { rate: s.rate }),
    ...(ok ? { ok } : {}),
  });
  const row: Row = { ...result, case: name, what };
  console.error(`  ${name}: ${row.rps} req/s, p50 ${ms(row.latency.p50_us)} ms, p99 ${ms(row.latency.p99_us)} ms${row.errors ? `, ${row.errors} errors ${JSON.stringify(row.statuses)} ${row.failures.join('; ')}` : ''}`);
  return row;
}

async function helloCase(s: Settings): Promise<Row> {
  const server = await startServer('bench/hello-server.ts');
  try {
    const req = encodeRequest(HOST, { method: 'GET', path: '/hello' });
    return await measure(s, server, 'hello', 'GET /hello, uWebSockets.js hello world (ceiling)', () => req);
  } finally {
    await server.stop();
  }
}

/** Permission names of the check case: each role holds 4 of them, so half of the checks are granted. */
const PERMISSIONS = Array.from({ length: 16 }, (_, i) => `documents/${i}:read`);
const ROLES = Array.from({ length: 4 }, (_, r) => ({ name: `role-${r}`, permissions: PERMISSIONS.slice(r * 4, r * 4 + 4) }));

/** POST /rbac/check over persons holding two roles each, against every permission in turn. */
async function rbacCheckCase(s: Settings, service: ServiceProcess, durability: string): Promise<Row> {
  const headers = { ...service.auth, 'Content-Type': 'application/json' };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${service.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status !== 204) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  };
  for (const name of PERMISSIONS) await post('/rbac/permissions', { name });
  for (const role of ROLES) await post('/rbac/roles', role);
  const ids = await createPersons(service, s.persons, (i) => ({ handles: [{ type: 'username', value: `check-${i}` }], roles: [`role-${i % 4}`, `role-${(i + 1) % 4}`] }));
  const reqs = ids.flatMap((id, i) => [0, 1, 2, 3].map((k) => {
    const body = JSON.stringify({ person_id: id, permission_name: PERMISSIONS[(i * 4 + k * 5) % PERMISSIONS.length] });
    return encodeRequest(HOST, { method: 'POST', path: '/rbac/check', headers, body });
  }));
  return measure(s, service, 'rbac-check', `POST /rbac/check, ${ids.length} persons with 2 of 4 roles, 16 permissions, SERVICE_DURABILITY=${durability}`, (i) => reqs[i % reqs.length] as Buffer, (st) => st === 200);
}

async function serviceCases(s: Settings, durability: 'sync' | 'nosync', cases: CaseName[]): Promise<Row[]> {
  const service = await startService({ SERVICE_DURABILITY: durability }, profiled(s.profile));
  const rows: Row[] = [];
  try {
    if (cases.includes('get-person')) {
      const ids = await createPersons(service, s.persons, (i) => ({ attributes: { end_user_read_write: { plan: 'pro', seats: i } } }));
      const reqs = ids.map((id) => encodeRequest(HOST, { method: 'GET', path: `/persons/${id}`, headers: service.auth }));
      rows.push(await measure(s, service, 'get-person', `GET /persons/{id}, ${ids.length} persons, SERVICE_DURABILITY=${durability}`, (i) => reqs[i % reqs.length] as Buffer));
    }
    if (cases.includes('rbac-check')) rows.push(await rbacCheckCase(s, service, durability));
    for (const name of ['put-attributes', 'put-attributes-nosync'] as const) {
      if (!cases.includes(name)) continue;
      const headers = { ...service.auth, 'Content-Type': 'application/json' };
      const put = (i: number) => encodeRequest(HOST, { method: 'PUT', path: '/organizations/attributes/end_user_read_write', headers, body: `{"plan":"pro","seats":${i}}` });
      rows.push(await measure(s, service, name, `PUT /organizations/attributes/{bucket}, one organization, SERVICE_DURABILITY=${durability}`, put, (st) => st === 204));
    }
  } finally {
    await service.stop();
  }
  return rows;
}

/** Persons each GET reads: the same attributes in both services. */
async function getPersonRequests(s: Settings, service: ServiceProcess): Promise<Buffer[]> {
  const ids = await createPersons(service, s.persons, (i) => ({ attributes: { end_user_read_write: { plan: 'pro', seats: i } } }));
  return ids.map((id) => encodeRequest(HOST, { method: 'GET', path: `/persons/${id}`, headers: service.auth }));
}

interface Compared {
  /** the pair of the round with the median ratio */
  rows: Row[];
  /** each round's requests/s of the first service over the second's */
  ratios: number[];
  /** each round's server CPU per request of the second service over the first's (100%: the same cost) */
  cpuRatios: Array<number | undefined>;
}

/** GET /persons/{id} of two running services, measured in turn for `rounds` rounds (`label`: what a round does), first one first, then the other. */
async function inTurn(s: Settings, label: string, targets: Array<{ service: ServiceProcess; name: Row['case']; what: string }>): Promise<Compared> {
  const loaded = [];
  for (const t of targets) loaded.push({ ...t, requests: await getPersonRequests(s, t.service) });
  const pairs: Array<[Row, Row]> = [];
  for (let round = 1; round <= s.rounds; round++) {
    // Every other round the second goes first: whatever the order favours, each side gets it as often.
    const order = round % 2 === 1 ? [0, 1] : [1, 0];
    console.error(`  round ${round} of ${s.rounds}: ${label}${round % 2 === 1 ? '' : ' (in the other order)'}`);
    const rows: Row[] = [];
    for (const k of order) {
      const t = loaded[k] as (typeof loaded)[number];
      rows[k] = await measure(s, t.service, t.name, t.what, (i) => t.requests[i % t.requests.length] as Buffer);
    }
    pairs.push(rows as [Row, Row]);
  }
  const ratios = pairs.map(([c, b]) => c.rps / b.rps);
  const sorted = pairs.map((p, i) => ({ p, r: ratios[i] as number })).sort((x, y) => x.r - y.r);
  const mid = sorted[Math.floor(sorted.length / 2)] as { p: [Row, Row] };
  const cpuRatios = pairs.map(([c, b]) => (c.serverCpuUsPerRequest && b.serverCpuUsPerRequest ? b.serverCpuUsPerRequest / c.serverCpuUsPerRequest : undefined));
  return { rows: [...mid.p], ratios, cpuRatios };
}

/** GET /persons/{id} of the current service and of the baseline's, both running, measured in turn. */
async function baselineCase(s: Settings, baseline: Baseline): Promise<Compared> {
  const current = await startService({ SERVICE_DURABILITY: 'sync' });
  let base: ServiceProcess | undefined;
  try {
    base = await startService({ SERVICE_DURABILITY: 'sync' }, { root: baseline.root });
    return await inTurn(s, `current, then ${baseline.ref}`, [
      { service: current, name: 'get-person', what: `GET /persons/{id}, ${s.persons} persons, sync, current` },
      { service: base, name: 'get-person-baseline', what: `the same at ${baseline.ref} (${baseline.commit.slice(0, 10)}), baseline` },
    ]);
  } finally {
    await base?.stop();
    await current.stop();
  }
}

/**
 * Each console page's calls on opening, as one case per page: its requests are the page's calls in turn (for a
 * person's or a group's page, over many persons or groups), so req/s counts calls and openings/s = req/s / calls.
 * GET /persons/{id} with the console token and with the API key, in the same service, show what the token costs.
 */
async function consolePagesCase(s: Settings): Promise<Row[]> {
  const service = await startService({ SERVICE_DURABILITY: 'sync' }, profiled(s.profile));
  const rows: Row[] = [];
  try {
    const org = await seedConsoleOrganization(service, s.persons);
    const byKey = org.personIds.map((id) => encodeRequest(HOST, { method: 'GET', path: `/persons/${id}`, headers: service.auth }));
    const byToken = org.personIds.map((id) => encodeRequest(HOST, { method: 'GET', path: `/persons/${id}`, headers: org.headers }));
    rows.push(await measure(s, service, 'get-person-api-key', `GET /persons/{id}, ${org.personIds.length} persons, sync, API key (the console pages' service)`, (i) => byKey[i % byKey.length] as Buffer));
    rows.push(await measure(s, service, 'get-person-console-token', 'the same with the console access token (Authorization: Bearer)', (i) => byToken[i % byToken.length] as Buffer));
    for (const p of consolePages(org)) {
      const row = await measure(s, service, `console #/${p.page}`, `${p.calls.length} call${p.calls.length === 1 ? '' : 's'}: ${p.calls.join(', ')}`, (i) => p.requests[i % p.requests.length] as Buffer, (st) => st === 200);
      rows.push({ ...row, calls: p.calls.length });
    }
  } finally {
    await service.stop();
  }
  return rows;
}

/**
 * GET /persons/{id} with the console on (its bundle built, its routes and token checks in place) and off; as
 * the `control`, the first service is off too: two identical services measured the same way.
 */
async function consoleCase(s: Settings, control: boolean): Promise<Compared> {
  const on = await startService({ SERVICE_DURABILITY: 'sync', ...(control && { SERVICE_CONSOLE: '0' }) });
  let off: ServiceProcess | undefined;
  try {
    off = await startService({ SERVICE_DURABILITY: 'sync', SERVICE_CONSOLE: '0' });
    if (control) {
      return await inTurn(s, 'SERVICE_CONSOLE=0, then another with SERVICE_CONSOLE=0 (the control)', [
        { service: on, name: 'get-person-control-a', what: `GET /persons/{id}, ${s.persons} persons, sync, SERVICE_CONSOLE=0 (the control's first)` },
        { service: off, name: 'get-person-control-b', what: 'the same, another service' },
      ]);
    }
    return await inTurn(s, 'console on, then SERVICE_CONSOLE=0', [
      { service: on, name: 'get-person-console-on', what: `GET /persons/{id}, ${s.persons} persons, sync, console on (API key)` },
      { service: off, name: 'get-person-console-off', what: 'the same with SERVICE_CONSOLE=0' },
    ]);
  } finally {
    await off?.stop();
    await on.stop();
  }
}

/** Two services compared in turn: requests/s of the first over the second, and server CPU per request. */
interface Pair {
  /** of the round with the median ratio */
  ratio: number;
  rounds: number[];
  /** server CPU per request, second over first, in that round */
  cpuRatio: number | undefined;
  cpuRounds: Array<number | undefined>;
  /** of the round with the median CPU ratio: on a busy machine requests/s move from round to round far more */
  cpuMedian: number | undefined;
}

function pairOf(compared: Compared): Pair {
  const [first, second] = compared.rows as [Row, Row];
  const cpuRatio = first.serverCpuUsPerRequest && second.serverCpuUsPerRequest ? second.serverCpuUsPerRequest / first.serverCpuUsPerRequest : undefined;
  const measured = compared.cpuRatios.filter((r): r is number => r !== undefined).sort((a, b) => a - b);
  return { ratio: first.rps / second.rps, rounds: compared.ratios, cpuRatio, cpuRounds: compared.cpuRatios, cpuMedian: measured[Math.floor(measured.length / 2)] };
}

function printPair(title: string, cpuTitle: string, pair: Pair, note: string): void {
  console.log(`\n${title}: ${pct(pair.ratio)}   ${note}the round with the median ratio of ${pair.rounds.map(pct).join(', ')})`);
  if (pair.cpuRatio !== undefined) console.log(`  server CPU per request, ${cpuTitle} in that round: ${pct(pair.cpuRatio)}   (100%: the same cost per request)`);
  if (pair.cpuMedian !== undefined) console.log(`  server CPU per request, ${cpuTitle}, the median round: ${pct(pair.cpuMedian)}   (rounds ${pair.cpuRounds.map(pct).join(', ')})`);
}

export async function main(argv: string[]): Promise<void> {
  const s = settings(argv);
  if (!s) return console.log(USAGE);
  const loop = s.rate === undefined ? 'closed loop' : `open loop at ${s.rate} req/s`;
  const env = environment();
  console.error(`http: ${s.connections} keep-alive connections over loopback, ${loop}, ${s.durationMs / 1000} s per case after ${s.warmupMs / 1000} s warm-up`);
  const rows: Row[] = [];
  if (s.cases.includes('hello')) rows.push(await helloCase(s));
  // With a baseline, GET /persons/{id} is measured in the comparison, in turn with the baseline's.
  const sync = s.cases.filter((c) => (c === 'get-person' && s.baselineRef === undefined) || c === 'rbac-check' || c === 'put-attributes');
  if (sync.length > 0) rows.push(...(await serviceCases(s, 'sync', sync)));
  if (s.cases.includes('put-attributes-nosync')) rows.push(...(await serviceCases(s, 'nosync', ['put-attributes-nosync'])));
  let vsBaseline: { ref: string; commit: string; ratio: number; rounds: number[] } | undefined;
  if (s.baselineRef !== undefined) {
    const baseline = checkoutBaseline(s.baselineRef);
    try {
      const compared = await baselineCase(s, baseline);
      rows.push(...compared.rows);
      const [current, base] = compared.rows as [Row, Row];
      vsBaseline = { ref: baseline.ref, commit: baseline.commit, ratio: current.rps / base.rps, rounds: compared.ratios };
    } finally {
      baseline.remove();
    }
  }

  let consoleOnOff: Pair | undefined;
  let consoleControl: Pair | undefined;
  if (s.cases.includes('console-on-off')) {
    const compared = await consoleCase(s, false);
    rows.push(...compared.rows);
    consoleOnOff = pairOf(compared);
  }
  if (s.cases.includes('console-off-off')) {
    const compared = await consoleCase(s, true);
    rows.push(...compared.rows);
    consoleControl = pairOf(compared);
  }

  if (s.cases.includes('console-pages')) rows.push(...(await consolePagesCase(s)));

  const ceiling = rows.find((r) => r.case === 'hello');
  if (ceiling) for (const r of rows) r.vsCeiling = r.rps / ceiling.rps;
  if (s.profile) console.error('CPU profiles of the service: bench/results/profiles/ (npm run bench -- profile-summary <file>)');

  const columns: Column<Row>[] = [
    { title: 'case', value: (r) => r.case },
    { title: 'req/s', value: (r) => r.rps },
    { title: 'vs hello', value: (r) => (r.vsCeiling === undefined ? '-' : `${(r.vsCeiling * 100).toFixed(1)}%`), align: 'right' },
    { title: 'pages/s', value: (r) => (r.calls === undefined ? '-' : Math.round(r.rps / r.calls)), align: 'right' },
    { title: 'p50 ms', value: (r) => ms(r.latency.p50_us), align: 'right' },
    { title: 'p99 ms', value: (r) => ms(r.latency.p99_us), align: 'right' },
    { title: 'p99.9 ms', value: (r) => ms(r.latency.p999_us), align: 'right' },
    { title: 'max ms', value: (r) => ms(r.latency.max_us), align: 'right' },
    { title: 'errors', value: (r) => r.errors },
    ...cpuColumns<Row>(),
    { title: 'what', value: (r) => r.what },
  ];
  console.log(formatTable(columns, rows));
  if (vsBaseline) {
    console.log(`\nGET /persons/{id}, current / at ${vsBaseline.ref}: ${pct(vsBaseline.ratio)}   (issue 22: ≥ 97%; the round with the median ratio of ${vsBaseline.rounds.map(pct).join(', ')})`);
  }
  if (consoleOnOff) printPair('GET /persons/{id}, console on / SERVICE_CONSOLE=0', 'off / on', consoleOnOff, '(target ≥ 98%; ');
  if (consoleControl) printPair('the control, GET /persons/{id} of two services with SERVICE_CONSOLE=0, first / second', 'second / first', consoleControl, '(an identical pair: the spread of this machine; ');
  console.log(`\n${loop}${s.rate === undefined ? '' : ': latency counts from when each request was due'}; ${environmentLine(env)}`);
  const path = writeResults('http', env, { settings: s, results: rows, ...(vsBaseline ? { baseline: vsBaseline } : {}), ...(consoleOnOff ? { console_on_off: consoleOnOff } : {}), ...(consoleControl ? { console_off_off: consoleControl } : {}) });
  console.log(`written to ${path}`);
}

runIfMain(import.meta.url, main);
