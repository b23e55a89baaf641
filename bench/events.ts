// Event fan-out: persons created as fast as possible over HTTP while 0, 1, 10 and 100 WebSocket subscribers
// receive the PersonCreated events; events per second delivered and latency from stamp to receipt.
// The service runs as a child process (src/main.ts, durable commits); writers and subscribers run here.
//   npm run bench -- events [--duration 2] [--warmup 2] [--writers 32] [--subscribers 0,1,10,100]
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { numberFlag, runIfMain } from './lib/cli.js';
import { encodeRequest } from './lib/connection.js';
import { Histogram } from './lib/histogram.js';
import { runLoad } from './lib/load.js';
import { environment, environmentLine, formatTable, ms, writeResults, type Column } from './lib/report.js';
import { startService, type ServiceProcess } from './lib/server-process.js';

const USAGE = `usage: npm run bench -- events [options]   (or: npx tsx bench/events.ts [options])
  --duration S        seconds of writing per phase (default 2; a bare number is the same)
  --warmup S          unmeasured phase with one subscriber before the others (default 2)
  --writers N         HTTP connections creating persons, one request in flight on each (default 32)
  --subscribers LIST  subscriber counts, one phase each (default 0,1,10,100)`;

interface Settings {
  seconds: number;
  warmup: number;
  writers: number;
  phases: number[];
}

const now = () => performance.timeOrigin + performance.now();

/** Milliseconds since the epoch of an RFC 3339 UTC timestamp with up to nine fraction digits. */
function epochMs(ts: string): number {
  const dot = ts.indexOf('.', 19);
  const whole = Date.parse(`${ts.slice(0, 19)}Z`);
  return dot < 0 ? whole : whole + Number(`0${ts.slice(dot, -1)}`) * 1000;
}

interface Sub {
  socket: WebSocket;
  received: number;
  lastOffset: number;
  gaps: number;
}

/** Subscribers read the offset and timestamp without parsing the whole frame, to keep the client side cheap. */
async function subscribe(service: ServiceProcess, latency: Histogram, sampleEvery: number): Promise<Sub> {
  const socket = new WebSocket(`${service.url.replace(/^http/, 'ws')}/events?types=PersonCreated_v1`, { headers: service.auth });
  const sub: Sub = { socket, received: 0, lastOffset: 0, gaps: 0 };
  socket.on('message', (data: Buffer) => {
    const text = data.toString('latin1');
    const offset = Number(text.slice(10, text.indexOf(',', 10)));
    if (sub.lastOffset !== 0 && offset !== sub.lastOffset + 1) sub.gaps++;
    sub.lastOffset = offset;
    if (sub.received++ % sampleEvery === 0) {
      const at = text.indexOf('"timestamp":"') + 13;
      latency.record((now() - epochMs(text.slice(at, text.indexOf('"', at)))) * 1000);
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return sub;
}

const msOrDash = (v: number | null) => ms(v === null ? undefined : v * 1000);

interface Row {
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
  created: number;
  failed: number;
  latency_samples: number;
}

async function phase(service: ServiceProcess, tag: number, subscribers: number, seconds: number, writers: number): Promise<Row> {
  const latency = new Histogram();
  const subs = await Promise.all(Array.from({ length: subscribers }, () => subscribe(service, latency, Math.max(1, subscribers))));
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
  // Let the subscribers drain what is in flight (at most 10 s).
  const drainUntil = now() + 10_000;
  while (subs.some((s) => s.received < created) && now() < drainUntil) await new Promise((r) => setTimeout(r, 20));
  const deliverSeconds = (now() - started) / 1000;
  const delivered = subs.reduce((n, s) => n + s.received, 0);
  await Promise.all(subs.map((s) => new Promise<void>((resolve) => (s.socket.once('close', () => resolve()), s.socket.close()))));
  const l = latency.summary();
  return {
    subscribers,
    persons_per_s: Math.round(created / (writes.elapsedMs / 1000)),
    delivered_events_per_s: Math.round(delivered / deliverSeconds),
    per_subscriber_events_per_s: subscribers === 0 ? 0 : Math.round(delivered / subscribers / deliverSeconds),
    p50_ms: l.count ? l.p50_us / 1000 : null,
    p99_ms: l.count ? l.p99_us / 1000 : null,
    max_ms: l.count ? l.max_us / 1000 : null,
    complete: subs.every((s) => s.received === created && s.gaps === 0),
    server_cpu_us_per_person: writes.serverCpuUsPerRequest ?? null,
    created,
    failed: writes.requests - created,
    latency_samples: l.count,
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
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  return {
    seconds: numberFlag('duration', values.duration ?? positionals[0] ?? '2', 0.1, USAGE),
    warmup: numberFlag('warmup', values.warmup, 0, USAGE),
    writers: Math.floor(numberFlag('writers', values.writers, 1, USAGE)),
    phases: values.subscribers.split(',').map((n) => Math.floor(numberFlag('subscribers', n, 0, USAGE))),
  };
}

export async function main(argv: string[]): Promise<void> {
  const s = settings(argv);
  if (!s) return console.log(USAGE);
  const env = environment();
  const service = await startService();
  const rows: Row[] = [];
  try {
    // The first seconds of a fresh process (JIT, compile caches, LMDB growth) are not measured.
    if (s.warmup > 0) await phase(service, 0, 1, s.warmup, s.writers);
    for (const [i, n] of s.phases.entries()) {
      rows.push(await phase(service, i + 1, n, s.seconds, s.writers));
      console.error(`  ${n} subscriber(s): done`);
    }
  } finally {
    await service.stop();
  }

  const columns: Column<Row>[] = [
    { title: 'subscribers', value: (r) => r.subscribers },
    { title: 'persons_per_s', value: (r) => r.persons_per_s },
    { title: 'delivered_events_per_s', value: (r) => r.delivered_events_per_s },
    { title: 'per_subscriber_events_per_s', value: (r) => r.per_subscriber_events_per_s },
    { title: 'p50_ms', value: (r) => msOrDash(r.p50_ms), align: 'right' },
    { title: 'p99_ms', value: (r) => msOrDash(r.p99_ms), align: 'right' },
    { title: 'max_ms', value: (r) => msOrDash(r.max_ms), align: 'right' },
    { title: 'server_cpu_us_per_person', value: (r) => r.server_cpu_us_per_person ?? '-' },
    { title: 'complete', value: (r) => String(r.complete) },
  ];
  console.log(`event fan-out: ${s.writers} HTTP writers creating persons for ${s.seconds} s per phase; latency = event timestamp (stamped as its batch is decided, before the durable commit) to receipt`);
  console.log(formatTable(columns, rows));
  console.log(`\n${environmentLine(env)}`);
  console.log(`written to ${writeResults('events', env, { settings: s, durability: 'sync', rows })}`);
}

runIfMain(import.meta.url, main);
