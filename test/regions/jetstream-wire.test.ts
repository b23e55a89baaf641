// What crosses NATS between an origin and a replica region: batches and acknowledgements survive the trip
// byte for byte, a batch's Msg-Id names its organization and offsets, and anything else is refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeAck, decodeBatch, encodeAck, encodeBatch, msgId, walSubject } from '../../src/regions/jetstream/wire.js';

test('a batch and an acknowledgement round-trip; the Msg-Id is the organization and its offsets', () => {
  const batch = { org: 'org-1', session: 3, entries: [{ offset: 7, record: Buffer.from([0, 1, 255, 10]) }, { offset: 8, record: Buffer.from('x') }] };
  const back = decodeBatch(encodeBatch(batch));
  assert.deepEqual(back, batch);
  assert.ok(Buffer.isBuffer(back.entries[0]?.record));
  assert.equal(msgId(batch), 'org-1:7-8');
  assert.equal(walSubject('europe-belgium', 'org-1'), 'wal.europe-belgium.org-1');
  assert.deepEqual(decodeAck(encodeAck({ org: 'org-1', session: 3, offset: 8 })), { org: 'org-1', session: 3, offset: 8 });
});

test('what is not a batch or an acknowledgement is refused', () => {
  assert.throws(() => decodeBatch(Buffer.from('{"org":1}')), /not a WAL batch/);
  assert.throws(() => decodeAck(Buffer.from('{"org":"a","session":1}')), /not an acknowledgement/);
  assert.throws(() => decodeBatch(Buffer.from('nope')));
});
