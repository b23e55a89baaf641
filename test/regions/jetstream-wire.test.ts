// What crosses NATS between an origin and a replica region: batches and acknowledgements survive the trip
// byte for byte, a batch's Msg-Id names its organization, offsets and publish, and anything else is refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeAck, decodeBatch, encodeAck, encodeBatch, msgId, walSubject } from '../../src/regions/jetstream/wire.js';

const batch = { org: 'org-1', session: 3, entries: [{ offset: 7, record: Buffer.from([0, 1, 255, 10]) }, { offset: 2 ** 40, record: Buffer.from('x') }] };

test('a batch and an acknowledgement round-trip; the Msg-Id is the organization, its offsets and the publish', () => {
  const back = decodeBatch(encodeBatch(batch));
  assert.deepEqual(back, batch);
  assert.ok(Buffer.isBuffer(back.entries[0]?.record));
  assert.deepEqual(decodeBatch(encodeBatch({ org: 'ünï', session: 0, entries: [] })), { org: 'ünï', session: 0, entries: [] });
  assert.equal(msgId('org-1', 7, 2 ** 40, 12), `org-1:7-${2 ** 40}/12`);
  assert.equal(walSubject('europe-belgium', 'org-1'), 'wal.europe-belgium.org-1');
  assert.deepEqual(decodeAck(encodeAck({ org: 'org-1', session: 3, offset: 8 })), { org: 'org-1', session: 3, offset: 8 });
});

test('a decoded batch keeps its records when the message buffer is reused', () => {
  const data = Buffer.from(encodeBatch(batch));
  const back = decodeBatch(data);
  data.fill(0);
  assert.deepEqual(back, batch);
});

test('a batch published in the JSON framing of earlier versions still reads', () => {
  const old = Buffer.from(JSON.stringify({ org: 'org-1', session: 3, entries: batch.entries.map((e) => ({ offset: e.offset, record: e.record.toString('base64') })) }));
  assert.deepEqual(decodeBatch(old), batch);
});

test('what is not a batch or an acknowledgement is refused', () => {
  assert.throws(() => decodeBatch(Buffer.from('{"org":1}')), /not a WAL batch/);
  assert.throws(() => decodeAck(Buffer.from('{"org":"a","session":1}')), /not an acknowledgement/);
  assert.throws(() => decodeBatch(Buffer.from('nope')), /not a WAL batch/);
  const whole = Buffer.from(encodeBatch(batch));
  assert.throws(() => decodeBatch(whole.subarray(0, whole.length - 1)), /truncated/);
  assert.throws(() => decodeBatch(Buffer.concat([whole, Buffer.from([0])])), /trailing/);
});
