import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { Packr } from 'msgpackr';
import { CorruptRecordError, decodeRecord, encodeRecord } from '../../src/wal/codec.js';

const entry = {
  at: 1_760_000_000_123,
  ev: 2 ** 40,
  changes: [
    { t: 'PersonCreated', person: { person_id: '0199-a', handles: [{ type: 'email_address', value: 'zoë@example.com' }], groups: [], attributes: { b: { n: -1.5, deep: { list: [1, 'two', null, true] } } } } },
    { t: 'AttributesDeleted', bucket: 'end_user_read_write' },
  ],
};

test('given any log value, when encoded and decoded, then it comes back equal', () => {
  for (const value of [entry, null, 0, -7, 2 ** 53 - 1, 'text', [], {}, { nested: { empty: '' } }]) {
    assert.deepEqual(decodeRecord(encodeRecord(value)), value);
  }
});

test('given a record, then it is a big-endian CRC-32 of the payload followed by the payload', () => {
  const record = encodeRecord(entry);
  assert.equal(record.readUInt32BE(0), crc32(record.subarray(4)));
});

test('given a flipped byte that still decodes, when decoded, then the checksum refuses it before msgpack sees it', () => {
  const record = encodeRecord({ name: 'aaaa' });
  const i = record.indexOf('aaaa');
  const damaged = Buffer.from(record);
  damaged[i] = 'b'.charCodeAt(0);
  // The payload alone is valid msgpack for another value: only the checksum stands between it and the state.
  assert.deepEqual(new Packr({ useRecords: false }).unpack(damaged.subarray(4)), { name: 'baaa' });
  assert.throws(() => decodeRecord(damaged), { name: 'CorruptRecordError', message: 'record checksum mismatch' });
});

test('given a damaged checksum, when decoded, then it is a checksum mismatch', () => {
  const record = Buffer.from(encodeRecord(entry));
  record[0] = (record[0] as number) ^ 0x01;
  assert.throws(() => decodeRecord(record), CorruptRecordError);
});

test('given a torn record, when decoded, then every prefix is refused', () => {
  const record = encodeRecord(entry);
  for (let n = 0; n < record.length; n++) {
    assert.throws(() => decodeRecord(record.subarray(0, n)), CorruptRecordError, `prefix of ${n} bytes`);
  }
  assert.throws(() => decodeRecord(record.subarray(0, 4)), { message: 'record of 4 bytes is too short' });
});

test('given a payload whose checksum matches but that is not msgpack, when decoded, then it is refused as undecodable', () => {
  const payload = Buffer.from([0x92, 0x01]); // an array of two items that ends after the first
  const record = Buffer.alloc(4 + payload.length);
  record.writeUInt32BE(crc32(payload), 0);
  payload.copy(record, 4);
  assert.throws(() => decodeRecord(record), { name: 'CorruptRecordError', message: 'record payload does not decode' });
});

test('given a record inside a larger buffer, when decoded from a view, then only the view is read', () => {
  const record = encodeRecord(entry);
  const big = Buffer.concat([Buffer.from('junk'), record, Buffer.from('more junk')]);
  assert.deepEqual(decodeRecord(new Uint8Array(big.buffer, big.byteOffset + 4, record.length)), entry);
});

test('given records encoded one after another, then each keeps its own bytes: the framing of a plain msgpack payload', () => {
  const plain = new Packr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });
  const values = Array.from({ length: 3000 }, (_, i) => ({ i, text: 'x'.repeat(i % 300), entry }));
  const records = values.map((v) => encodeRecord(v));
  records.forEach((record, i) => {
    const payload = Buffer.from(plain.pack(values[i]));
    assert.equal(record.length, payload.length + 4);
    assert.ok(record.subarray(4).equals(payload), `record ${i} holds exactly its payload`);
    assert.equal(record.readUInt32BE(0), crc32(payload));
    assert.deepEqual(decodeRecord(record), values[i]);
  });
});
