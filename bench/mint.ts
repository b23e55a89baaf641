// How fast can this machine mint identity tokens, and how close does the service come to that?
// One run measures side by side: signing alone on one core; the HTTP layer alone, also at the open loop's
// rate, where its tail is the machine's floor; a minimal mint server
// (HTTP + the same signing code, nothing else), signing on its one thread and on signing threads like the
// service; the same minimal server answering each token only once a record of a mint's size is durable in an
// LMDB WAL store opened as the service's (the floor durability sets: no server that keeps the promise goes
// faster here); the real POST /persons/{id}/mint-token with durable commits, closed loop and then open loop at
// half its maximum rate; the same service signing on its main thread; the same without fsync; and the
// disk's durable-commit latency; and password sign-in with and without a token_minted hook. The open loops
// take the servers in turn over several rounds. Servers run in child processes, the load generator here.
// With --pin the whole run is made twice: as is, then with each server confined to core 0 and the load generator
// to core 1 (taskset), the way operators measure it.
// With --baseline-ref the service at an earlier git ref runs beside the current one, their closed loops taking
// turns round after round, and the ratio of the two says what the changes since then cost.
//   npm run bench -- mint [--duration 2] [--connections 100] [--only minimal,minimal-durable,real] [--pin] [--baseline-ref ad810ac^1]
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { decodeJwt } from 'jose';
import { startReceiver } from '../scripts/webhook-receiver.js';
import { loadConfig, TOKEN_ALGS, type TokenAlg } from '../src/config.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { encodeRequest } from './lib/connection.js';
import type { LatencySummary } from './lib/histogram.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { checkoutBaseline, type Baseline } from './lib/baseline.js';
import type { Grouping } from './lib/durable-records.js';
import { durableCommitLatency, signingCeiling } from './lib/mint-probes.js';
import { createPersons } from './lib/persons.js';
import { GENERATOR_CORE, onGeneratorCore, SERVER_CORE } from './lib/pin.js';
import { count, environment, environmentLine, formatTable, ms, pct, writeResults, type Column } from './lib/report.js';
import { SERVICE_AUTH, startServer, startService, type ServerProcess, type ServiceProcess } from './lib/server-process.js';

const PARTS = ['sign', 'hello', 'minimal', 'minimal-durable', 'minimal-threads', 'real', 'inline', 'nosync', 'signin', 'disk'] as const;
type Part = (typeof PARTS)[number];

const USAGE = `usage: npm run bench -- mint [options]   (or: npx tsx bench/mint.ts [options])
  --duration <s>      seconds per measured run (default 2; 10 gives steadier tails)
  --connections <n>   keep-alive connections of the load generator (default 100: enough requests in flight
                      to keep the durable service busy while each waits for its commit)
  --threads <n>       signing threads of the service and of the minimal-threads server (default: the
                      service's own default, SERVICE_SIGNING_THREADS)
  --alg <alg>         ES256 | RS256 | EdDSA (default ES256)
  --warmup <s>        unmeasured seconds before each closed-loop run (default 1)
  --persons <n>       persons minted for, in turn (default 64)
  --rate <n>          open-loop rate per second (default: half the real service's closed-loop rate)
  --rounds <n>        rounds of the closed loops of the minimal server, the minimal durable one and the service
                      (the target ratios), and of every open loop, taking the servers in turn; the table shows
                      each one's median round, the JSON every round (default 3)
  --only <parts>      comma-separated subset of ${PARTS.join(',')} (default: all).
                      minimal-durable is the minimal server answering each token only once a record of a
                      mint's size is durable (MINIMAL_DURABLE=gather: the service's WAL store, batched as its
                      actor batches): the floor durability sets, beside minimal and real
  --profile           write a CPU profile of the real service (durable run) to bench/results/profiles/
  --pin               run everything twice: unpinned, then pinned (each server confined to core 0 from its
                      start, the load generator to core 1, with taskset); tables and ratios for both. Pinned,
                      the servers see one core, so the signing threads default to the service's own default
                      there (none) unless --threads is given
  --pin-only          only the pinned run
  --baseline-ref <r>  also the service as it was at git ref r (unpacked into a temporary directory, on the same
                      node_modules), started like the current one; its closed loop takes turns with the current
                      service's in every round, and the ratio current / baseline is printed (issue 22: the
                      consistency token and the event chain cost ≤ 3%, against ad810ac^1). Needs the real part
  --help              this text
Prints a table and ratios, and writes the figures to bench/results/mint-<time>.json.`;

