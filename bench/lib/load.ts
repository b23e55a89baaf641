// The load generator: N keep-alive connections over loopback, in a closed loop (each connection sends its next
// request when the last answer arrives) or an open loop at a fixed rate (requests are due on a schedule whatever
// the answers do; latency counts from when a request was due, so a stalled server is not hidden by a stalled
// client, i.e. no coordinated omission). Latency goes into a Histogram; only the measured window counts.
import { Connection } from './connection.js';
import { Histogram, type LatencySummary } from './histogram.js';

export interface LoadOptions {
  url: string;
  /** the bytes of request number i (see encodeRequest); called once per request */
  request(i: number): Buffer;
  connections: number;
  durationMs: number;
  /** load before the measured window starts, not recorded */
  warmupMs?: number;
  /** requests per second for the open loop; absent: closed loop */
  rate?: number;
  /** statuses that count as success; anything else is an error */
  ok?(status: number): boolean;
  /** called when the measured window opens and closes, e.g. to read the server's CPU time */
  onWindow?(phase: 'start' | 'end'): void;
}

export interface LoadResult {
  mode: 'closed' | 'open';
  connections: number;
  /** the asked rate of an open loop */
  rate?: number;
  durationMs: number;
  requests: number;
  rps: number;
  errors: number;
  statuses: Record<string, number>;
  /** error messages seen (first few), for the report */
  failures: string[];
  latency: LatencySummary;
  /** open loop: the most requests that waited for a free connection at once */
  maxBacklog?: number;
  /** CPU time the load generator used over the measured window, as % of one core */
  clientCpuPercent: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const url = new URL(options.url);
  const ok = options.ok ?? ((s: number) => s >= 200 && s < 300);
  const conns = await Promise.all(
    Array.from({ length: options.connections }, async () => {
      const c = new Connection(url.hostname, Number(url.port));
      await c.ready;
      return c;
    }),
  );

  const histogram = new Histogram();
  const statuses: Record<string, number> = {};
  const failures: string[] = [];
  let requests = 0;
  let errors = 0;
  let seq = 0;
  const start = performance.now();
  const measureFrom = start + (options.warmupMs ?? 0);
  const measureTo = measureFrom + options.durationMs;
  let cpuAtStart: NodeJS.CpuUsage | undefined;
  const opening = setTimeout(() => {
    cpuAtStart = process.cpuUsage();
    options.onWindow?.('start');
  }, options.warmupMs ?? 0);

  /** One request on one connection; `due` is when it should have been sent (open loop) or was sent. */
  async function one(conn: Connection, due: number): Promise<void> {
    let status: number | string;
    try {
      status = await conn.send(options.request(seq++));
    } catch (error) {
      status = 'socket error';
      if (failures.length < 5) failures.push((error as Error).message);
    }
    const done = performance.now();
    if (due < measureFrom || done > measureTo) return;
    requests++;
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (typeof status === 'number' && ok(status)) histogram.record((done - due) * 1000);
    else errors++;
  }

  let maxBacklog: number | undefined;
  if (options.rate === undefined) {
    await Promise.all(
      conns.map(async (conn) => {
        while (performance.now() < measureTo && !conn.broken) await one(conn, performance.now());
      }),
    );
  } else {
    maxBacklog = await openLoop(conns, options.rate, start, measureTo, one);
  }
  const cpu = process.cpuUsage(cpuAtStart);
  options.onWindow?.('end');
  clearTimeout(opening);
  for (const c of conns) c.close();

  const seconds = options.durationMs / 1000;
  const result: LoadResult = {
    mode: options.rate === undefined ? 'closed' : 'open',
    connections: options.connections,
    durationMs: options.durationMs,
    requests,
    rps: Math.round(requests / seconds),
    errors,
    statuses,
    failures,
    latency: histogram.summary(),
    clientCpuPercent: Math.round(((cpu.user + cpu.system) / 1000 / options.durationMs) * 100),
  };
  if (options.rate !== undefined) result.rate = options.rate;
  if (maxBacklog !== undefined) result.maxBacklog = maxBacklog;
  return result;
}

/**
 * Issues requests on schedule: request k is due at start + k / rate, sent on the next free connection.
 * The schedule is checked on a 1 ms timer, so a request may leave up to ~1 ms after it was due and that delay
 * counts in its latency: open-loop figures below a millisecond or two carry this bias (a busy loop would
 * remove it, at the price of a load generator that always shows 100% CPU).
 */
async function openLoop(conns: Connection[], rate: number, start: number, end: number, one: (c: Connection, due: number) => Promise<void>): Promise<number> {
  const idle = [...conns];
  const backlog: number[] = [];
  let maxBacklog = 0;
  let issued = 0;
  const inFlight = new Set<Promise<void>>();
  const dispatch = () => {
    while (idle.length > 0 && backlog.length > 0) {
      const conn = idle.pop() as Connection;
      if (conn.broken) continue;
      const due = backlog.shift() as number;
      const p = one(conn, due).then(() => {
        inFlight.delete(p);
        idle.push(conn);
        dispatch();
      });
      inFlight.add(p);
    }
  };
  while (performance.now() < end) {
    const now = performance.now();
    const dueCount = Math.floor(((Math.min(now, end) - start) * rate) / 1000);
    for (; issued < dueCount; issued++) backlog.push(start + (issued * 1000) / rate);
    maxBacklog = Math.max(maxBacklog, backlog.length);
    dispatch();
    await sleep(1);
  }
  await Promise.all(inFlight);
  return maxBacklog;
}
