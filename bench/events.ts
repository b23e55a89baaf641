// Event fan-out: persons created as fast as possible over HTTP while 0, 1, 10 and 100 WebSocket subscribers
// receive the PersonCreated events; events per second delivered and latency from stamp to receipt.
// The service runs as a child process (src/main.ts, durable commits); the writers run here, the subscribers in a child of their own.
// Beside it, taking turns phase by phase, the floor: bench/minimal-fanout-server.ts (uWS + one durable LMDB put + one publish),
// and for each server the rate with N subscribers over the rate with none, and the service's ratio over the floor's.
// With --pin the whole run is made twice: as is, then with each server confined to core 0 and the writers and
// subscribers to core 1 (taskset), the way operators measure it (bench/mint.ts does the same).
//   npm run bench -- events [--duration 2] [--warmup 2] [--writers 32] [--subscribers 0,1,10,100] [--server both|service|minimal] [--pin|--pin-only] [--syscalls]
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { numberFlag, runIfMain } from './lib/cli.js';
import { encodeRequest } from './lib/connection.js';
import { Histogram } from './lib/histogram.js';
import { runLoad } from './lib/load.js';
import { environment, environmentLine, formatTable, ms, pct, writeResults, type Column } from './lib/report.js';
import { SERVICE_AUTH, startServer, startService } from './lib/server-process.js';
import { startSubscribers, type Subscribers } from './lib/subscriber-process.js';
import { GENERATOR_CORE, onGeneratorCore, SERVER_CORE } from './lib/pin.js';
import { cpuSplit } from './lib/process-cpu.js';
import { countSyscalls } from './lib/syscall-count.js';

const USAGE = `usage: npm run bench -- events [options]   (or: npx tsx bench/events.ts [options])
  --duration S        seconds of writing per phase (default 2; a bare number is the same)
  --warmup S          unmeasured phase with one subscriber before the others (default 2)
  --writers N         HTTP connections creating persons, one request in flight on each (default 32)
  --subscribers LIST  subscriber counts, one phase each (default 0,1,10,100)
  --server WHICH      both (default): each phase runs against the service, then against the minimal fan-out server
                      (bench/minimal-fanout-server.ts), the floor of the ratio on this machine; or service, or minimal
  --profile           write a CPU profile of the service to bench/results/profiles/ (npm run bench -- profile-summary <file>)
  --pin               run everything twice: unpinned, then pinned (each server confined to core ${SERVER_CORE} from its start,
                      the writers and the subscribers' process to core ${GENERATOR_CORE}, with taskset); the tables for both
                      and each server's vs_none unpinned beside pinned
  --pin-only          only the pinned run
  --syscalls          count each server's sendto and fdatasync calls in every phase with perf stat (needs perf):
                      socket writes per subscriber per durable commit, frames per write, and the share of the
                      server's CPU spent in the kernel`;

type ServerName = 'service' | 'minimal';
const SERVERS: Record<string, ServerName[]> = { both: ['service', 'minimal'], service: ['service'], minimal: ['minimal'] };

interface Settings {
  seconds: number;
  warmup: number;
  writers: number;
  phases: number[];
  servers: ServerName[];
  profile: boolean;
  /** --pin: unpinned, then pinned; --pin-only: pinned alone */
  pin: 'off' | 'both' | 'only';
  /** count the server's socket writes and durable commits in each phase (perf stat) */
  syscalls: boolean;
}

/** One whole run's rows (phase by phase, the servers in turn) and the service-over-floor comparisons. */
interface Run {
  rows: Row[];
  comparisons: Comparison[];
}

/** A server under test: where to write and subscribe, and the headers that let the writers in. */
interface Target {
  name: ServerName;
  url: string;
  pid: number;
  auth: Record<string, string>;
  stop(): Promise<void>;
}

const now = () => performance.timeOrigin + performance.now();

const msOrDash = (v: number | null) => ms(v === null ? undefined : v * 1000);