const root = fileURLToPath(new URL('..', import.meta.url));

interface Options {
  duration: number;
  connections: number;
  alg: TokenAlg;
  warmup: number;
  persons: number;
  rate: number | undefined;
  rounds: number;
  threads: number;
  /** --threads given: the same in both runs; absent: each run uses the service's default for its cores */
  threadsGiven: boolean;
  only: Set<Part>;
  profile: boolean;
  pin: 'off' | 'both' | 'only';
  /** the cores the servers are confined to in this run; absent: unpinned */
  serverCores?: string;
  /** --baseline-ref, unpacked once for every run */
  baseline?: Baseline;
  baselineRef?: string;
}

function options(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '2' },
      connections: { type: 'string', default: '100' },
      threads: { type: 'string' },
      alg: { type: 'string', default: 'ES256' },
      warmup: { type: 'string', default: '1' },
      persons: { type: 'string', default: '64' },
      rate: { type: 'string' },
      rounds: { type: 'string', default: '3' },
      only: { type: 'string', default: PARTS.join(',') },
      profile: { type: 'boolean', default: false },
      pin: { type: 'boolean', default: false },
      'pin-only': { type: 'boolean', default: false },
      'baseline-ref': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  if (!(TOKEN_ALGS as readonly string[]).includes(values.alg)) throw new Error(`--alg must be one of ${TOKEN_ALGS.join(', ')}\n${USAGE}`);
  const only = new Set(values.only.split(',').map((s) => s.trim()) as Part[]);
  for (const part of only) if (!PARTS.includes(part)) throw new Error(`--only: unknown part "${part}" (parts: ${PARTS.join(', ')})`);
  if (values['baseline-ref'] !== undefined && !only.has('real')) throw new Error('--baseline-ref compares with the real part: add real to --only');
  return {
    ...(values['baseline-ref'] === undefined ? {} : { baselineRef: values['baseline-ref'] }),
    duration: numberFlag('duration', values.duration, 0.1, USAGE),
    connections: Math.round(numberFlag('connections', values.connections, 1, USAGE)),
    alg: values.alg as TokenAlg,
    warmup: numberFlag('warmup', values.warmup, 0, USAGE),
    persons: Math.round(numberFlag('persons', values.persons, 1, USAGE)),
    rate: values.rate === undefined ? undefined : numberFlag('rate', values.rate, 1, USAGE),
    rounds: Math.round(numberFlag('rounds', values.rounds, 1, USAGE)),
    threads: values.threads === undefined ? loadConfig({}).signingThreads : Math.round(numberFlag('threads', values.threads, 0, USAGE)),
    threadsGiven: values.threads !== undefined,
    only,
    profile: values.profile,
    pin: values['pin-only'] ? 'only' : values.pin ? 'both' : 'off',
  };
}

/** A server under load and the requests to send it, in turn. */
interface Target {
  server: ServerProcess;
  requests: Buffer[];
}

/** Closed loop after a warm-up, with the server's CPU time per request beside the throughput. */
async function closed(label: string, t: Target, o: Options): Promise<LoadResult> {
  console.error(`  ${label}: ${o.warmup} s warm-up, ${o.duration} s closed loop over ${o.connections} connections`);
  return check(label, await runLoad({ ...load(t, o), warmupMs: o.warmup * 1000 }));
}

/** Open loop at a fixed rate: latency from when each request was due. */
async function open(label: string, t: Target, o: Options, rate: number): Promise<LoadResult> {
  console.error(`  ${label}: ${o.duration} s open loop at ${rate}/s`);
  return check(label, await runLoad({ ...load(t, o), rate }));
}

function load(t: Target, o: Options) {
  return { url: t.server.url, request: (i: number) => t.requests[i % t.requests.length] as Buffer, connections: o.connections, durationMs: o.duration * 1000, serverPid: t.server.pid };
}

function check(label: string, r: LoadResult): LoadResult {
  if (r.errors > 0) console.error(`    ${label}: ${r.errors} errors ${JSON.stringify(r.statuses)} ${r.failures.join('; ')}`);
  return r;
}

/** Sign-in is bound by scrypt on libuv's four threads: more requests in flight only queue. */
const signInConnections = (o: Options) => Math.min(o.connections, 16);
const PASSWORD = 'bench-password-0123456789';
const ORG_ID = SERVICE_AUTH['Service-OrgID'] as string;
const signInBody = (i: number) => JSON.stringify({ handle: { type: 'email_address', value: `bench-${i}@example.com` }, password: PASSWORD });

