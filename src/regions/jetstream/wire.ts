// What travels over NATS between an origin and its replica regions: the subjects and the message bodies.
import type { Ack, Batch } from '../transport.js';

/** The origin's WAL stream, one per origin region; every replica region mirrors it into its own domain. */
export const streamName = (origin: string) => `WAL_${origin}`;
/** One message per batch of one organization, as the link ships it. */
export const walSubject = (origin: string, org: string) => `wal.${origin}.${org}`;
export const walSubjects = (origin: string) => `wal.${origin}.>`;
/** Core NATS, not stored: the link's probes (where does the replica stand?) and the replica's acknowledgements. */
export const probeSubject = (origin: string, region: string) => `probe.${origin}.${region}`;
export const ackSubject = (origin: string, region: string) => `ack.${origin}.${region}`;
/** The replica region's durable consumer on its mirror of the origin's stream. */
export const consumerName = (region: string) => `apply_${region}`;

/**
 * Names one publish: the organization, its offsets, and the publish's number at this origin. Every publish
 * is stored, a resend too: the stream's duplicate window must never swallow one, since the copy it remembers
 * may be one the replicas could not use (stored after a later batch when a publish failed, so the replica
 * saw a gap); the replicas' apply by offset skips the copies they already have.
 */
export const msgId = (org: string, first: number, last: number, publish: number) => `${org}:${first}-${last}/${publish}`;

// A batch is framed in binary: its records are bytes already (checksummed inside), and a batch of 512 of
// them spent more on JSON and base64 than on anything else the replica does with it. Layout: the version
// byte, the organization (u16 length, UTF-8), the session (u32), the entry count (u32), then per entry its
// offset (f64: offsets pass 2^32 long before 2^53) and its record (u32 length, bytes). Big-endian throughout.
const BATCH_V1 = 1;

export function encodeBatch(batch: Batch): Uint8Array {
  const org = Buffer.from(batch.org, 'utf8');
  let size = 1 + 2 + org.length + 4 + 4;
  for (const e of batch.entries) size += 8 + 4 + e.record.length;
  const out = Buffer.allocUnsafe(size);
  let at = out.writeUInt8(BATCH_V1, 0);
  at = out.writeUInt16BE(org.length, at);
  at += org.copy(out, at);
  at = out.writeUInt32BE(batch.session >>> 0, at);
  at = out.writeUInt32BE(batch.entries.length, at);
  for (const e of batch.entries) {
    at = out.writeDoubleBE(e.offset, at);
    at = out.writeUInt32BE(e.record.length, at);
    at += e.record.copy(out, at);
  }
  return out;
}

/** One copy of the message, which the records are views into: the client's buffer is not ours to keep. */
export function decodeBatch(data: Uint8Array): Batch {
  const buf = Buffer.from(data);
  if (buf[0] === 0x7b) return decodeJsonBatch(buf); // '{': a batch published before the binary framing
  if (buf.length < 11 || buf[0] !== BATCH_V1) throw new Error('not a WAL batch');
  const need = (n: number, at: number) => {
    if (at + n > buf.length) throw new Error('not a WAL batch (truncated)');
  };
  let at = 1;
  const orgLength = buf.readUInt16BE(at);
  at += 2;
  need(orgLength + 8, at);
  const org = buf.toString('utf8', at, at + orgLength);
  at += orgLength;
  const session = buf.readUInt32BE(at);
  const count = buf.readUInt32BE(at + 4);
  at += 8;
  const entries: Batch['entries'] = [];
  for (let i = 0; i < count; i++) {
    need(12, at);
    const offset = buf.readDoubleBE(at);
    const length = buf.readUInt32BE(at + 8);
    at += 12;
    need(length, at);
    entries.push({ offset, record: buf.subarray(at, at + length) });
    at += length;
  }
  if (at !== buf.length) throw new Error('not a WAL batch (trailing bytes)');
  return { org, session, entries };
}

function decodeJsonBatch(buf: Buffer): Batch {
  const b = JSON.parse(buf.toString('utf8')) as { org: unknown; session: unknown; entries: Array<{ offset: number; record: string }> };
  if (typeof b?.org !== 'string' || typeof b.session !== 'number' || !Array.isArray(b.entries)) throw new Error('not a WAL batch');
  return { org: b.org, session: b.session, entries: b.entries.map((e) => ({ offset: Number(e.offset), record: Buffer.from(String(e.record), 'base64') })) };
}

// Acknowledgements and probes' answers are small and rare next to batches: JSON.
const json = (value: unknown) => Buffer.from(JSON.stringify(value));

export const encodeAck = (ack: Ack): Uint8Array => json(ack);
export function decodeAck(data: Uint8Array): Ack {
  const a = JSON.parse(Buffer.from(data).toString('utf8')) as Ack;
  if (typeof a?.org !== 'string' || typeof a.session !== 'number' || typeof a.offset !== 'number') throw new Error('not an acknowledgement');
  return a;
}