interface Row {
  server: ServerName;
  subscribers: number;
  persons_per_s: number;
  delivered_events_per_s: number;
  per_subscriber_events_per_s: number;
  p50_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  complete: boolean;
  /** the service's CPU time per person created, fan-out included: steadier than rates on a shared machine */
  server_cpu_us_per_person: number | null;
  /** CPU time of the writers' load generator and of the subscribers' process, each as % of one core */
  writer_cpu_percent: number;
  subscriber_cpu_percent: number | null;
  /** bytes the subscribers read per frame, WebSocket header included */
  bytes_per_frame: number | null;
  created: number;
  failed: number;
  latency_samples: number;
  /** persons_per_s over the same server's nearest phase with no subscribers (the one before, else the one after) */
  vs_none: number | null;
  /**
   * the same phase's server CPU per person with none over this one's: what vs_none would be if the server's own CPU
   * bounded the rate; steadier than vs_none on a shared machine, blind to what the subscribers' reading takes from the writers
   */
  cpu_vs_none: number | null;
  /** --syscalls: the server's fdatasync calls in the phase, one per durable commit */
  fsyncs: number | null;
  /** --syscalls: socket writes (sendto) to the subscribers per subscriber per durable commit; docs/benchmarks.md promises one */
  writes_per_socket_per_fsync: number | null;
  /** --syscalls: frames per socket write to a subscriber */
  frames_per_write: number | null;
  /** --syscalls: socket writes that failed (EAGAIN: the subscriber's kernel buffer was full, uWS keeps the frames) */
  failed_writes: number | null;
  /** --syscalls: the share of the server's CPU time spent in the kernel (loopback TCP for the subscribers included) */
  server_kernel_share: number | null;
}

/** One phase with subscribers, both servers: the service's ratio to none over the floor's. */
interface Comparison {
  phase: number;
  subscribers: number;
  service_vs_none: number | null;
  minimal_vs_none: number | null;
  service_vs_floor: number | null;
  service_cpu_vs_none: number | null;
  minimal_cpu_vs_none: number | null;
}

async function phase(service: Target, subscribers: Subscribers, tag: number, count: number, seconds: number, writers: number, syscalls = false): Promise<Row> {
  const { hostname, port } = new URL(service.url);
  if (count > 0) await subscribers.open({ host: hostname, port: Number(port), path: '/events?types=PersonCreated_v1', headers: service.auth, count });
  const counter = syscalls ? await countSyscalls(service.pid, ['sendto', 'fdatasync'], ['sendto']) : undefined;
  const cpuBefore = syscalls ? cpuSplit(service.pid) : undefined;
  const headers = { ...service.auth, 'Content-Type': 'application/json' };
  const started = now();
  const writes = await runLoad({
    url: service.url,
    connections: writers,
    durationMs: seconds * 1000,
    serverPid: service.pid,
    ok: (status) => status === 201,
    request: (i) => encodeRequest('127.0.0.1', { method: 'POST', path: '/persons', headers, body: JSON.stringify({ handles: [{ type: 'email_address', value: `p${tag}-${i}@example.com` }] }) }),
  });
  const created = writes.statuses['201'] ?? 0;
  // The subscribers drain what is in flight (at most 10 s).
  const counts = count > 0 ? await subscribers.finish(created, 10_000) : undefined;
  const calls = await counter?.stop();
  const cpuAfter = cpuBefore ? cpuSplit(service.pid) : undefined;
  const kernel = cpuBefore && cpuAfter ? (cpuAfter.system - cpuBefore.system) / Math.max(1e-9, cpuAfter.system - cpuBefore.system + cpuAfter.user - cpuBefore.user) : null;
  const deliverSeconds = (now() - started) / 1000;
  const delivered = counts ? counts.received.reduce((n, r) => n + r, 0) : 0;
  const latency = new Histogram();
  for (const us of counts?.latencyUs ?? []) latency.record(us);
  if (counts?.errors.length) console.error(`  ${counts.errors.length} subscriber(s) failed: ${counts.errors[0]}`);
  const l = latency.summary();
  return {
    server: service.name,
    subscribers: count,
    persons_per_s: Math.round(created / (writes.elapsedMs / 1000)),
    delivered_events_per_s: Math.round(delivered / deliverSeconds),
    per_subscriber_events_per_s: count === 0 ? 0 : Math.round(delivered / count / deliverSeconds),
    p50_ms: l.count ? l.p50_us / 1000 : null,
    p99_ms: l.count ? l.p99_us / 1000 : null,
    max_ms: l.count ? l.max_us / 1000 : null,
    complete: !counts || (counts.received.every((r) => r === created) && counts.gaps === 0 && counts.errors.length === 0),
    server_cpu_us_per_person: writes.serverCpuUsPerRequest ?? null,
    writer_cpu_percent: writes.clientCpuPercent,
    subscriber_cpu_percent: counts ? counts.cpuPercent : null,
    bytes_per_frame: delivered === 0 ? null : Math.round((counts?.bytes ?? 0) / delivered),
    created,
    failed: writes.requests - created,
    latency_samples: l.count,
    vs_none: null,
    cpu_vs_none: null,
    ...writesPerSocket(calls, writes.requests, count, delivered),
    server_kernel_share: kernel === null ? null : Math.round(kernel * 1000) / 1000,
  };
}

