// An event as the log stores it: the event and its chain link in one record, so a write puts one key per event.
// Records written before links moved in (format 0: the framed msgpack event alone, its link, if any, in the
// chains database) are read as they are; nothing rewrites them.
import { checkedPayload, CorruptRecordError, encodeRecord, encodeRecordAfter, unpackPayload } from './codec.js';

/**
 * First payload byte of a versioned event record: 0xc1 is the one byte msgpack never uses, so no format-0
 * record (a msgpack map: 0x80–0x8f, 0xde or 0xdf) begins with it. The format's version follows it.
 */
const MARK = 0xc1;
/** format 1: MARK, 1, the 32-byte link, the msgpack event */
const LINKED = 1;
const LINK_BYTES = 32;
const HEADER = 2 + LINK_BYTES;

export interface StoredEvent {
  event: unknown;
  /** absent in a format-0 record: the link, if any, is in the chains database */
  chain?: Buffer;
}

/** The header of a format-1 record, its link rewritten for each (encoding is synchronous: one at a time). */
const prefix = Buffer.from([MARK, LINKED, ...Buffer.alloc(LINK_BYTES)]);

/** With a link, a format-1 record; without one (a log kept without a chain), the format-0 record. */
export function encodeEventRecord(event: unknown, chain?: Uint8Array): Buffer {
  if (chain === undefined) return encodeRecord(event);
  if (chain.byteLength !== LINK_BYTES) throw new RangeError(`a chain link is ${LINK_BYTES} bytes, not ${chain.byteLength}`);
  prefix.set(chain, 2);
  return encodeRecordAfter(prefix, event);
}

/** Verifies and decodes an event record of any format. */
export function decodeEventRecord(bytes: Uint8Array): StoredEvent {
  const payload = checkedPayload(bytes);
  if (payload[0] !== MARK) return { event: unpackPayload(payload) };
  const chain = linkOf(payload);
  return { event: unpackPayload(payload.subarray(HEADER)), chain };
}

/** The link a record carries (verified), or undefined for a format-0 record. */
export function eventRecordLink(bytes: Uint8Array): Buffer | undefined {
  const payload = checkedPayload(bytes);
  return payload[0] === MARK ? linkOf(payload) : undefined;
}

function linkOf(payload: Buffer): Buffer {
  if (payload[1] !== LINKED) throw new CorruptRecordError(`event record of unknown format ${payload[1]}`);
  if (payload.length < HEADER + 1) throw new CorruptRecordError(`event record of ${payload.length} bytes is too short`);
  // A copy: LMDB may hand out bytes it reuses.
  return Buffer.from(payload.subarray(2, HEADER));
}
