// Record framing for everything the log stores: a CRC-32 of the payload, then the msgpack payload.
// The checksum is verified before a single byte is decoded, so a torn or corrupt record is never applied.
import { crc32 } from 'node:zlib';
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

export class CorruptRecordError extends Error {
  override name = 'CorruptRecordError';
}

export function decodeRecord<T>(bytes: Uint8Array): T {
  if (bytes.length < 5) throw new CorruptRecordError(`record of ${bytes.length} bytes is too short`);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const payload = buf.subarray(4);
  const expected = buf.readUInt32BE(0);
  if (crc32(payload) !== expected) throw new CorruptRecordError('record checksum mismatch');
  try {
    return packr.unpack(payload) as T;
  } catch (cause) {
    throw new CorruptRecordError('record payload does not decode', { cause });
  }
}