/**
 * The subscribers' share of the server's socket writes: every sendto but the one answer per request (uWS writes
 * an HTTP answer in one call), spread over the sockets and the durable commits (one fdatasync each).
 */
function writesPerSocket(calls: Record<string, number> | undefined, answers: number, subscribers: number, delivered: number): Pick<Row, 'fsyncs' | 'writes_per_socket_per_fsync' | 'frames_per_write' | 'failed_writes'> {
  if (!calls) return { fsyncs: null, writes_per_socket_per_fsync: null, frames_per_write: null, failed_writes: null };
  const fsyncs = calls['fdatasync'] ?? 0;
  const frameWrites = Math.max(0, (calls['sendto'] ?? 0) - answers);
  return {
    fsyncs,
    writes_per_socket_per_fsync: subscribers === 0 || fsyncs === 0 ? null : Math.round((frameWrites / subscribers / fsyncs) * 100) / 100,
    frames_per_write: subscribers === 0 || frameWrites === 0 ? null : Math.round((delivered / frameWrites) * 10) / 10,
    failed_writes: calls['failed:sendto'] ?? 0,
  };
}

function settings(argv: string[]): Settings | undefined {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string', default: '2' },
      writers: { type: 'string', default: '32' },
      subscribers: { type: 'string', default: '0,1,10,100' },
      server: { type: 'string', default: 'both' },
      profile: { type: 'boolean', default: false },
      pin: { type: 'boolean', default: false },
      'pin-only': { type: 'boolean', default: false },
      syscalls: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  const servers = SERVERS[values.server];
  if (!servers) throw new Error(`--server must be both, service or minimal, got "${values.server}"\n${USAGE}`);
  return {
    seconds: numberFlag('duration', values.duration ?? positionals[0] ?? '2', 0.1, USAGE),
    warmup: numberFlag('warmup', values.warmup, 0, USAGE),
    writers: Math.floor(numberFlag('writers', values.writers, 1, USAGE)),
    phases: values.subscribers.split(',').map((n) => Math.floor(numberFlag('subscribers', n, 0, USAGE))),
    servers,
    profile: values.profile,
    pin: values['pin-only'] ? 'only' : values.pin ? 'both' : 'off',
    syscalls: values.syscalls,
  };
}

/** Each row with subscribers over the same server's nearest row without (rows[i] is phase i of that server). */
function ratios(rows: Row[]): void {
  for (const [i, r] of rows.entries()) {
    if (r.subscribers === 0) continue;
    let base: Row | undefined;
    for (let j = i - 1; j >= 0 && !base; j--) if ((rows[j] as Row).subscribers === 0) base = rows[j];
    for (let j = i + 1; j < rows.length && !base; j++) if ((rows[j] as Row).subscribers === 0) base = rows[j];
    r.vs_none = base && base.persons_per_s > 0 ? r.persons_per_s / base.persons_per_s : null;
    const cpu = r.server_cpu_us_per_person;
    r.cpu_vs_none = base?.server_cpu_us_per_person && cpu ? base.server_cpu_us_per_person / cpu : null;
  }
}


async function start(name: ServerName, profileDir: string | undefined, cores: string | undefined): Promise<Target> {
  const where = cores === undefined ? {} : { cores };
  if (name === 'service') {
    const service = await startService({}, { ...where, ...(profileDir === undefined ? {} : { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] }) });
    return { name, url: service.url, pid: service.pid, auth: service.auth, stop: () => service.stop() };
  }
  // The floor reads no credentials; it is sent the service's all the same, so the requests are the same bytes.
  const server = await startServer('bench/minimal-fanout-server.ts', where);
  return { name, url: server.url, pid: server.pid, auth: { ...SERVICE_AUTH }, stop: () => server.stop() };
}