/** A JSON call to the service that must answer `status`; resolves with the answer's result. */
async function call<R = unknown>(s: ServiceProcess, method: string, path: string, body: string, status: number, headers = s.auth): Promise<R> {
  const res = await fetch(`${s.url}${path}`, { method, headers: { ...headers, 'Content-Type': 'application/json' }, body });
  if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return status === 204 ? (undefined as R) : ((await res.json()) as { result: R }).result;
}

/** Gives each person the bench password, and returns a password sign-in request per person. */
async function signInRequests(s: ServiceProcess, ids: readonly string[]): Promise<Buffer[]> {
  for (const id of ids) await call(s, 'PUT', `/persons/${id}/credentials/password`, JSON.stringify({ password: PASSWORD }), 204);
  return ids.map((_, i) => encodeRequest('127.0.0.1', { method: 'POST', path: '/authenticate/password', headers: { 'Service-OrgID': ORG_ID, 'Content-Type': 'application/json' }, body: signInBody(i) }));
}

/** Registers `url` as the organization's token_minted hook, and checks that a sign-in's token carries its claim. */
async function addTokenMintedHook(s: ServiceProcess, url: string, claim: [string, unknown]): Promise<void> {
  const webhook = await call<{ id: string }>(s, 'POST', '/organizations/webhooks', JSON.stringify({ name: 'bench hook', target_url: url }), 201);
  await call(s, 'POST', `/organizations/webhooks/${webhook.id}/triggers`, JSON.stringify({ trigger_type: 'sync_hook', trigger_name: 'token_minted' }), 201);
  const { token } = await call<{ token: string }>(s, 'POST', '/authenticate/password', signInBody(0), 200, { 'Service-OrgID': ORG_ID });
  if (decodeJwt(token)[claim[0]] !== claim[1]) throw new Error(`the hook's claim ${claim[0]} is not in the token`);
}

/** The same bytes go to the minimal server and the service: the minimal one just ignores the headers. */
const mintRequests = (ids: readonly string[]) => ids.map((id) => encodeRequest('127.0.0.1', { method: 'POST', path: `/persons/${id}/mint-token`, headers: { ...SERVICE_AUTH } }));

/** The servers measured in the open loop too. */
type OpenName = 'hello' | 'minimal' | 'minimalDurable' | 'real' | 'nosync';
/** The servers whose closed loops take turns round after round, for the ratios between them. */
type RatioName = 'minimal' | 'minimalDurable' | 'real' | 'baseline';

interface Results {
  sign?: { node: number; jose: number };
  hello?: LoadResult;
  minimal?: LoadResult;
  /** the minimal server with a durable record per token: the floor durability sets */
  minimalDurable?: LoadResult;
  minimalThreads?: LoadResult;
  real?: LoadResult;
  inline?: LoadResult;
  nosync?: LoadResult;
  /** the service at --baseline-ref: the round paired with real's median ratio to it */
  baseline?: LoadResult;
  /** every closed-loop round of the servers of the target ratios; minimal, minimalDurable and real above are the median round's */
  closedRounds: Partial<Record<RatioName, LoadResult[]>>;
  /** every open-loop round of each server, in order */
  openRounds: Partial<Record<OpenName, LoadResult[]>>;
  signIn?: LoadResult;
  signInHook?: LoadResult;
  disk?: LatencySummary & { commits: number };
}

interface Row {
  what: string;
  rps?: number;
  latency?: LatencySummary;
  errors?: number;
  cpuUs?: number;
  /** the load generator's own event-loop delay, p99 / max */
  stall?: LoadResult['clientStallMs'];
  /** the machine's CPU time the hypervisor stole over the run, % */
  steal?: number;
}

/** The median of values by key (the upper one of an even count). */
function median<T>(values: readonly T[] | undefined, key: (v: T) => number): T | undefined {
  if (!values || values.length === 0) return undefined;
  return [...values].sort((a, b) => key(a) - key(b))[Math.floor(values.length / 2)];
}

/** Of a server's open-loop rounds, the one with the median p99. */
const medianRound = (rounds: LoadResult[] | undefined) => median(rounds, (m) => m.latency.p99_us);

interface Pair {
  over: LoadResult;
  under: LoadResult;
  ratio: number;
  /** the round, from 0 */
  round: number;
}

