// An event as the log stores it: the event and its chain link in one record, so a write puts one key per event.
// A chained event is kept as the protobuf bytes its link was computed over (format 2): one encoding serves the
// chain and the record, and a verifier hashes exactly what is stored. Records of earlier formats are read as
// they are (format 0: the framed msgpack event alone, its link, if any, in the chains database; format 1: the
// link, then the msgpack event); nothing rewrites them.
import { crc32 } from 'node:zlib';
import { checkedPayload, CorruptRecordError, encodeRecord, encodeRecordAfter, unpackPayload } from './codec.js';

/**
 * First payload byte of a versioned event record: 0xc1 is the one byte msgpack never uses, so no format-0
 * record (a msgpack map: 0x80–0x8f, 0xde or 0xdf) begins with it. The format's version follows it.
 */
const MARK = 0xc1;
/** format 1: MARK, 1, the 32-byte link, the msgpack event */
const LINKED = 1;
/** format 2: MARK, 2, the 32-byte link, the message name (a length byte, then ASCII), the event's protobuf bytes */
const WIRE = 2;
const LINK_BYTES = 32;
const HEADER = 2 + LINK_BYTES;
/** the checksum in front of every framed record (codec.ts) */
const CHECKSUM = 4;

/** An event in its protobuf encoding: the bytes and the message they are an encoding of. */
export interface WireEvent {
  name: string;
  bytes: Uint8Array;
}

/** Turns a format-2 record's protobuf bytes back into the event (the events codec: the WAL does not know protobuf). */
export type WireDecoder = (name: string, bytes: Uint8Array) => unknown;

export interface StoredEvent {
  event: unknown;
  /** absent in a format-0 record: the link, if any, is in the chains database */
  chain?: Buffer;
  /** a format-2 record's protobuf bytes, from which `event` was decoded */
  wire?: WireEvent;
}

function noDecoder(): never {
  throw new Error('an event record holds protobuf bytes, and this log was opened without a decoder for them');
}

/** The header of a format-1 record, its link rewritten for each (encoding is synchronous: one at a time). */
const prefix = Buffer.from([MARK, LINKED, ...Buffer.alloc(LINK_BYTES)]);

/**
 * With a link and the protobuf bytes it was computed over, a format-2 record; with a link alone, a format-1
 * record; without one (a log kept without a chain), the format-0 record.
 */
export function encodeEventRecord(event: unknown, chain?: Uint8Array, wire?: WireEvent): Buffer {
  if (chain === undefined) return encodeRecord(event);
  if (chain.byteLength !== LINK_BYTES) throw new RangeError(`a chain link is ${LINK_BYTES} bytes, not ${chain.byteLength}`);
  if (wire !== undefined) return encodeWireRecord(chain, wire);
  prefix.set(chain, 2);
  return encodeRecordAfter(prefix, event);
}

/** The record is laid out by hand: it is bytes already, and msgpack would only wrap them. */
function encodeWireRecord(chain: Uint8Array, wire: WireEvent): Buffer {
  const { name, bytes } = wire;
  if (name.length === 0 || name.length > 255) throw new RangeError(`an event's message name is 1 to 255 characters, not ${name.length}`);
  const at = CHECKSUM + HEADER + 1 + name.length;
  const out = Buffer.allocUnsafe(at + bytes.byteLength);
  out[CHECKSUM] = MARK;
  out[CHECKSUM + 1] = WIRE;
  out.set(chain, CHECKSUM + 2);
  out[CHECKSUM + HEADER] = name.length;
  // Message names are the catalog's ASCII identifiers: one byte a character.
  out.write(name, CHECKSUM + HEADER + 1, 'latin1');
  out.set(bytes, at);
  out.writeUInt32BE(crc32(out.subarray(CHECKSUM)), 0);
  return out;
}

/** Verifies and decodes an event record of any format; a format-2 record's event is decoded by `decode`. */
export function decodeEventRecord(bytes: Uint8Array, decode: WireDecoder = noDecoder): StoredEvent {
  const payload = checkedPayload(bytes);
  if (payload[0] !== MARK) return { event: unpackPayload(payload) };
  const chain = linkOf(payload);
  if (payload[1] === LINKED) return { event: unpackPayload(payload.subarray(HEADER)), chain };
  const wire = wireOf(payload);
  let event: unknown;
  try {
    event = decode(wire.name, wire.bytes);
  } catch (cause) {
    if (decode === noDecoder) throw cause;
    throw new CorruptRecordError(`event record's ${wire.name} bytes do not decode`, { cause });
  }
  return { event, chain, wire };
}

/** The format of a record (verified): 0, 1 or 2 (see above). */
export function eventRecordFormat(bytes: Uint8Array): number {
  const payload = checkedPayload(bytes);
  return payload[0] === MARK ? (payload[1] as number) : 0;
}

/** The link a record carries (verified), or undefined for a format-0 record. */
export function eventRecordLink(bytes: Uint8Array): Buffer | undefined {
  const payload = checkedPayload(bytes);
  return payload[0] === MARK ? linkOf(payload) : undefined;
}

function linkOf(payload: Buffer): Buffer {
  if (payload[1] !== LINKED && payload[1] !== WIRE) throw new CorruptRecordError(`event record of unknown format ${payload[1]}`);
  if (payload.length < HEADER + 1) throw new CorruptRecordError(`event record of ${payload.length} bytes is too short`);
  // A copy: LMDB may hand out bytes it reuses.
  return Buffer.from(payload.subarray(2, HEADER));
}

function wireOf(payload: Buffer): WireEvent {
  const length = payload[HEADER] as number;
  const at = HEADER + 1 + length;
  if (length === 0 || payload.length < at) throw new CorruptRecordError(`event record's message name of ${length} bytes does not fit its ${payload.length}`);
  // A copy, as for the link.
  return { name: payload.toString('latin1', HEADER + 1, at), bytes: Buffer.from(payload.subarray(at)) };
}