/** One whole run: every phase against every server, started where `cores` says (absent: unpinned). */
async function measure(s: Settings, cores: string | undefined, profileDir: string | undefined): Promise<Run> {
  const targets: Target[] = [];
  // Forked here, after the caller pinned this process: a pinned run's subscribers share the generator's core.
  const subscribers = startSubscribers();
  const rows = new Map<ServerName, Row[]>(s.servers.map((name) => [name, []]));
  try {
    for (const name of s.servers) targets.push(await start(name, name === 'service' ? profileDir : undefined, cores));
    // The first seconds of a fresh process (JIT, compile caches, LMDB growth) are not measured.
    if (s.warmup > 0) for (const target of targets) await phase(target, subscribers, 0, 1, s.warmup, s.writers);
    // The servers take turns phase by phase, so a change in the machine's load falls on both alike.
    for (const [i, n] of s.phases.entries()) {
      for (const target of targets) {
        rows.get(target.name)?.push(await phase(target, subscribers, i + 1, n, s.seconds, s.writers, s.syscalls));
        console.error(`  ${cores === undefined ? '' : 'pinned, '}${target.name}, ${n} subscriber(s): done`);
      }
    }
  } finally {
    await subscribers.stop();
    for (const target of targets) await target.stop();
  }
  for (const r of rows.values()) ratios(r);
  const service = rows.get('service');
  const minimal = rows.get('minimal');
  const comparisons: Comparison[] = [];
  if (service && minimal) {
    for (const [i, r] of service.entries()) {
      const floor = minimal[i] as Row;
      if (r.subscribers === 0) continue;
      const vsFloor = r.vs_none !== null && floor.vs_none !== null && floor.vs_none > 0 ? r.vs_none / floor.vs_none : null;
      comparisons.push({ phase: i + 1, subscribers: r.subscribers, service_vs_none: r.vs_none, minimal_vs_none: floor.vs_none, service_vs_floor: vsFloor, service_cpu_vs_none: r.cpu_vs_none, minimal_cpu_vs_none: floor.cpu_vs_none });
    }
  }
  return { rows: s.phases.flatMap((_, i) => s.servers.map((name) => rows.get(name)?.[i] as Row)), comparisons };
}

function print(s: Settings, run: Run, cores: string | undefined): void {
  const columns: Column<Row>[] = [
    { title: 'server', value: (r) => r.server },
    { title: 'subscribers', value: (r) => r.subscribers },
    { title: 'persons_per_s', value: (r) => r.persons_per_s },
    { title: 'vs_none', value: (r) => pct(r.vs_none), align: 'right' },
    { title: 'delivered_events_per_s', value: (r) => r.delivered_events_per_s },
    { title: 'per_subscriber_events_per_s', value: (r) => r.per_subscriber_events_per_s },
    { title: 'p50_ms', value: (r) => msOrDash(r.p50_ms), align: 'right' },
    { title: 'p99_ms', value: (r) => msOrDash(r.p99_ms), align: 'right' },
    { title: 'max_ms', value: (r) => msOrDash(r.max_ms), align: 'right' },
    { title: 'server_cpu_us_per_person', value: (r) => r.server_cpu_us_per_person ?? '-' },
    { title: 'writer_cpu_%', value: (r) => r.writer_cpu_percent },
    { title: 'subscriber_cpu_%', value: (r) => r.subscriber_cpu_percent ?? '-' },
    { title: 'complete', value: (r) => String(r.complete) },
    ...(s.syscalls
      ? ([
          { title: 'fsyncs', value: (r) => r.fsyncs ?? '-' },
          { title: 'writes/socket/fsync', value: (r) => r.writes_per_socket_per_fsync ?? '-' },
          { title: 'frames/write', value: (r) => r.frames_per_write ?? '-' },
          { title: 'failed_writes', value: (r) => r.failed_writes ?? '-' },
          { title: 'server_kernel_%', value: (r) => pct(r.server_kernel_share), align: 'right' },
        ] satisfies Column<Row>[])
      : []),
  ];
  const where = cores === undefined ? 'unpinned' : `pinned: each server on core ${cores}, the writers and the subscribers on core ${GENERATOR_CORE}`;
  console.log(`\nevent fan-out (${where}): ${s.writers} HTTP writers creating persons for ${s.seconds} s per phase; latency = event timestamp (stamped as its batch is decided, before the durable commit) to receipt`);
  console.log('subscribers: one process of their own for all of them, each a raw WebSocket client that reads every frame in full, counts it and checks its offset, and decodes the text of one frame in N (N subscribers) for the latency sample');
  if (s.servers.includes('minimal')) console.log(`servers: service = src/main.ts; minimal = bench/minimal-fanout-server.ts (one durable LMDB put of the same size, one publish of a frame of the same size, nothing else), the floor on this machine${s.servers.includes('service') ? '; they take turns phase by phase' : ''}`);
  console.log(formatTable(columns, run.rows));
  if (s.syscalls) {
    console.log(
      'syscalls (perf stat): fsyncs = durable commits; writes/socket/fsync = sendto to the subscribers (all but one per HTTP answer) per subscriber per commit; ' +
        'uWS writes a socket\'s frames of one loop turn together but its cork buffer holds 16 KB (about 28 of these frames), so a larger commit takes two writes; ' +
        'failed_writes = sendto refused (EAGAIN), after which uWS retries once per frame',
    );
  }
  if (run.comparisons.length > 0) {
    console.log('\nvs_none: persons/s with the subscribers over the same server\'s nearest phase with none; vs_floor: the service\'s vs_none over the minimal server\'s; cpu_vs_none: server CPU µs per person with none over with the subscribers (what vs_none would be if the server\'s CPU alone bounded the rate; steadier on a shared machine)');
    console.log(formatTable(comparisonColumns, run.comparisons));
  }
}