/** Two servers' closed-loop rounds paired, over / under by throughput: two runs made one after the other. */
function paired(rounds: Results['closedRounds'], over: RatioName, under: RatioName): Pair[] {
  const [a = [], b = []] = [rounds[over], rounds[under]];
  return a.slice(0, b.length).map((m, round) => ({ over: m, under: b[round] as LoadResult, ratio: m.rps / (b[round] as LoadResult).rps, round }));
}

/** The service's rounds paired with the baseline's of the same round; the pair with the median ratio. */
function baselinePairs(rounds: Results['closedRounds']): { pairs: Pair[]; median?: Pair } {
  const pairs = paired(rounds, 'real', 'baseline');
  const m = median(pairs, (p) => p.ratio);
  return m === undefined ? { pairs } : { pairs, median: m };
}

/**
 * The round the table shows for minimal, minimalDurable and real: the one with the median ratio of the target
 * (real / minimal), or without one of them, of the next pair there is; with one of the three alone, its median
 * round by throughput.
 */
function medianRounds(rounds: Results['closedRounds']): Pick<Results, 'minimal' | 'minimalDurable' | 'real'> {
  const pairs = ([['real', 'minimal'], ['minimalDurable', 'minimal'], ['real', 'minimalDurable']] as const).map(([a, b]) => paired(rounds, a, b)).find((p) => p.length > 0);
  const at = median(pairs, (p) => p.ratio)?.round;
  const pick = (name: RatioName) => (at === undefined ? undefined : rounds[name]?.[at]) ?? median(rounds[name], (m) => m.rps);
  return { minimal: pick('minimal'), minimalDurable: pick('minimalDurable'), real: pick('real') };
}

