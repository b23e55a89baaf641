// Forwarding to the upstream: streamed bodies, hop-by-hop headers stripped, X-Forwarded-* and Via set,
// 502 when the upstream cannot be reached, 504 when it does not answer in time, WebSocket upgrades piped.
import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

export const VIA = '1.1 gate';

/** Headers without the hop-by-hop ones, including those the Connection header names. */
export function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ...headers };
  const named = String(headers.connection ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  for (const h of [...HOP_BY_HOP, ...named]) delete out[h];
  return out;
}

function appendVia(prev: string | string[] | undefined): string {
  const p = Array.isArray(prev) ? prev.join(', ') : prev;
  return p ? `${p}, ${VIA}` : VIA;
}

export interface ForwardInput {
  target: URL;
  method: string;
  /** path and query as received */
  path: string;
  /** the headers after plugins ran (still with hop-by-hop ones, which are stripped here) */
  headers: IncomingHttpHeaders;
  clientIp: string;
  proto: string;
  host: string;
}

function upstreamHeaders(f: ForwardInput): OutgoingHttpHeaders {
  const h = endToEnd(f.headers);
  const xff = f.headers['x-forwarded-for'];
  h['x-forwarded-for'] = xff ? `${Array.isArray(xff) ? xff.join(', ') : xff}, ${f.clientIp}` : f.clientIp;
  h['x-forwarded-host'] = f.host;
  h['x-forwarded-proto'] = f.proto;
  h['via'] = appendVia(f.headers.via);
  return h;
}

function upstreamPath(target: URL, path: string): string {
  const base = target.pathname.replace(/\/$/, '');
  return base + path;
}

export interface ForwardResult {
  status: number;
  /** body bytes written to the client */
  responseLength: number;
}

export interface Forwarder {
  /** forwards one request and calls done once, when the exchange is over (answered, failed or abandoned) */
  forward(req: IncomingMessage, res: ServerResponse, f: ForwardInput, done: (r: ForwardResult) => void): void;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, f: ForwardInput): Promise<ForwardResult>;
  close(): void;
}

function answer(res: ServerResponse, status: number, message: string): ForwardResult {
  const body = JSON.stringify({ errors: [{ httpcode: status, message }] });
  if (!res.headersSent) {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), via: VIA });
    res.end(body);
    return { status, responseLength: Buffer.byteLength(body) };
  }
  res.destroy();
  return { status: res.statusCode, responseLength: 0 };
}

const HOP = new Set(HOP_BY_HOP);
/** undici refuses `expect`; Node's server has already answered 100-continue itself */
const NOT_FORWARDED = new Set([...HOP_BY_HOP, 'expect']);

/** Names listed in a Connection header (lower case), or undefined when it names none beyond close/keep-alive. */
function connectionNamed(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined;
  let named: Set<string> | undefined;
  for (const part of String(value).split(',')) {
    const n = part.trim().toLowerCase();
    if (n !== '' && n !== 'close' && n !== 'keep-alive') (named ??= new Set()).add(n);
  }
  return named;
}

/** The upstream request's headers in one pass, as a flat [name, value, …] list: end-to-end ones, X-Forwarded-*, Via. */
function upstreamList(f: ForwardInput): string[] {
  const h = f.headers;
  const named = connectionNamed(h.connection);
  const out: string[] = [];
  for (const name in h) {
    if (NOT_FORWARDED.has(name) || name === 'x-forwarded-for' || name === 'x-forwarded-host' || name === 'x-forwarded-proto' || name === 'via') continue;
    if (named !== undefined && named.has(name)) continue;
    const v = h[name];
    if (v === undefined) continue;
    if (typeof v === 'string') out.push(name, v);
    else for (const one of v) out.push(name, one);
  }
  const xff = h['x-forwarded-for'];
  out.push('x-forwarded-for', xff ? `${Array.isArray(xff) ? xff.join(', ') : xff}, ${f.clientIp}` : f.clientIp);
  out.push('x-forwarded-host', f.host, 'x-forwarded-proto', f.proto, 'via', appendVia(h.via));
  return out;
}

/** The upstream's response headers as a flat list for writeHead: hop-by-hop ones out, our Via appended. */
function downstreamList(raw: Buffer[]): string[] {
  const out: string[] = [];
  let via: string | undefined;
  let connection: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1');
    const lower = name.toLowerCase();
    const value = raw[i + 1]!.toString('latin1');
    if (lower === 'connection') connection = connection === undefined ? value : `${connection}, ${value}`;
    else if (lower === 'via') via = via === undefined ? value : `${via}, ${value}`;
    else if (!HOP.has(lower)) out.push(name, value);
  }
  out.push('via', appendVia(via));
  const named = connectionNamed(connection);
  if (named === undefined) return out;
  const kept: string[] = [];
  for (let i = 0; i < out.length; i += 2) if (!named.has(out[i]!.toLowerCase())) kept.push(out[i]!, out[i + 1]!);
  return kept;
}

function hasBody(req: IncomingMessage): boolean {
  const te = req.headers['transfer-encoding'];
  if (te !== undefined) return true;
  const cl = req.headers['content-length'];
  return cl !== undefined && cl !== '0';
}

/**
 * One forwarded exchange, as an undici dispatch handler: the response streams to the client with undici's own
 * back-pressure (onData returns false until the client drains), and done is called exactly once.
 */
