// The browser side under load: POST /actions/sdk events per second into the log beside POST /test-events and the
// durable person-create rate (POST /persons) of the same service, and the phishing image GET /mitm/{token}.png
// beside a uWebSockets.js hello world; in rounds, each round measuring every case once, so each ratio is taken
// from figures minutes apart at most.
//   npm run bench -- sdk [--duration 2] [--warmup 1] [--connections 32] [--rounds 3]
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { numberFlag, runIfMain } from './lib/cli.js';
import { encodeRequest } from './lib/connection.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { createPersons } from './lib/persons.js';
import { cpuColumns, environment, environmentLine, formatTable, ms, pct, writeResults, type Column } from './lib/report.js';
import { startServer, startService, type ServerProcess } from './lib/server-process.js';

const HOST = '127.0.0.1';
const CASES = ['hello', 'mitm-image', 'person-create', 'sdk-event', 'test-events'] as const;
type CaseName = (typeof CASES)[number];

/** What each target compares: the case, the case it is a share of, and the share it must reach. */
const TARGETS = [
  { case: 'sdk-event', of: 'person-create', target: 0.8 },
  { case: 'mitm-image', of: 'hello', target: 0.8 },
  { case: 'test-events', of: 'person-create', target: undefined },
] as const;

interface Settings {
  durationMs: number;
  warmupMs: number;
  connections: number;
  rounds: number;
  persons: number;
}

interface Row extends LoadResult {
  round: number;
  case: CaseName;
  what: string;
}

const USAGE = `usage: npm run bench -- sdk [options]   (or: npx tsx bench/sdk.ts [options])
  --duration S      measured seconds per case and round (default 2)
  --warmup S        unmeasured seconds before each case (default 1)
  --connections N   keep-alive connections, one request in flight on each (default 32)
  --rounds N        rounds of all cases; ratios are given per round and as the median (default 3)
  --persons N       persons the SDK events name (default 200)`;

function settings(argv: string[]): Settings | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '2' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '32' },
      rounds: { type: 'string', default: '3' },
      persons: { type: 'string', default: '200' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  return {
    durationMs: numberFlag('duration', values.duration, 0.1, USAGE) * 1000,
    warmupMs: numberFlag('warmup', values.warmup, 0, USAGE) * 1000,
    connections: Math.floor(numberFlag('connections', values.connections, 1, USAGE)),
    rounds: Math.floor(numberFlag('rounds', values.rounds, 1, USAGE)),
    persons: Math.floor(numberFlag('persons', values.persons, 1, USAGE)),
  };
}

interface Case {
  name: CaseName;
  what: string;
  server: ServerProcess;
  request(i: number): Buffer;
  ok(status: number): boolean;
}