function report(o: Options, r: Results): Record<string, number> {
  const rows: Row[] = [];
  const [helloOpen, minimalOpen, durableOpen, realOpen, nosyncOpen] = (['hello', 'minimal', 'minimalDurable', 'real', 'nosync'] as const).map((name) => medianRound(r.openRounds[name]));
  const openLabel = (m: LoadResult | undefined) => `  open loop at ${count(m?.rate)}/s${o.rounds > 1 ? `, median round of ${o.rounds}` : ''}`;
  if (r.sign) {
    rows.push({ what: 'sign only, node:crypto, whole token (1 core)', rps: r.sign.node, cpuUs: 1e6 / r.sign.node });
    rows.push({ what: 'sign only, jose SignJWT (1 core, reference)', rps: r.sign.jose, cpuUs: 1e6 / r.sign.jose });
  }
  const row = (what: string, m: LoadResult | undefined) =>
    m && rows.push({ what, rps: m.rps, latency: m.latency, errors: m.errors, stall: m.clientStallMs, ...(m.stealPercent === undefined ? {} : { steal: m.stealPercent }), ...(m.serverCpuUsPerRequest === undefined ? {} : { cpuUs: m.serverCpuUsPerRequest }) });
  const threads = `${o.threads} signing thread${o.threads === 1 ? '' : 's'}`;
  row('hello world, uWebSockets.js', r.hello);
  row(openLabel(helloOpen), helloOpen);
  const medianOf = o.rounds > 1 ? `, median round of ${o.rounds}` : '';
  row(`minimal mint server, signing inline${medianOf}`, r.minimal);
  row(openLabel(minimalOpen), minimalOpen);
  row(`minimal mint server, inline, a durable record per token${medianOf}`, r.minimalDurable);
  row(openLabel(durableOpen), durableOpen);
  row(`minimal mint server, ${threads}`, r.minimalThreads);
  row(`POST /persons/{id}/mint-token, sync, ${threads}${medianOf}`, r.real);
  row(`  the same at ${o.baseline?.ref} (${o.baseline?.commit.slice(0, 10)}), baseline, round paired with the median ratio`, r.baseline);
  row(openLabel(realOpen), realOpen);
  row('POST /persons/{id}/mint-token, sync, signing inline', r.inline);
  row(`POST /persons/{id}/mint-token, nosync, ${threads}`, r.nosync);
  row(openLabel(nosyncOpen), nosyncOpen);
  row(`POST /authenticate/password, sync (${signInConnections(o)} connections)`, r.signIn);
  row('  with a token_minted hook on loopback', r.signInHook);
  if (r.disk) rows.push({ what: 'disk: one durable WAL commit at a time', rps: r.disk.commits / o.duration, latency: r.disk });
  const columns: Column<Row>[] = [
    { title: '', value: (x) => x.what, align: 'left' },
    { title: 'req/s', value: (x) => count(x.rps), align: 'right' },
    { title: 'p50 ms', value: (x) => ms(x.latency?.p50_us), align: 'right' },
    { title: 'p99 ms', value: (x) => ms(x.latency?.p99_us), align: 'right' },
    { title: 'p99.9 ms', value: (x) => ms(x.latency?.p999_us), align: 'right' },
    { title: 'errors', value: (x) => count(x.errors), align: 'right' },
    { title: 'server CPU µs/req', value: (x) => count(x.cpuUs, 1), align: 'right' },
    { title: 'generator stall ms', value: (x) => (x.stall === undefined ? '-' : `${x.stall.p99.toFixed(1)} / ${x.stall.max.toFixed(1)}`), align: 'right' },
    { title: 'steal %', value: (x) => (x.steal === undefined ? '-' : x.steal.toFixed(1)), align: 'right' },
  ];
  const pinned = o.serverCores === undefined ? 'unpinned' : `pinned: servers on core ${o.serverCores}, load generator on core ${GENERATOR_CORE}`;
  console.log(`\nmint benchmark (${pinned}): ${o.alg}, ${o.connections} keep-alive connections, ${o.duration} s runs\n`);
  console.log(formatTable(columns, rows));
  console.log('\nopen-loop latencies count from when each request was due, so queueing behind a stall shows.');
  console.log('generator stall: how late the load generator\'s own event loop ran (p99 / max); latency below it is not the server\'s.');
  console.log('steal: CPU time the hypervisor gave to other guests during the run; where it is above about 1%, tails measure the host.\n');

  const ratios: Record<string, number> = {};
  const line = (label: string, value: number | undefined, text: (v: number) => string) => {
    if (value === undefined || !Number.isFinite(value)) return;
    ratios[label] = value;
    console.log(text(value));
  };
  const cpu = (m: LoadResult | undefined) => m?.serverCpuUsPerRequest;
  const cpuMinimal = cpu(r.minimal);
  const over = (x: LoadResult | undefined, y: { rps: number } | undefined) => x && y && x.rps / y.rps;
  const roundRatios = paired(r.closedRounds, 'real', 'minimal').map((p) => pct(p.ratio));
  line('real_over_minimal', over(r.real, r.minimal), (v) => `mint-token (sync) / minimal server signing inline:      ${pct(v)}   (target ≥ 90%${roundRatios.length > 1 ? `; the median of rounds ${roundRatios.join(', ')}` : ''})`);
  line('real_over_minimal_threads', over(r.real, r.minimalThreads), (v) => `mint-token (sync) / minimal server, same threads:      ${pct(v)}`);
  // The floor: what durability itself costs here, and what the service's own work costs beyond it. Each the
  // median of the rounds' ratios (the rounds printed beside it).
  const medianRatio = (over: RatioName, under: RatioName, key: (m: LoadResult) => number | undefined, show: (v: number) => string) => {
    const ratios = paired(r.closedRounds, over, under).map((p) => (key(p.over) ?? NaN) / (key(p.under) ?? NaN)).filter(Number.isFinite);
    return { value: median(ratios, (v) => v), rounds: ratios.length > 1 ? `; the median of rounds ${ratios.map(show).join(', ')}` : '' };
  };
  const rpsOf = (m: LoadResult) => m.rps;
  const times = (v: number) => `${v.toFixed(2)}×`;
  const floor = medianRatio('minimalDurable', 'minimal', rpsOf, pct);
  line('minimal_durable_over_minimal', floor.value, (v) => `minimal, durable record / minimal server inline:        ${pct(v)}   (the floor of the target for any server that keeps the durability promise here${floor.rounds})`);
  const own = medianRatio('real', 'minimalDurable', rpsOf, pct);
  line('real_over_minimal_durable', own.value, (v) => `mint-token (sync) / minimal, durable record:            ${pct(v)}   (what the service's own work costs${own.rounds})`);
  const cpuFloor = medianRatio('minimalDurable', 'minimal', cpu, times);
  line('cpu_minimal_durable_over_minimal', cpuFloor.value, (v) => `server CPU per request, minimal durable / minimal:      ${v.toFixed(2)}×${cpuFloor.rounds}`);
  const cpuOwn = medianRatio('real', 'minimalDurable', cpu, times);
  line('cpu_real_over_minimal_durable', cpuOwn.value, (v) => `server CPU per request, sync / minimal durable:         ${v.toFixed(2)}×${cpuOwn.rounds}`);
  line('cpu_us_minimal', cpuMinimal, (v) => `server CPU per request, minimal server inline:          ${v.toFixed(1)} µs`);
  line('cpu_us_minimal_durable', cpu(r.minimalDurable), (v) => `server CPU per request, minimal, durable record:        ${v.toFixed(1)} µs`);
  line('cpu_us_real', cpu(r.real), (v) => `server CPU per request, mint-token (sync):              ${v.toFixed(1)} µs`);
  line('inline_over_minimal', over(r.inline, r.minimal), (v) => `mint-token (sync, signing inline) / minimal, inline:    ${pct(v)}`);
  line('nosync_over_minimal', over(r.nosync, r.minimal), (v) => `mint-token (nosync) / minimal server signing inline:    ${pct(v)}`);
  line('real_over_sign', r.real && r.sign && r.real.rps / r.sign.node, (v) => `mint-token (sync) / signing ceiling of 1 core:         ${pct(v)}`);
  line('cpu_real_over_minimal', cpuMinimal && cpu(r.real) && (cpu(r.real) as number) / cpuMinimal, (v) => `server CPU per request, sync / minimal inline:          ${v.toFixed(2)}×`);
  line('cpu_inline_over_minimal', cpuMinimal && cpu(r.inline) && (cpu(r.inline) as number) / cpuMinimal, (v) => `server CPU per request, sync inline / minimal inline:   ${v.toFixed(2)}×`);
  const vsBaseline = baselinePairs(r.closedRounds);
  const baselineRounds = vsBaseline.pairs.map((p) => pct(p.ratio));
  line('real_over_baseline', vsBaseline.median?.ratio, (v) => `mint-token (sync) / the same at ${o.baseline?.ref}:   ${pct(v)}   (issue 22: ≥ 97%${baselineRounds.length > 1 ? `; the median of rounds ${baselineRounds.join(', ')}` : ''})`);
  line('cpu_real_over_baseline', vsBaseline.median && cpu(vsBaseline.median.under) && (cpu(vsBaseline.median.over) as number) / (cpu(vsBaseline.median.under) as number), (v) => `server CPU per request, current / baseline:             ${v.toFixed(3)}×`);
  line('signin_hook_over_signin', over(r.signInHook, r.signIn), (v) => `password sign-in with a hook / without:              ${pct(v)}`);
  line('node_over_jose', r.sign && r.sign.node / r.sign.jose, (v) => `node:crypto / jose signing:                             ${v.toFixed(2)}×`);
  line('open_p99_ms', realOpen && realOpen.latency.p99_us / 1000, (v) => `mint-token (sync) p99 at half its max rate:             ${v.toFixed(2)} ms   (issue 15: ≤ the minimal server's p99 + two durable commits' p99)`);
  line('open_nosync_p99_ms', nosyncOpen && nosyncOpen.latency.p99_us / 1000, (v) => `mint-token (nosync) p99 at the same rate:               ${v.toFixed(2)} ms`);
  line('open_minimal_p99_ms', minimalOpen && minimalOpen.latency.p99_us / 1000, (v) => `minimal server (inline) p99 at the same rate:           ${v.toFixed(2)} ms`);
  line('open_minimal_durable_p99_ms', durableOpen && durableOpen.latency.p99_us / 1000, (v) => `minimal, durable record, p99 at the same rate:          ${v.toFixed(2)} ms`);
  line('open_real_minus_minimal_durable_p99_ms', realOpen && durableOpen && (realOpen.latency.p99_us - durableOpen.latency.p99_us) / 1000, (v) => `mint-token (sync) p99 - minimal durable p99:            ${v.toFixed(2)} ms   (the tail of the service's own work)`);
  line('open_hello_p99_ms', helloOpen && helloOpen.latency.p99_us / 1000, (v) => `hello world p99 at the same rate (machine floor):       ${v.toFixed(2)} ms`);
  return ratios;
}

