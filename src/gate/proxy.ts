// Forwarding to the upstream: streamed bodies, hop-by-hop headers stripped, X-Forwarded-* and Via set,
// 502 when the upstream cannot be reached, 504 when it does not answer in time, WebSocket upgrades piped.
import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

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
  forward(req: IncomingMessage, res: ServerResponse, f: ForwardInput): Promise<ForwardResult>;
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

export function createForwarder(timeoutMs: number): Forwarder {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000 });
  return {
    forward(req, res, f) {
      return new Promise((resolve) => {
        let settled = false;
        const done = (r: ForwardResult) => {
          if (!settled) {
            settled = true;
            resolve(r);
          }
        };
        const up = http.request({
          host: f.target.hostname,
          port: f.target.port || 80,
          method: f.method,
          path: upstreamPath(f.target, f.path),
          headers: upstreamHeaders(f),
          agent,
        });
        const timer = setTimeout(() => {
          up.destroy(new Error('upstream timeout'));
          done(answer(res, 504, 'the upstream did not answer in time'));
        }, timeoutMs);
        up.on('error', () => {
          clearTimeout(timer);
          done(answer(res, 502, 'the upstream could not be reached'));
        });
        up.on('response', (ur) => {
          clearTimeout(timer);
          const headers = endToEnd(ur.headers);
          headers['via'] = appendVia(ur.headers.via);
          res.writeHead(ur.statusCode ?? 502, headers);
          let bytes = 0;
          ur.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (!res.write(chunk)) {
              ur.pause();
              res.once('drain', () => ur.resume());
            }
          });
          ur.on('end', () => {
            res.end();
            done({ status: ur.statusCode ?? 502, responseLength: bytes });
          });
          ur.on('error', () => {
            res.destroy();
            done({ status: ur.statusCode ?? 502, responseLength: bytes });
          });
          res.on('close', () => {
            if (!ur.complete) ur.destroy();
            done({ status: ur.statusCode ?? 502, responseLength: bytes });
          });
        });
        // The client went away before the upstream answered: give up on it.
        res.on('close', () => {
          if (!res.writableFinished && !settled) {
            clearTimeout(timer);
            up.destroy();
            done({ status: 499, responseLength: 0 });
          }
        });
        req.pipe(up);
      });
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

    close: () => agent.destroy(),
  };
}
