// Record framing for everything the log stores: a CRC-32 of the payload, then the msgpack payload.
// The checksum is verified before a single byte is decoded, so a torn or corrupt record is never applied.
import { crc32 } from 'node:zlib';
import { Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });

export function encodeRecord(value: unknown): Buffer {
  const payload = packr.pack(value);
  const out = Buffer.allocUnsafe(payload.length + 4);
  out.writeUInt32BE(crc32(payload), 0);
  payload.copy(out, 4);
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
