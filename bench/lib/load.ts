// The load generator: N keep-alive connections over loopback (bench/lib/connection.ts), in a closed loop (each
// connection sends its next request when the last answer arrives) or an open loop at a fixed rate (requests are
// due on a schedule whatever the answers do; latency counts from when a request was due, so a stalled server is
// not hidden by a stalled client, i.e. no coordinated omission). Only requests sent (closed) or due (open) inside
// the measured window count, and every one of them is waited for. The server's CPU time over the same window
// is read from /proc when its pid is given.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { Connection } from './connection.js';
import { Histogram, type LatencySummary } from './histogram.js';
import { cpuSeconds, machineTicks } from './process-cpu.js';

export interface LoadOptions {
  url: string;
  /** the bytes of request number i (see encodeRequest); called once per request, in order */
  request(i: number): Buffer;
  connections: number;
  durationMs: number;
  /** load before the measured window opens, on the same connections, not recorded */
  warmupMs?: number;
  /** requests per second for the open loop; absent: closed loop */
  rate?: number;
  /** statuses that count as success (default 2xx); anything else is an error */
  ok?(status: number): boolean;
  /** the server's process, to report its CPU time over the measured window */
  serverPid?: number;
}

export interface LoadResult {
  mode: 'closed' | 'open';
  connections: number;
  /** the asked rate of an open loop */
  rate?: number;
  durationMs: number;
  /** from the window's opening to the last counted answer */
  elapsedMs: number;
  /** answers counted (every status) */
  requests: number;
  rps: number;
  errors: number;
  statuses: Record<string, number>;
  /** error messages seen (first few), for the report */
  failures: string[];
  /** of successful requests; open loop: from when each was due */
  latency: LatencySummary;
  /** open loop: from when each request was written, i.e. without the wait for a free connection */
  serviceLatency?: LatencySummary;
  /** open loop: how late requests left after they were due, the generator's own error plus waits for a connection */
  sendLag?: LatencySummary;
  /** open loop: the most requests that were due and waiting for a free connection at once */
  maxBacklog?: number;
  /** CPU time the load generator used over the measured window, as % of one core */
  clientCpuPercent: number;
  /**
   * How late the generator's own event loop ran over the window (ms, p99 and max): a stall here delays
   * sending and reading alike, so latencies above it say nothing about the server.
   */
  clientStallMs: { p99: number; max: number };
  /**
   * Share of the machine's CPU time the hypervisor gave to other guests over the window (%), where /proc/stat
   * tells. Above a percent or so, tails measure the host: a virtual CPU that waits for a real one stalls whatever
   * runs on it.
   */
  stealPercent?: number;
  /** the server's CPU time over the measured window, as % of one core */
  serverCpuPercent?: number;
  /** server CPU time per request: steadier than req/s when other work shares the cores */
  serverCpuUsPerRequest?: number;
}

const SOCKET_ERROR = 'socket error';

/** What a run counts: latencies, statuses and errors of the requests inside the window. */
class Tally {
  readonly latency = new Histogram();
  readonly service = new Histogram();
  readonly lag = new Histogram();
  readonly statuses: Record<string, number> = {};
  readonly failures: string[] = [];
  requests = 0;
  errors = 0;
  lastDone = 0;

  constructor(private readonly ok: (status: number) => boolean) {}

  record(status: number | string, due: number, sent: number, done: number): void {
    this.requests++;
    this.statuses[status] = (this.statuses[status] ?? 0) + 1;
    if (done > this.lastDone) this.lastDone = done;
    if (typeof status !== 'number' || !this.ok(status)) {
      this.errors++;
      return;
    }
    this.latency.record((done - due) * 1000);
    this.service.record((done - sent) * 1000);
    this.lag.record((sent - due) * 1000);
  }

  failure(error: unknown): void {
    if (this.failures.length < 5) this.failures.push(error instanceof Error ? error.message : String(error));
  }
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const url = new URL(options.url);
  const conns: Connection[] = [];
  try {
    for (let i = 0; i < options.connections; i++) conns.push(new Connection(url.hostname, Number(url.port)));
    await Promise.all(conns.map((c) => c.ready));
    return await run(conns, options);
  } finally {
    for (const c of conns) c.close();
  }
}

