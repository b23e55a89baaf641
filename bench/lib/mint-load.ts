// A small HTTP/1.1 load generator over keep-alive sockets: closed loop (each connection sends its next
// request when the previous answer arrives) and open loop (requests at a fixed rate, latency measured from
// when each was due, so a stalled server cannot hide its queueing: no coordinated omission).
import { connect, type Socket } from 'node:net';

export interface LoadTarget {
  host: string;
  port: number;
  /** complete HTTP/1.1 requests, sent in turn */
  requests: readonly Buffer[];
  /** the status every answer should have; others count as errors */
  expectStatus: number;
}

export interface LatencySummary {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

export interface LoadResult {
  mode: 'closed' | 'open';
  connections: number;
  seconds: number;
  requests: number;
  errors: number;
  /** answers per second */
  rps: number;
  /** for open loop: the rate asked for */
  targetRate?: number;
  /** milliseconds; open loop: from when the request was due */
  latency: LatencySummary;
  /** open loop only: from when the request was written */
  serviceLatency?: LatencySummary;
  statuses: Record<string, number>;
}

export function summarize(samples: number[]): LatencySummary {
  if (samples.length === 0) return { p50: NaN, p90: NaN, p99: NaN, p999: NaN, max: NaN, mean: NaN };
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
  let sum = 0;
  for (const v of sorted) sum += v;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), p999: at(0.999), max: sorted[sorted.length - 1] as number, mean: sum / sorted.length };
}

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i;

/** One keep-alive connection that reads back-to-back responses and reports each one's status. */
class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly socket: Socket;
  onResponse: (status: number) => void = () => {};
  onError: (error: Error) => void = () => {};

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', (e) => this.onError(e));
    socket.on('close', () => this.onError(new Error('connection closed by the server')));
  }

  static open(host: string, port: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port }, () => resolve(new Connection(socket)));
      socket.once('error', reject);
    });
  }

  send(request: Buffer): void {
    this.socket.write(request);
  }

  close(): void {
    this.socket.removeAllListeners('close');
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf(HEADER_END);
      if (end < 0) return;
      const head = this.buffer.toString('latin1', 0, end);
      const length = Number(CONTENT_LENGTH.exec(head)?.[1] ?? 0);
      const total = end + 4 + length;
      if (this.buffer.length < total) return;
      const status = Number(head.slice(9, 12));
      this.buffer = this.buffer.subarray(total);
      this.onResponse(status);
    }
  }
}

async function openAll(target: LoadTarget, connections: number): Promise<Connection[]> {
  return Promise.all(Array.from({ length: connections }, () => Connection.open(target.host, target.port)));
}

function countStatus(statuses: Record<string, number>, status: number): void {
  statuses[status] = (statuses[status] ?? 0) + 1;
}

/** Every connection keeps exactly one request in flight for `seconds`. */
export async function closedLoop(target: LoadTarget, connections: number, seconds: number): Promise<LoadResult> {
  const conns = await openAll(target, connections);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let next = 0;
  let errors = 0;
  let failure: Error | undefined;
  const started = performance.now();
  const stopAt = started + seconds * 1000;
  let ended = 0;
  await new Promise<void>((resolve, reject) => {
    let running = connections;
    const guard = setTimeout(() => reject(new Error(`closed loop: ${running} connection(s) still waiting ${seconds + 10} s after the start`)), (seconds + 10) * 1000);
    const finish = () => {
      if (--running > 0) return;
      clearTimeout(guard);
      resolve();
    };
    for (const conn of conns) {
      let sentAt = 0;
      const fire = () => {
        sentAt = performance.now();
        conn.send(target.requests[next++ % target.requests.length] as Buffer);
      };
      conn.onResponse = (status) => {
        const now = performance.now();
        latencies.push(now - sentAt);
        countStatus(statuses, status);
        if (status !== target.expectStatus) errors++;
        if (now < stopAt) fire();
        else {
          ended = Math.max(ended, now);
          finish();
        }
      };
      conn.onError = (e) => {
        failure ??= e;
        finish();
      };
      fire();
    }
  });
  for (const c of conns) c.close();
  if (failure) throw failure;
  const elapsed = (ended - started) / 1000;
  return { mode: 'closed', connections, seconds: elapsed, requests: latencies.length, errors, rps: latencies.length / elapsed, latency: summarize(latencies), statuses };
}

/**
 * Requests become due at `rate` per second for `seconds`; each goes out on an idle connection, or waits
 * for one. Latency counts from when the request was due.
 */
export async function openLoop(target: LoadTarget, connections: number, rate: number, seconds: number): Promise<LoadResult> {
  const conns = await openAll(target, connections);
  const idle: Connection[] = [...conns];
  const due: number[] = [];
  const latencies: number[] = [];
  const service: number[] = [];
  const statuses: Record<string, number> = {};
  const inFlight = new Map<Connection, { due: number; sent: number }>();
  let errors = 0;
  let issued = 0;
  let next = 0;
  let failure: Error | undefined;
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const started = performance.now();

  await new Promise<void>((resolve, reject) => {
    const dispatch = () => {
      while (due.length > 0 && idle.length > 0) {
        const conn = idle.pop() as Connection;
        inFlight.set(conn, { due: due.shift() as number, sent: performance.now() });
        conn.send(target.requests[next++ % target.requests.length] as Buffer);
      }
    };
    for (const conn of conns) {
      conn.onResponse = (status) => {
        const now = performance.now();
        const times = inFlight.get(conn);
        inFlight.delete(conn);
        if (times) {
          latencies.push(now - times.due);
          service.push(now - times.sent);
        }
        countStatus(statuses, status);
        if (status !== target.expectStatus) errors++;
        idle.push(conn);
        dispatch();
        if (latencies.length === total) {
          clearTimeout(guard);
          resolve();
        }
      };
      conn.onError = (e) => {
        failure ??= e;
        reject(e);
      };
    }
    const guard = setTimeout(() => reject(new Error(`open loop: only ${latencies.length} of ${total} answers after ${2 * seconds + 10} s`)), (2 * seconds + 10) * 1000);
    // Timers are coarse (about 1 ms), so while the next request is due within 1 ms the loop spins on
    // setImmediate, which still lets socket reads run between turns.
    const pump = () => {
      const now = performance.now();
      while (issued < total && started + issued * interval <= now) due.push(started + issued++ * interval);
      dispatch();
      if (issued >= total) return;
      const wait = started + issued * interval - performance.now();
      if (wait > 1.5) setTimeout(pump, wait - 1);
      else setImmediate(pump);
    };
    pump();
  });
  for (const c of conns) c.close();
  if (failure) throw failure;
  const elapsed = (performance.now() - started) / 1000;
  return {
    mode: 'open',
    connections,
    seconds: elapsed,
    requests: latencies.length,
    errors,
    rps: latencies.length / elapsed,
    targetRate: rate,
    latency: summarize(latencies),
    serviceLatency: summarize(service),
    statuses,
  };
}

/** An HTTP/1.1 request as bytes, ready to be written again and again. */
export function httpRequest(method: string, path: string, headers: Record<string, string>, body = ''): Buffer {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${Buffer.byteLength(body)}`];
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
}