class Exchange implements Dispatcher.DispatchHandler {
  status = 0;
  bytes = 0;
  settled = false;
  abort: ((err?: Error) => void) | undefined;
  resume: (() => void) | undefined;
  constructor(
    readonly res: ServerResponse,
    readonly done: (r: ForwardResult) => void,
  ) {
    res.once('close', this.onClientClose);
  }

  finish(r: ForwardResult): void {
    if (this.settled) return;
    this.settled = true;
    this.done(r);
  }

  // The client went away before the exchange was over: give up on the upstream.
  onClientClose = (): void => {
    if (this.settled) return;
    this.abort?.(new Error('client closed'));
    this.finish(this.status === 0 ? { status: 499, responseLength: 0 } : { status: this.status, responseLength: this.bytes });
  };

  onDrain = (): void => this.resume?.();

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    if (this.settled) abort();
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true;
    this.status = statusCode;
    this.resume = resume;
    this.res.writeHead(statusCode, downstreamList(rawHeaders));
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.bytes += chunk.length;
    if (this.res.write(chunk)) return true;
    this.res.once('drain', this.onDrain);
    return false;
  }

  onComplete(): void {
    this.res.end();
    this.finish({ status: this.status, responseLength: this.bytes });
  }

  onError(err: Error): void {
    if (this.settled) return;
    if (this.status !== 0) {
      this.res.destroy();
      this.finish({ status: this.status, responseLength: this.bytes });
      return;
    }
    const code = (err as { code?: string }).code;
    this.finish(code === 'UND_ERR_HEADERS_TIMEOUT' ? answer(this.res, 504, 'the upstream did not answer in time') : answer(this.res, 502, 'the upstream could not be reached'));
  }
}

export function createForwarder(timeoutMs: number): Forwarder {
  // One undici pool per upstream origin: kept-alive connections, no per-request timer (undici's own timeouts).
  const pools = new Map<string, { pool: Pool; base: string }>();
  const poolOf = (target: URL) => {
    let p = pools.get(target.origin);
    if (p === undefined) {
      p = { pool: new Pool(target.origin, { connections: 512, keepAliveTimeout: 10_000, headersTimeout: timeoutMs, bodyTimeout: 0 }), base: target.pathname.replace(/\/$/, '') };
      pools.set(target.origin, p);
    }
    return p;
  };
  return {
    forward(req, res, f, done) {
      const exchange = new Exchange(res, done);
      const { pool, base } = poolOf(f.target);
      try {
        pool.dispatch({ path: base + f.path, method: f.method as Dispatcher.HttpMethod, headers: upstreamList(f), body: hasBody(req) ? req : null, headersTimeout: timeoutMs, bodyTimeout: 0 }, exchange);
      } catch {
        exchange.onError(new Error('the request could not be forwarded'));
      }
    },

    upgrade(_req, socket, head, f) {
      return new Promise((resolve) => {
        const headers = upstreamHeaders(f);
        headers['connection'] = 'Upgrade';
        headers['upgrade'] = f.headers.upgrade;
        const up = http.request({ host: f.target.hostname, port: f.target.port || 80, method: f.method, path: upstreamPath(f.target, f.path), headers });
        const fail = (status: number, message: string) => {
          socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nconnection: close\r\nvia: ${VIA}\r\ncontent-length: ${message.length}\r\n\r\n${message}`);
          resolve({ status, responseLength: message.length });
        };
        const timer = setTimeout(() => {
          up.destroy();
          fail(504, 'the upstream did not answer in time');
        }, timeoutMs);
        up.on('error', () => {
          clearTimeout(timer);
          fail(502, 'the upstream could not be reached');
        });
        up.on('response', (ur) => {
          // The upstream refused the upgrade: relay its answer.
          clearTimeout(timer);
          let text = `HTTP/1.1 ${ur.statusCode} ${ur.statusMessage}\r\n`;
          for (const [k, v] of Object.entries(endToEnd(ur.headers))) for (const one of [v].flat()) text += `${k}: ${one}\r\n`;
          socket.write(`${text}via: ${VIA}\r\nconnection: close\r\n\r\n`);
          let bytes = 0;
          ur.on('data', (c: Buffer) => (bytes += c.length));
          ur.pipe(socket);
          ur.on('end', () => resolve({ status: ur.statusCode ?? 502, responseLength: bytes }));
        });
        up.on('upgrade', (ur, upSocket, upHead) => {
          clearTimeout(timer);
          let text = `HTTP/1.1 101 Switching Protocols\r\n`;
          for (let i = 0; i < ur.rawHeaders.length; i += 2) text += `${ur.rawHeaders[i]}: ${ur.rawHeaders[i + 1]}\r\n`;
          socket.write(`${text}via: ${VIA}\r\n\r\n`);
          if (upHead.length > 0) socket.write(upHead);
          if (head.length > 0) upSocket.write(head);
          upSocket.pipe(socket);
          socket.pipe(upSocket);
          const end = () => {
            upSocket.destroy();
            socket.destroy();
          };
          upSocket.on('error', end);
          socket.on('error', end);
          upSocket.on('close', end);
          socket.on('close', end);
          resolve({ status: 101, responseLength: 0 });
        });
        up.end();
      });
    },

    close: () => {
      for (const p of pools.values()) void p.pool.destroy();
    },
  };
}
