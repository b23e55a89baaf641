// The origin's one writer to its WAL stream, against a stand-in for the JetStream client that fails the
// publishes a test names: after a failure, everything from the failed batch on reaches the stream again, in
// order, so no replica is left with a gap; every publish has its own Msg-Id (a resend is never taken for a
// duplicate); and the links of several regions share the stream: each batch is stored once, a resend again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { createOriginTransport, createPublisher } from '../../src/regions/jetstream/origin.js';
import { decodeBatch } from '../../src/regions/jetstream/wire.js';
import type { Batch } from '../../src/regions/transport.js';

interface Stored {
  first: number;
  last: number;
  msgID: string;
}

/** A stream that stores what it is sent, in order, except the publishes `fail` says no to (by call number). */
function fakeStream(fail: (call: number) => boolean = () => false) {
  const stored: Stored[] = [];
  let calls = 0;
  const js = {
    publish(_subject: string, data: Uint8Array, options: { msgID: string }) {
      const call = ++calls;
      const batch = decodeBatch(data);
      return new Promise((resolve, reject) =>
        setImmediate(() => {
          if (fail(call)) return reject(new Error('timeout'));
          stored.push({ first: batch.entries[0]?.offset ?? 0, last: batch.entries[batch.entries.length - 1]?.offset ?? 0, msgID: options.msgID });
          resolve({ seq: stored.length, stream: 'WAL_o', duplicate: false });
        }),
      );
    },
  } as unknown as JetStreamClient;
  const ready = { nc: { publish() {}, subscribe() {} } as unknown as NatsConnection, js };
  return { stored, ready, calls: () => calls };
}

const batch = (org: string, first: number, last: number): Batch => ({ org, session: 1, entries: Array.from({ length: last - first + 1 }, (_, i) => ({ offset: first + i, record: Buffer.from([i]) })) });

async function until(check: () => boolean, what: string) {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Applies the stored batches as a replica does: in stream order, by offset, skipping what it has, stopping at a gap. */
function replicaOffset(stored: Stored[]): number {
  let at = 0;
  for (const s of stored) if (s.first <= at + 1 && s.last > at) at = s.last;
  return at;
}

test('a failed publish: everything from it on is published again, in order, and the replica has no gap', async () => {
  // The second publish fails while the third is stored: the stream now has a gap before batch 3.
  const stream = fakeStream((call) => call === 2);
  const warnings: string[] = [];
  const publisher = createPublisher(() => stream.ready, Promise.resolve(stream.ready), 'o', (m) => warnings.push(m));
  for (let i = 0; i < 5; i++) publisher.publish(batch('org', i * 10 + 1, i * 10 + 10));
  await until(() => replicaOffset(stream.stored) === 50, 'every batch applied');
  assert.deepEqual(
    stream.stored.map((s) => s.first),
    [1, 21, 31, 41, 11, 21, 31, 41],
    'the batches after the failed one were stored before it, and again after it',
  );
  assert.equal(new Set(stream.stored.map((s) => s.msgID)).size, stream.stored.length, 'each publish has its own Msg-Id');
  assert.match(stream.stored[1]?.msgID as string, /^org:21-30\/3$/);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.equal(publisher.published('org'), 50);
  publisher.close();
});

test('publishes that keep failing are retried, with pauses, until the stream takes them', async () => {
  const stream = fakeStream((call) => call <= 3);
  const publisher = createPublisher(() => stream.ready, Promise.resolve(stream.ready), 'o', () => {});
  publisher.publish(batch('org', 1, 5));
  publisher.publish(batch('org', 6, 9));
  await until(() => replicaOffset(stream.stored) === 9, 'both batches stored');
  // Call 4 (the second batch's retry) succeeded while call 3 (the first's) failed: both again, in order.
  assert.deepEqual(stream.stored.map((s) => s.first), [6, 1, 6]);
  publisher.close();
});

test('the links of two regions share the stream: each batch is stored once, a resend again', async () => {
  const stream = fakeStream();
  const publisher = createPublisher(() => stream.ready, Promise.resolve(stream.ready), 'o', () => {});
  const ready = Promise.resolve(stream.ready);
  const a = createOriginTransport(() => stream.ready, ready, publisher, 'o', 'a', () => {});
  const b = createOriginTransport(() => stream.ready, ready, publisher, 'o', 'b', () => {});
  a.send(batch('org', 1, 10));
  b.send(batch('org', 1, 10)); // already published by a's link: nothing new
  b.send(batch('org', 11, 15)); // new: published
  a.send(batch('org', 11, 20)); // 11..15 are on their way: 16..20
  a.send(batch('org', 1, 20)); // a's link sends again what it sent: a resend, stored again in full
  await until(() => stream.stored.length === 4, 'four publishes');
  assert.deepEqual(
    stream.stored.map((s) => [s.first, s.last]),
    [
      [1, 10],
      [11, 15],
      [16, 20],
      [1, 20],
    ],
  );
  a.close();
  b.close();
  publisher.close();
});
