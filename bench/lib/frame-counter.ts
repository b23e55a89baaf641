// A minimal WebSocket client for the events bench: it reads every frame of /events in full off a raw TCP socket,
// counts it and checks its offset, and decodes text only for the frames it samples for latency. A general client
// (ws) builds a Buffer, an event and a string per frame; a hundred of them on the server's two cores measure
// themselves more than the server. It reads with `onread` into one buffer of its own: no Buffer and no 'data'
// event per read, which at a hundred sockets are most of what a read costs.
import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

export interface CounterOptions {
  host: string;
  port: number;
  /** path and query, e.g. /events?types=PersonCreated_v1 */
  path: string;
  headers: Record<string, string>;
  /** called with the frame's text for the frames sampled; the rest are only counted */
  sample(text: string): void;
  /** samples frames whose count modulo `every` is `phase` */
  every: number;
  phase: number;
}

export interface FrameCounter {
  /** JSON frames received, each in full */
  readonly received: () => number;
  /** frames whose offset was not the last one plus one */
  readonly gaps: () => number;
  readonly bytes: () => number;
  /** the first protocol error seen, if any: a frame that is not a whole `{"offset":N,...}` JSON object */
  readonly error: () => string | undefined;
  /** sends a close frame and resolves once the server has closed the connection */
  close(): Promise<void>;
}

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
/** bytes read at once: several commits' frames for a subscriber that keeps up */
const READ_BUFFER = 256 * 1024;
/** `{"offset":` */
const OFFSET_AT = 10;

/** A client frame (masked, as RFC 6455 requires of clients) of at most 125 bytes of payload. */
function clientFrame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const frame = Buffer.alloc(6 + payload.length);
  frame[0] = 0x80 | opcode;
  frame[1] = 0x80 | payload.length;
  mask.copy(frame, 2);
  for (let i = 0; i < payload.length; i++) frame[6 + i] = (payload[i] as number) ^ (mask[i & 3] as number);
  return frame;
}

/** Opens the WebSocket (the upgrade is checked, Sec-WebSocket-Accept included) and starts counting. */
export function openCounter(o: CounterOptions): Promise<FrameCounter> {
  const key = randomBytes(16).toString('base64');
  const accept = createHash('sha1').update(key + GUID).digest('base64');
  let onRead: (chunk: Buffer) => void = () => {};
  const readBuffer = Buffer.allocUnsafe(READ_BUFFER);
  const socket: Socket = connect({
    port: o.port,
    host: o.host,
    onread: {
      buffer: readBuffer,
      callback: (n: number, buf: Uint8Array) => {
        onRead((buf as Buffer).subarray(0, n));
        return true;
      },
    },
  });
  socket.setNoDelay(true);
  let received = 0;
  let gaps = 0;
  let bytes = 0;
  let lastOffset = 0;
  let error: string | undefined;
  let open = false;
  let closing = false;
  /** bytes of an incomplete frame (or upgrade answer) carried into the next chunk */
  let carry: Buffer | undefined;
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));

  function fail(message: string): void {
    error ??= message;
    socket.destroy();
  }

  function frame(buf: Buffer, start: number, end: number, opcode: number): void {
    if (opcode === 1) {
      // Offset digits straight from the bytes; the frame ends its JSON object.
      if (buf[start] !== OPEN_BRACE || buf[end - 1] !== CLOSE_BRACE) return fail(`frame ${received + 1} is not a whole JSON object`);
      let offset = 0;
      for (let i = start + OFFSET_AT; i < end; i++) {
        const c = buf[i] as number;
        if (c < 0x30 || c > 0x39) break;
        offset = offset * 10 + (c - 0x30);
      }
      if (lastOffset !== 0 && offset !== lastOffset + 1) gaps++;
      lastOffset = offset;
      if (received++ % o.every === o.phase) o.sample(buf.toString('latin1', start, end));
    } else if (opcode === 9) {
      socket.write(clientFrame(10, buf.subarray(start, end)));
    } else if (opcode === 8) {
      // Unasked, a close is a failure to report (4008: this client read too slowly); asked, the answer to ours.
      if (!closing) error ??= `closed by the service: ${end - start >= 2 ? buf.readUInt16BE(start) : 'no code'} ${buf.toString('utf8', start + 2, end)}`;
      socket.end();
    } else if (opcode !== 10) {
      fail(`unexpected frame opcode ${opcode}`);
    }
  }

  /** Consumes whole frames from buf; returns where the first incomplete one starts. */
  function frames(buf: Buffer): number {
    let at = 0;
    while (buf.length - at >= 2) {
      const b0 = buf[at] as number;
      const b1 = buf[at + 1] as number;
      if ((b0 & 0x80) === 0) {
        fail('fragmented frame: the stream sends each event whole');
        return buf.length;
      }
      let length = b1 & 0x7f;
      let header = 2;
      if (length === 126) {
        if (buf.length - at < 4) break;
        length = buf.readUInt16BE(at + 2);
        header = 4;
      } else if (length === 127) {
        if (buf.length - at < 10) break;
        length = Number(buf.readBigUInt64BE(at + 2));
        header = 10;
      }
      if (buf.length - at < header + length) break;
      frame(buf, at + header, at + header + length, b0 & 0x0f);
      at += header + length;
    }
    return at;
  }

  const counter: FrameCounter = {
    received: () => received,
    gaps: () => gaps,
    bytes: () => bytes,
    error: () => error,
    close() {
      closing = true;
      if (!socket.destroyed && socket.writable) socket.write(clientFrame(8, Buffer.from([0x03, 0xe8])));
      return closed;
    },
  };

  return new Promise<FrameCounter>((resolve, reject) => {
    socket.once('error', reject);
    onRead = (chunk) => {
      bytes += chunk.length;
      // The read buffer is reused by the next read: what is carried over is copied out of it.
      const buf = carry === undefined ? chunk : Buffer.concat([carry, chunk]);
      carry = undefined;
      let at = 0;
      if (!open) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return void (carry = Buffer.from(buf));
        const head = buf.toString('latin1', 0, end);
        const accepted = head.split('\r\n').some((line) => line.toLowerCase().startsWith('sec-websocket-accept:') && line.slice(21).trim() === accept);
        if (!head.startsWith('HTTP/1.1 101') || !accepted) {
          socket.destroy();
          return reject(new Error(`upgrade refused: ${head.split('\r\n')[0]}`));
        }
        open = true;
        at = end + 4;
        socket.off('error', reject);
        socket.on('error', (e) => fail(String(e)));
        resolve(counter);
      }
      const used = at + frames(at === 0 ? buf : buf.subarray(at));
      if (used < buf.length) carry = Buffer.from(buf.subarray(used));
    };
    const headers = Object.entries(o.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    socket.write(`GET ${o.path} HTTP/1.1\r\nHost: ${o.host}:${o.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n${headers}\r\n`);
  });
}