async function measure(s: Settings, round: number, c: Case): Promise<Row> {
  const result = await runLoad({ url: c.server.url, request: c.request, connections: s.connections, durationMs: s.durationMs, warmupMs: s.warmupMs, serverPid: c.server.pid, ok: c.ok });
  const row: Row = { ...result, round, case: c.name, what: c.what };
  console.error(`  round ${round} ${c.name}: ${row.rps} req/s, p50 ${ms(row.latency.p50_us)} ms, p99 ${ms(row.latency.p99_us)} ms${row.errors ? `, ${row.errors} errors ${JSON.stringify(row.statuses)} ${row.failures.join('; ')}` : ''}`);
  return row;
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

export async function main(argv: string[]): Promise<void> {
  const s = settings(argv);
  if (!s) return console.log(USAGE);
  const env = environment();
  console.error(`sdk: ${s.connections} keep-alive connections over loopback, closed loop, ${s.rounds} round(s) of ${s.durationMs / 1000} s per case after ${s.warmupMs / 1000} s warm-up`);
  const hello = await startServer('bench/hello-server.ts');
  // Durable commits (the default); the browser rate limits raised so that one loopback address is not refused.
  const service = await startService({ SERVICE_SDK_RATE_PER_IP: '100000000', SERVICE_SDK_RATE_PER_ORG: '100000000', SERVICE_BROWSER_RATE_WINDOW: '1' });
  const rows: Row[] = [];
  try {
    const json = { ...service.auth, 'Content-Type': 'application/json' };
    const ids = await createPersons(service, s.persons);
    const mitm = await fetch(`${service.url}/organizations/mitm-tokens`, { method: 'POST', headers: json, body: JSON.stringify({ allowed_domains: ['shop.example', '*.shop.example'], tag: 'bench' }) });
    if (mitm.status !== 201) throw new Error(`POST /organizations/mitm-tokens: ${mitm.status} ${await mitm.text()}`);
    const token = ((await mitm.json()) as { result: { token: string } }).result.token;
    const orgId = service.auth['Service-OrgID'] as string;
    const correlation = randomUUID();
    const sdkHeaders = { 'Content-Type': 'application/json', 'Service-SdkVersion': '1.0.0', 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) bench' };
    const sdkBodies = ids.map((person_id) =>
      encodeRequest(HOST, {
        method: 'POST',
        path: '/actions/sdk',
        headers: sdkHeaders,
        body: JSON.stringify({ organization_id: orgId, analytics_correlation_id: correlation, window_location: 'https://shop.example/cart?step=2', user_agent: sdkHeaders['User-Agent'], event_data: { event_name: 'VirtualPageLoaded_v1', person_id } }),
      }),
    );
    const helloReq = encodeRequest(HOST, { method: 'GET', path: '/hello' });
    // An allowed page embeds the image: the common case, answered without an event.
    const imageReq = encodeRequest(HOST, { method: 'GET', path: `/mitm/${token}.png`, headers: { Referer: 'https://shop.example/cart' } });
    const testEventsReq = encodeRequest(HOST, { method: 'POST', path: '/test-events', headers: json, body: JSON.stringify([{ event_name: 'VirtualPageLoaded_v1' }]) });
    const cases: Case[] = [
      { name: 'hello', what: 'GET /hello, uWebSockets.js hello world (ceiling)', server: hello, request: () => helloReq, ok: (st) => st === 200 },
      { name: 'mitm-image', what: 'GET /mitm/{token}.png, Referer on an allowed domain', server: service, request: () => imageReq, ok: (st) => st === 200 },
      {
        name: 'person-create',
        what: 'POST /persons, one email handle, durable commit',
        server: service,
        request: (i) => encodeRequest(HOST, { method: 'POST', path: '/persons', headers: json, body: JSON.stringify({ handles: [{ type: 'email_address', value: `sdk-${randomUUID()}-${i}@example.com` }] }) }),
        ok: (st) => st === 201,
      },
      { name: 'sdk-event', what: `POST /actions/sdk, VirtualPageLoaded_v1 naming one of ${ids.length} persons, one event into the log each`, server: service, request: (i) => sdkBodies[i % sdkBodies.length] as Buffer, ok: (st) => st === 204 },
      { name: 'test-events', what: 'POST /test-events, one VirtualPageLoaded_v1 each', server: service, request: () => testEventsReq, ok: (st) => st === 201 },
    ];
    for (let round = 1; round <= s.rounds; round++) for (const c of cases) rows.push(await measure(s, round, c));
  } finally {
    await Promise.all([service.stop(), hello.stop()]);
  }

  const rps = (round: number, name: CaseName) => rows.find((r) => r.round === round && r.case === name)?.rps;
  const ratios = TARGETS.map((t) => {
    const perRound = Array.from({ length: s.rounds }, (_, k) => {
      const a = rps(k + 1, t.case);
      const b = rps(k + 1, t.of);
      return a === undefined || !b ? undefined : a / b;
    }).filter((r): r is number => r !== undefined);
    const med = perRound.length ? median(perRound) : undefined;
    return { case: t.case, of: t.of, target: t.target ?? null, per_round: perRound, median: med ?? null, met: t.target === undefined || med === undefined ? null : med >= t.target };
  });

  const columns: Column<Row>[] = [
    { title: 'round', value: (r) => r.round },
    { title: 'case', value: (r) => r.case },
    { title: 'req/s', value: (r) => r.rps },
    { title: 'p50 ms', value: (r) => ms(r.latency.p50_us), align: 'right' },
    { title: 'p99 ms', value: (r) => ms(r.latency.p99_us), align: 'right' },
    { title: 'errors', value: (r) => r.errors },
    ...cpuColumns<Row>(),
    { title: 'what', value: (r) => r.what },
  ];
  console.log(formatTable(columns, rows));
  console.log('');
  console.log(
    formatTable(
      [
        { title: 'ratio', value: (r: (typeof ratios)[number]) => `${r.case} / ${r.of}` },
        { title: 'per round', value: (r) => r.per_round.map((x) => pct(x)).join(' ') },
        { title: 'median', value: (r) => pct(r.median ?? undefined), align: 'right' },
        { title: 'target', value: (r) => (r.target === null ? '-' : `≥ ${pct(r.target)}`), align: 'right' },
        { title: 'met', value: (r) => (r.met === null ? '-' : r.met ? 'yes' : 'no') },
      ],
      ratios,
    ),
  );
  console.log(`\nsdk-event and test-events: req/s = events per second into the log (one event each, answered after its durable commit); ${environmentLine(env)}`);
  console.log(`written to ${writeResults('sdk', env, { settings: s, durability: 'sync', results: rows, ratios })}`);
}

runIfMain(import.meta.url, main);