async function run(conns: Connection[], options: LoadOptions): Promise<LoadResult> {
  const tally = new Tally(options.ok ?? ((s) => s >= 200 && s < 300));
  let seq = 0;
  /** Sends request number seq on conn; resolves with the status, or SOCKET_ERROR when the connection failed. */
  const send = (conn: Connection): Promise<number | string> =>
    conn.send(options.request(seq++)).catch((error: unknown) => {
      tally.failure(error);
      return SOCKET_ERROR;
    });

  const start = performance.now();
  const measureFrom = start + (options.warmupMs ?? 0);
  const measureTo = measureFrom + options.durationMs;
  let win: { at: number; cpu: NodeJS.CpuUsage; server: number | undefined; machine: ReturnType<typeof machineTicks> } | undefined;
  const stalls = monitorEventLoopDelay({ resolution: 1 });
  const open = () => {
    stalls.enable();
    return (win = { at: performance.now(), cpu: process.cpuUsage(), server: cpuSeconds(options.serverPid), machine: machineTicks() });
  };
  const opening = measureFrom > start ? setTimeout(open, measureFrom - start) : (open(), undefined);
  // A server that stops answering must end the run with an error, not hang it.
  const limitMs = (options.warmupMs ?? 0) + options.durationMs + Math.max(10_000, options.durationMs);
  let guard: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    guard = setTimeout(() => reject(new Error(`load: answers still outstanding ${(limitMs / 1000).toFixed(0)} s after the start; the server stalled`)), limitMs);
  });

  let maxBacklog: number | undefined;
  try {
    if (options.rate === undefined) await Promise.race([closedLoop(conns, send, tally, measureFrom, measureTo), timeout]);
    else maxBacklog = await Promise.race([openLoop(conns, send, tally, options.rate, start, measureFrom, measureTo), timeout]);
  } finally {
    clearTimeout(opening);
    clearTimeout(guard);
  }
  const w = win ?? open();
  stalls.disable();
  const end = performance.now();
  const cpu = process.cpuUsage(w.cpu);
  const server = cpuSeconds(options.serverPid);
  const machine = machineTicks();
  const elapsedMs = Math.max(tally.lastDone, w.at) - w.at || options.durationMs;
  const windowMs = end - w.at;

  const result: LoadResult = {
    mode: options.rate === undefined ? 'closed' : 'open',
    connections: conns.length,
    durationMs: options.durationMs,
    elapsedMs: Math.round(elapsedMs),
    requests: tally.requests,
    rps: Math.round((tally.requests / elapsedMs) * 1000),
    errors: tally.errors,
    statuses: tally.statuses,
    failures: tally.failures,
    latency: tally.latency.summary(),
    clientCpuPercent: Math.round(((cpu.user + cpu.system) / 1000 / windowMs) * 100),
    // The histogram counts from the 1 ms sampling interval: what lies beyond it is the delay.
    clientStallMs: { p99: Math.max(0, stalls.percentile(99) / 1e6 - 1), max: Math.max(0, stalls.max / 1e6 - 1) },
  };
  if (options.rate !== undefined) {
    result.rate = options.rate;
    result.serviceLatency = tally.service.summary();
    result.sendLag = tally.lag.summary();
    result.maxBacklog = maxBacklog as number;
  }
  if (machine && w.machine && machine.total > w.machine.total) {
    result.stealPercent = Math.round(((machine.steal - w.machine.steal) / (machine.total - w.machine.total)) * 1000) / 10;
  }
  if (server !== undefined && w.server !== undefined) {
    result.serverCpuPercent = Math.round(((server - w.server) / (windowMs / 1000)) * 100);
    if (tally.requests > 0) result.serverCpuUsPerRequest = Math.round(((server - w.server) * 1e7) / tally.requests) / 10;
  }
  return result;
}

function allFailed(conns: Connection[], tally: Tally): Error {
  return new Error(`load: all ${conns.length} connections failed: ${tally.failures.join('; ') || 'closed by the server'}`);
}

