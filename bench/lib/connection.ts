// One keep-alive HTTP/1.1 connection with one request at a time (no pipelining), over a raw socket.
// Requests are pre-encoded bytes and responses are only framed (status, Content-Length or chunked), never
// parsed further: the load generator then costs a fraction of what undici does per request, which matters
// when it shares two cores with the server it measures.
import { connect, type Socket } from 'node:net';

export interface RequestSpec {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** Encodes a request once, so the hot loop only writes bytes. */
export function encodeRequest(host: string, spec: RequestSpec): Buffer {
  const body = spec.body === undefined ? undefined : Buffer.isBuffer(spec.body) ? spec.body : Buffer.from(spec.body);
  let head = `${spec.method} ${spec.path} HTTP/1.1\r\nHost: ${host}\r\n`;
  for (const [k, v] of Object.entries(spec.headers ?? {})) head += `${k}: ${v}\r\n`;
  if (body !== undefined || spec.method === 'POST' || spec.method === 'PUT' || spec.method === 'PATCH') head += `Content-Length: ${body?.length ?? 0}\r\n`;
  head += '\r\n';
  return body === undefined ? Buffer.from(head) : Buffer.concat([Buffer.from(head), body]);
}

const CRLF2 = Buffer.from('\r\n\r\n');

export class Connection {
  private readonly socket: Socket;
  private buf: Buffer = Buffer.alloc(0);
  private waiting: { resolve(status: number): void; reject(error: Error): void } | undefined;
  private closed: Error | undefined;
  readonly ready: Promise<void>;

  constructor(host: string, port: number) {
    this.socket = connect({ host, port, noDelay: true });
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    this.socket.on('data', (chunk) => this.onData(chunk));
    this.socket.on('error', (e) => this.fail(e));
    this.socket.on('close', () => this.fail(new Error('connection closed by the server')));
  }

  /** Sends one request; resolves with the response status once the whole response has arrived. */
  send(request: Buffer): Promise<number> {
    if (this.closed) return Promise.reject(this.closed);
    if (this.waiting) return Promise.reject(new Error('one request at a time on a connection'));
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(request);
    });
  }

  get broken(): boolean {
    return this.closed !== undefined;
  }

  close(): void {
    this.socket.destroy();
  }

  private fail(error: Error): void {
    this.closed ??= error;
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(error);
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const end = this.frame();
    if (end === undefined) return;
    if (end !== this.buf.length) return this.fail(new Error('bytes after the response: the server pipelined or misframed'));
    this.buf = Buffer.alloc(0);
    const w = this.waiting;
    this.waiting = undefined;
    w?.resolve(this.status);
  }

  private status = 0;

  /** The length of the complete response at the start of buf, or undefined while it is incomplete. */
  private frame(): number | undefined {
    const headEnd = this.buf.indexOf(CRLF2);
    if (headEnd < 0) return undefined;
    const head = this.buf.toString('latin1', 0, headEnd);
    this.status = Number(head.slice(9, 12));
    const bodyStart = headEnd + 4;
    if (this.status === 204 || this.status === 304 || this.status < 200) return bodyStart;
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (length) {
      const end = bodyStart + Number(length[1]);
      return this.buf.length >= end ? end : undefined;
    }
    if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) return this.chunked(bodyStart);
    this.fail(new Error(`response without a length: ${head.split('\r\n')[0]}`));
    return undefined;
  }

  private chunked(from: number): number | undefined {
    let at = from;
    for (;;) {
      const lineEnd = this.buf.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = parseInt(this.buf.toString('latin1', at, lineEnd), 16);
      at = lineEnd + 2 + size + 2;
      if (this.buf.length < at) return undefined;
      // The last chunk has size 0; trailers are not used by the servers measured here.
      if (size === 0) return at;
    }
  }
}