export async function main(argv: string[]): Promise<void> {
  const o = options(argv);
  if (!o) return console.log(USAGE);
  const env = environment();
  if (o.baselineRef !== undefined) o.baseline = checkoutBaseline(o.baselineRef);
  try {
    await runAll(o, env);
  } finally {
    o.baseline?.remove();
  }
}

async function runAll(o: Options, env: ReturnType<typeof environment>): Promise<void> {
  const runs: Record<string, { options: Options; results: Results; ratios: Record<string, number> }> = {};
  if (o.pin !== 'only') runs['unpinned'] = { options: o, ...(await measure(o)) };
  if (o.pin !== 'off') {
    // On one core the service's default is no signing thread (config.ts); the run uses what it would.
    const po: Options = { ...o, serverCores: SERVER_CORE, threads: o.threadsGiven ? o.threads : 0 };
    runs['pinned'] = { options: po, ...(await onGeneratorCore(() => measure(po))) };
  }
  console.log(`\n${environmentLine(env)}`);
  const json = (run: (typeof runs)[string]) => {
    const { baseline, ...options } = run.options;
    return { options: { ...options, only: [...options.only], ...(baseline ? { baseline: { ref: baseline.ref, commit: baseline.commit } } : {}) }, results: run.results, ratios: run.ratios };
  };
  // Unpinned keeps the shape earlier results have; the pinned run sits beside it.
  const { unpinned, pinned } = runs;
  const path = writeResults('mint', env, { ...(unpinned ? json(unpinned) : {}), ...(pinned ? { pinned: json(pinned) } : {}) });
  console.log(`figures: ${path}`);
}

