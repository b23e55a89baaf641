// Requests written byte for byte on a plain socket, for what an HTTP client library refuses to send.
import { connect } from 'node:net';

export interface RawReply {
  /** everything the server wrote, as latin1 */
  text: string;
  status: number | undefined;
  headers: Map<string, string[]>;
  body: string;
  /** the server closed the connection (false: it was still open when waitMs ran out) */
  closed: boolean;
}

/**
 * Writes `bytes` and collects the answer until the server closes the connection or `waitMs` pass. A test
 * that expects a close gets it long before a generous waitMs; one that expects silence waits it out.
 */
export function rawRequest(port: number, bytes: string | Buffer, waitMs = 5000): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const done = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parse(Buffer.concat(chunks).toString('latin1'), closed));
    };
    const timer = setTimeout(() => done(false), waitMs);
    socket.on('data', (d) => chunks.push(d));
    socket.on('close', () => done(true));
    socket.on('error', (e) => (settled ? undefined : ((settled = true), clearTimeout(timer), reject(e))));
    socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  });
}

function parse(text: string, closed: boolean): RawReply {
  const headers = new Map<string, string[]>();
  const end = text.indexOf('\r\n\r\n');
  const head = end < 0 ? text : text.slice(0, end);
  const [statusLine, ...lines] = head.split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1];
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  return { text, status: status === undefined ? undefined : Number(status), headers, body: end < 0 ? '' : text.slice(end + 4), closed };
}

/** A request's bytes: the request line, the fields in order (repeats allowed), then the body. */
export function rawMessage(requestLine: string, fields: ReadonlyArray<readonly [string, string]>, body = ''): string {
  return `${requestLine}\r\n${fields.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`;
}