/** Each connection sends, waits for the answer, and sends again until the window closes. */
async function closedLoop(conns: Connection[], send: (c: Connection) => Promise<number | string>, tally: Tally, measureFrom: number, measureTo: number): Promise<void> {
  await Promise.all(
    conns.map(async (conn) => {
      for (let sent = performance.now(); sent < measureTo && !conn.broken; sent = performance.now()) {
        const status = await send(conn);
        if (sent >= measureFrom) tally.record(status, sent, sent, performance.now());
      }
    }),
  );
  if (conns.every((c) => c.broken)) throw allFailed(conns, tally);
}

/**
 * The pacer of the open loop: a thread that sleeps until each request is due (Atomics.wait takes fractional
 * milliseconds, unlike timers, which fire a millisecond or more late) and then wakes this thread with a message.
 * Polling the schedule here instead would keep a whole core busy, and on a machine of two cores that core is
 * taken from the server being measured. It posts at most one wake-up per due request.
 */
const METRONOME = `
const { parentPort, workerData } = require('node:worker_threads');
const { start, interval, total } = workerData;
const cell = new Int32Array(new SharedArrayBuffer(4));
const now = () => Number(process.hrtime.bigint()) / 1e6;
for (let k = 0; k < total; k++) {
  const wait = start + k * interval - now();
  if (wait > 0) Atomics.wait(cell, 0, 0, wait);
  parentPort.postMessage(k);
}
`;

/** The monotonic clock every thread shares (performance.now() counts from each thread's own start). */
const hrtimeMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * Request k is due at start + k / rate; it leaves on the next free connection, or waits in the backlog for one.
 * The metronome thread above says when; requests leave within tens of µs of their time when a connection is free.
 * The metronome can itself be held off a core for tens of milliseconds when both cores are busy, so this thread
 * also reads the schedule off the clock whenever it runs: on every answer and on a 1 ms timer. A late metronome
 * then costs a request about a millisecond, not the whole time the thread waited for a core.
 */
function openLoop(conns: Connection[], send: (c: Connection) => Promise<number | string>, tally: Tally, rate: number, start: number, measureFrom: number, measureTo: number): Promise<number> {
  const interval = 1000 / rate;
  /** requests due before the window closes: k with start + k·interval < measureTo */
  const total = Math.max(0, Math.ceil(((measureTo - start) * rate) / 1000 - 1e-9));
  const idle = [...conns];
  let due = 0; // requests made due so far
  let sent = 0; // of those, sent
  let inFlight = 0;
  let maxBacklog = 0;
  const metronome = new Worker(METRONOME, { eval: true, workerData: { start: start + hrtimeMs() - performance.now(), interval, total } });
  let tick: NodeJS.Timeout | undefined;
  return new Promise<number>((resolve, reject) => {
    let settled = false;
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      if (error) reject(error);
      else resolve(maxBacklog);
    };
    /** makes due every request whose time has come by the clock, and request k when the metronome says so */
    const catchUp = (k = -1) => {
      due = Math.min(total, Math.max(due, k + 1, Math.floor((performance.now() - start) / interval) + 1));
      if (due - sent > maxBacklog) maxBacklog = due - sent;
    };
    const dispatch = (k?: number) => {
      catchUp(k);
      while (sent < due && idle.length > 0) {
        const conn = idle.pop() as Connection;
        if (conn.broken) continue;
        const dueAt = start + sent++ * interval;
        const sentAt = performance.now();
        inFlight++;
        void send(conn).then((status) => {
          inFlight--;
          if (dueAt >= measureFrom) tally.record(status, dueAt, sentAt, performance.now());
          if (!conn.broken) idle.push(conn);
          dispatch();
        });
      }
      if (sent < due && idle.length === 0 && inFlight === 0) settle(allFailed(conns, tally));
      else if (due === total && sent === total && inFlight === 0) settle();
    };
    tick = setInterval(() => settled || dispatch(), 1);
    metronome.on('message', (k: number) => settled || dispatch(k));
    metronome.on('error', (error) => settle(error));
    if (total === 0) settle();
  }).finally(() => {
    clearInterval(tick);
    void metronome.terminate();
  });
}