/** One run of every part asked for, with the servers where o.serverCores says; prints its table and ratios. */
async function measure(o: Options): Promise<{ results: Results; ratios: Record<string, number> }> {
  const r: Results = { closedRounds: {}, openRounds: {} };
  const cores = o.serverCores === undefined ? {} : { cores: o.serverCores };
  const servers: ServerProcess[] = [];
  const started = async <S extends ServerProcess>(server: Promise<S>): Promise<S> => {
    const s = await server;
    servers.push(s);
    return s;
  };
  const service = (durability: 'sync' | 'nosync', threads: number, nodeArgs: string[] = [], env: Record<string, string> = {}, root?: string) =>
    started(startService({ SERVICE_TOKEN_ALG: o.alg, SERVICE_DURABILITY: durability, SERVICE_SIGNING_THREADS: String(threads), ...env }, { nodeArgs, ...cores, ...(root === undefined ? {} : { root }) }));
  const minimalServer = async (threads: number, durable?: Grouping): Promise<Target> => ({
    server: await started(startServer('bench/minimal-mint-server.ts', { env: { SERVICE_TOKEN_ALG: o.alg, SERVICE_SIGNING_THREADS: String(threads), ...(durable === undefined ? {} : { MINIMAL_DURABLE: durable }) }, ...cores })),
    requests: mintRequests(placeholders),
  });
  const serviceTarget = async (s: ServiceProcess): Promise<Target> => ({ server: s, requests: mintRequests(await createPersons(s, o.persons)) });
  // The person ids only shape the URL here: the minimal server reads no state.
  const placeholders = Array.from({ length: o.persons }, (_, i) => `01938f6e-7d3c-7000-8000-${String(i).padStart(12, '0')}`);
  /** Every open loop runs at one rate: --rate, or half the durable service's closed-loop rate. */
  const openRate = (r: Results) => Math.max(1, Math.round(o.rate ?? (r.real ?? r.minimalDurable ?? r.minimal ?? { rps: 2 }).rps / 2));
  const where = o.serverCores === undefined ? 'unpinned' : `servers on core ${o.serverCores}, generator on core ${GENERATOR_CORE}`;
  console.error(`mint benchmark (${where}): ${o.alg}, ${o.connections} connections, ${o.threads} signing threads, ${o.duration} s per run`);
  let profileDir: string | undefined;
  try {
    if (o.only.has('sign')) {
      const seconds = Math.min(o.duration, 3);
      console.error(`  sign only: ${seconds} s node:crypto, ${seconds} s jose`);
      r.sign = await signingCeiling(o.alg, seconds);
    }
    // Closed loops first. The servers measured again in the open loop stay up until then.
    const openTargets: Array<[OpenName, string, Target]> = [];
    /** the closed loops of the target ratios, run again in later rounds */
    const ratioTargets: Array<[RatioName, string, Target]> = [];
    if (o.only.has('hello')) {
      const hello = { server: await started(startServer('bench/hello-server.ts', cores)), requests: [encodeRequest('127.0.0.1', { method: 'GET', path: '/' })] };
      r.hello = await closed('hello world', hello, o);
      openTargets.push(['hello', 'hello world', hello]);
    }
    if (o.only.has('minimal')) {
      const minimal = await minimalServer(0);
      const label = 'minimal mint server, signing inline';
      r.closedRounds.minimal = [await closed(label, minimal, o)];
      ratioTargets.push(['minimal', label, minimal]);
      openTargets.push(['minimal', 'minimal mint server', minimal]);
    }
    if (o.only.has('minimal-durable')) {
      // Signing inline like the minimal server it is held against; batched as the service's actor batches
      // (gather), so that the floor gets the batching the service gets, not less.
      const durable = await minimalServer(0, 'gather');
      const label = 'minimal mint server, signing inline, a durable record per token';
      r.closedRounds.minimalDurable = [await closed(label, durable, o)];
      ratioTargets.push(['minimalDurable', label, durable]);
      openTargets.push(['minimalDurable', 'minimal mint server, durable record', durable]);
    }
    if (o.only.has('minimal-threads') && o.threads > 0) {
      const threaded = await minimalServer(o.threads);
      r.minimalThreads = await closed('minimal mint server, signing threads', threaded, o);
      await threaded.server.stop();
    }
    if (o.only.has('real')) {
      if (o.profile) mkdirSync((profileDir = join(root, 'bench/results/profiles')), { recursive: true });
      const real = await serviceTarget(await service('sync', o.threads, profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]));
      const label = 'mint-token, sync';
      r.closedRounds.real = [await closed(label, real, o)];
      ratioTargets.push(['real', label, real]);
      openTargets.push(['real', 'mint-token, sync', real]);
      if (o.baseline) {
        const baseline = await serviceTarget(await service('sync', o.threads, [], {}, o.baseline.root));
        const baseLabel = `mint-token, sync, at ${o.baseline.ref}`;
        r.closedRounds.baseline = [await closed(baseLabel, baseline, o)];
        ratioTargets.push(['baseline', baseLabel, baseline]);
      }
    }
    if (o.only.has('inline') && o.threads > 0) {
      const inline = await serviceTarget(await service('sync', 0));
      r.inline = await closed('mint-token, sync, signing inline', inline, o);
      await inline.server.stop();
    }
    if (o.only.has('nosync')) {
      const nosync = await serviceTarget(await service('nosync', o.threads));
      r.nosync = await closed('mint-token, nosync', nosync, o);
      openTargets.push(['nosync', 'mint-token, nosync', nosync]);
    }
    // More rounds of the closed loops of the target ratios, in turn, so that each compares runs made one
    // after the other; the table shows the round with the median ratio.
    for (let round = 2; round <= o.rounds; round++) {
      for (const [name, label, target] of ratioTargets) r.closedRounds[name]?.push(await closed(`${label} (round ${round} of ${o.rounds})`, target, o));
    }
    Object.assign(r, medianRounds(r.closedRounds));
    const vsBaseline = baselinePairs(r.closedRounds).median;
    if (vsBaseline) r.baseline = vsBaseline.under;
    // Then every one of them at the same fixed rate, in turn, round after round: the machine's tail moves
    // from minute to minute, and taking turns spreads that over all of them alike. Hello world is the floor
    // of the machine's loopback and scheduler; the minimal server that of HTTP plus signing; the minimal durable
    // one that of HTTP, signing and a durable commit; without fsync, the difference to the real service is what
    // the disk adds.
    const rate = openRate(r);
    for (let round = 1; round <= o.rounds; round++) {
      for (const [name, label, target] of openTargets) (r.openRounds[name] ??= []).push(await open(`${label} (round ${round} of ${o.rounds})`, target, o, rate));
    }
    for (const [, , target] of openTargets) await target.server.stop();
    // Password sign-in, then the same with a token_minted hook: the seed's sample receiver on loopback,
    // verifying every call, answers a claim, and a token is checked for it before the measured run.
    if (o.only.has('signin')) {
      const svc = await service('sync', o.threads, [], { SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
      const target = { server: svc, requests: await signInRequests(svc, await createPersons(svc, o.persons)) };
      const so = { ...o, connections: signInConnections(o) };
      r.signIn = await closed('password sign-in', target, so);
      const receiver = await startReceiver({ serviceUrl: svc.url, orgId: ORG_ID, claims: () => ({ plan: 'pro' }) });
      try {
        await addTokenMintedHook(svc, receiver.url, ['plan', 'pro']);
        r.signInHook = await closed('password sign-in with a token_minted hook', target, so);
      } finally {
        await receiver.close();
        await svc.stop();
      }
    }
    if (o.only.has('disk')) {
      console.error(`  disk: ${o.duration} s of durable WAL commits, one at a time`);
      r.disk = await durableCommitLatency(o.duration);
    }

    const ratios = report(o, r);
    if (profileDir) console.log(`CPU profile of the real service: ${profileDir} (npm run bench -- profile-summary <file>)`);
    return { results: r, ratios };
  } finally {
    for (const s of servers) await s.stop();
  }
}

runIfMain(import.meta.url, main);