const comparisonColumns: Column<Comparison>[] = [
  { title: 'phase', value: (c) => c.phase },
  { title: 'subscribers', value: (c) => c.subscribers },
  { title: 'service_vs_none', value: (c) => pct(c.service_vs_none), align: 'right' },
  { title: 'minimal_vs_none', value: (c) => pct(c.minimal_vs_none), align: 'right' },
  { title: 'service_vs_floor', value: (c) => pct(c.service_vs_floor), align: 'right' },
  { title: 'service_cpu_vs_none', value: (c) => pct(c.service_cpu_vs_none), align: 'right' },
  { title: 'minimal_cpu_vs_none', value: (c) => pct(c.minimal_cpu_vs_none), align: 'right' },
];

/** Each server's vs_none, phase by phase, unpinned beside pinned: the one table that answers --pin. */
function printSideBySide(s: Settings, unpinned: Run, pinned: Run): void {
  // Rows are phase by phase, the servers in turn within each.
  const rows = unpinned.rows.flatMap((u, i) => {
    const p = pinned.rows[i];
    return u.subscribers === 0 || !p ? [] : [{ u, p, phase: Math.floor(i / s.servers.length) + 1 }];
  });
  console.log('\npersons/s with the subscribers over with none, unpinned and pinned (same phases, same run)');
  console.log(
    formatTable(
      [
        { title: 'phase', value: (r) => r.phase },
        { title: 'server', value: (r) => r.u.server },
        { title: 'subscribers', value: (r) => r.u.subscribers },
        { title: 'unpinned_vs_none', value: (r) => pct(r.u.vs_none), align: 'right' },
        { title: 'pinned_vs_none', value: (r) => pct(r.p.vs_none), align: 'right' },
        { title: 'unpinned_cpu_vs_none', value: (r) => pct(r.u.cpu_vs_none), align: 'right' },
        { title: 'pinned_cpu_vs_none', value: (r) => pct(r.p.cpu_vs_none), align: 'right' },
        { title: 'unpinned_p99_ms', value: (r) => msOrDash(r.u.p99_ms), align: 'right' },
        { title: 'pinned_p99_ms', value: (r) => msOrDash(r.p.p99_ms), align: 'right' },
      ] satisfies Column<{ u: Row; p: Row; phase: number }>[],
      rows,
    ),
  );
}

export async function main(argv: string[]): Promise<void> {
  const s = settings(argv);
  if (!s) return console.log(USAGE);
  const env = environment();
  const profileDir = s.profile ? join(fileURLToPath(new URL('..', import.meta.url)), 'bench/results/profiles') : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  let unpinned: Run | undefined;
  let pinned: Run | undefined;
  if (s.pin !== 'only') {
    unpinned = await measure(s, undefined, profileDir);
    print(s, unpinned, undefined);
  }
  if (s.pin !== 'off') {
    pinned = await onGeneratorCore(() => measure(s, SERVER_CORE, profileDir));
    print(s, pinned, SERVER_CORE);
  }
  if (unpinned && pinned) printSideBySide(s, unpinned, pinned);
  console.log(`\n${environmentLine(env)}`);
  if (profileDir) console.log(`CPU profile of the service: ${profileDir} (npm run bench -- profile-summary <file>)`);
  // Unpinned keeps the shape earlier results have; the pinned run sits beside it.
  const written = writeResults('events', env, { settings: s, durability: 'sync', ...(unpinned ?? {}), ...(pinned ? { pinned } : {}) });
  console.log(`written to ${written}`);
}

runIfMain(import.meta.url, main);
