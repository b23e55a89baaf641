// A real WebSocket subscriber of WS /events (the `ws` package) that records every frame, with bounded waits.
import type { IncomingHttpHeaders } from 'node:http';
import WebSocket from 'ws';
import { ROOT_KEY, ROOT_ORG } from './server.js';

export interface JsonFrame {
  offset: number;
  /** lowercase hex of the event's chain link */
  chain?: string;
  event: any;
}

/** Frames as {offset, event}, to compare with what POST /test-events answered (which carries no chain). */
export function unchained(frames: readonly JsonFrame[]): Array<{ offset: number; event: any }> {
  return frames.map(({ offset, event }) => ({ offset, event }));
}

export interface Closed {
  code: number;
  reason: string;
}

export interface SubscribeOptions {
  org?: string;
  key?: string;
  /** query parameters besides the credentials */
  query?: Record<string, string>;
  /** credentials in the query (as a browser sends them) instead of headers */
  credentialsInQuery?: boolean;
}

export function eventsUrl(base: string, query: Record<string, string> = {}): string {
  const qs = new URLSearchParams(query).toString();
  return `${base.replace(/^http/, 'ws')}/events${qs ? `?${qs}` : ''}`;
}

export class Subscriber {
  readonly frames: JsonFrame[] = [];
  readonly binary: Buffer[] = [];
  readonly closed: Promise<Closed>;
  upgradeHeaders: IncomingHttpHeaders = {};
  private waiters: Array<() => void> = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.binary.push(data);
      else this.frames.push(JSON.parse(data.toString('utf8')) as JsonFrame);
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      socket.on('close', (code, reason) => {
        resolve({ code, reason: reason.toString('utf8') });
        this.wake();
      });
    });
    socket.on('upgrade', (res) => {
      this.upgradeHeaders = res.headers;
    });
  }

  /** Opens a subscription; rejects with the HTTP status and body when the upgrade is refused. */
  static open(base: string, options: SubscribeOptions = {}): Promise<Subscriber> {
    const org = options.org ?? ROOT_ORG;
    const key = options.key ?? ROOT_KEY;
    const query = { ...(options.credentialsInQuery ? { org_id: org, api_key: key } : {}), ...options.query };
    const headers = options.credentialsInQuery ? {} : { 'Service-OrgID': org, 'Service-API-Key': key };
    const socket = new WebSocket(eventsUrl(base, query), { headers });
    const sub = new Subscriber(socket);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.terminate();
        reject(new Error('WebSocket did not open within 30 s'));
      }, 30_000);
      socket.once('open', () => {
        clearTimeout(timer);
        resolve(sub);
      });
      socket.once('unexpected-response', (_req, res) => {
        clearTimeout(timer);
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString('utf8')));
        res.on('end', () => reject(new RefusedUpgrade(res.statusCode ?? 0, body)));
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  /** Resolves once pred holds (checked after every frame and at close); rejects after timeoutMs. */
  waitUntil(pred: () => boolean, timeoutMs = 30_000, what = 'condition'): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!pred()) return false;
        clearTimeout(timer);
        resolve();
        return true;
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what} (have ${this.frames.length} JSON and ${this.binary.length} binary frames)`));
      }, timeoutMs);
      const waiter = () => {
        if (check()) this.waiters = this.waiters.filter((w) => w !== waiter);
      };
      this.waiters.push(waiter);
    });
  }

  /** Waits until at least n frames (JSON or binary) have arrived. */
  waitForCount(n: number, timeoutMs = 30_000): Promise<void> {
    return this.waitUntil(() => this.frames.length + this.binary.length >= n, timeoutMs, `${n} frames`);
  }

  offsets(): number[] {
    return this.frames.map((f) => f.offset);
  }

  /** Closes the socket and waits for the close to complete (at most 2 s, then terminates). */
  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    this.socket.close();
    const timer = setTimeout(() => this.socket.terminate(), 2000);
    await this.closed;
    clearTimeout(timer);
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
}

export class RefusedUpgrade extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`upgrade refused with ${status}: ${body}`);
  }
}

/** The status and parsed body of an upgrade the server refuses; fails if it is accepted. */
export async function refusal(base: string, options: SubscribeOptions): Promise<{ status: number; body: any }> {
  try {
    const sub = await Subscriber.open(base, options);
    await sub.close();
  } catch (error) {
    if (error instanceof RefusedUpgrade) return { status: error.status, body: JSON.parse(error.body) };
    throw error;
  }
  throw new Error('the upgrade was accepted');
}

/** Consecutive integers from `first` to `last`. */
export function range(first: number, last: number): number[] {
  return Array.from({ length: Math.max(0, last - first + 1) }, (_, i) => first + i);
}
