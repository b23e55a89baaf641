// Record framing for everything the log stores: a CRC-32 of the payload, then the msgpack payload.
// The checksum is verified before a single byte is decoded, so a torn or corrupt record is never applied.
import { crc32 } from 'node:zlib';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Packr, RESERVE_START_SPACE } from 'msgpackr';

const packr = new Packr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });
/**
 * For large records of many like objects (snapshots: a person each): msgpackr's record extension writes each
 * shape's keys once, inline, instead of in every object, which halves a snapshot and its encoding time. The
 * definitions travel in the record itself, so decodeRecord reads it like any other.
 */
const recordsPackr = new Packr({ useRecords: true, mapsAsObjects: true, int64AsType: 'number' });

/**
 * msgpackr packs behind 4 reserved bytes, where the checksum goes: no second buffer, no copy. The record is
 * a slice of the packer's block, which later packs never write over (they continue after it).
 */
export function encodeRecord(value: unknown, shapes: 'maps' | 'records' = 'maps'): Buffer {
  const out = (shapes === 'records' ? recordsPackr : packr).pack(value, RESERVE_START_SPACE | 4);
  out.writeUInt32BE(crc32(out.subarray(4)), 0);
  return out;
}

/**
 * encodeRecord with `prefix` between the checksum and the msgpack payload (a few bytes: at most 251), the
 * checksum covering both: still one buffer, packed behind the reserved space. Read it with checkedPayload.
 */
export function encodeRecordAfter(prefix: Uint8Array, value: unknown): Buffer {
  const out = packr.pack(value, RESERVE_START_SPACE | (4 + prefix.byteLength));
  out.set(prefix, 4);
  out.writeUInt32BE(crc32(out.subarray(4)), 0);
  return out;
}

/** Items packed per turn of the event loop by encodeRecordInSlices: tens of milliseconds of work on a busy machine. */
const SLICE = 5_000;

/** msgpack's array header with a 32-bit length (valid for any length; decoders do not require the shortest form) */
function array32(length: number): Buffer {
  const b = Buffer.alloc(5);
  b[0] = 0xdd;
  b.writeUInt32BE(length, 1);
  return b;
}

/** Bytes of the array header msgpackr put in front of an array's items. */
function arrayHeaderLength(first: number): number {
  if (first >= 0x90 && first <= 0x9f) return 1;
  if (first === 0xdc) return 3;
  if (first === 0xdd) return 5;
  throw new Error(`not a msgpack array (first byte 0x${first.toString(16)})`);
}

/** A list packed a slice at a time: an array, or one whose items are read as they are packed. */
export interface SlicedList {
  readonly length: number;
  slice(from: number, to: number): unknown[];
  /** items a slice (default SLICE); 1 for lists of a few large items, such as groups with all their members */
  readonly per?: number;
}

/** Bytes copied into the record per turn once every slice is packed. */
const COPY_PER_TURN = 16 * 1024 * 1024;

/**
 * encodeRecord(value, 'records') of a record too large to pack in one turn (a snapshot of a million persons
 * takes seconds), letting the event loop run between slices. `value` is packed at once, its last encoded fields
 * empty arrays, one for each of `lists`; the lists are packed SLICE items at a time and spliced in, in order,
 * where those empty arrays were. Each slice carries the definitions of its shapes (msgpackr redefines a record
 * id where it meets a definition), so decodeRecord reads the result like any other record. Whatever a list
 * yields must not change once yielded; everything else in `value` is packed before the first await.
 */
export async function encodeRecordInSlices(value: unknown, lists: readonly SlicedList[]): Promise<Buffer> {
  const head = recordsPackr.pack(value);
  const k = lists.length;
  for (let i = 1; i <= k; i++) if (head[head.length - i] !== 0x90) throw new Error('encodeRecordInSlices: the last fields packed must be empty arrays, one per list');
  const parts: Buffer[] = [Buffer.alloc(4), head.subarray(0, head.length - k)];
  let crc = crc32(parts[1] as Buffer);
  for (const list of lists) {
    const header = array32(list.length);
    crc = crc32(header, crc);
    parts.push(header);
    const per = list.per ?? SLICE;
    for (let i = 0; i < list.length; i += per) {
      await nextTurn();
      const packed = recordsPackr.pack(list.slice(i, Math.min(list.length, i + per)));
      const slice = packed.subarray(arrayHeaderLength(packed[0] as number));
      crc = crc32(slice, crc);
      parts.push(slice);
    }
  }
  // Buffer.concat, a turn per COPY_PER_TURN bytes: at a million persons the record is a quarter of a gigabyte.
  const out = Buffer.allocUnsafe(parts.reduce((n, b) => n + b.length, 0));
  let at = 0;
  let sinceTurn = 0;
  for (const part of parts) {
    if (sinceTurn >= COPY_PER_TURN) {
      await nextTurn();
      sinceTurn = 0;
    }
    at += part.copy(out, at);
    sinceTurn += part.length;
  }
  out.writeUInt32BE(crc, 0);
  return out;
}

export class CorruptRecordError extends Error {
  override name = 'CorruptRecordError';
}

/** The payload of a framed record (everything after the checksum), once the checksum is verified. */
export function checkedPayload(bytes: Uint8Array): Buffer {
  if (bytes.length < 5) throw new CorruptRecordError(`record of ${bytes.length} bytes is too short`);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const payload = buf.subarray(4);
  if (crc32(payload) !== buf.readUInt32BE(0)) throw new CorruptRecordError('record checksum mismatch');
  return payload;
}

/** Decodes msgpack bytes of a payload already verified (checkedPayload). */
export function unpackPayload<T>(payload: Uint8Array): T {
  try {
    return packr.unpack(payload) as T;
  } catch (cause) {
    throw new CorruptRecordError('record payload does not decode', { cause });
  }
}

export function decodeRecord<T>(bytes: Uint8Array): T {
  return unpackPayload<T>(checkedPayload(bytes));
}
