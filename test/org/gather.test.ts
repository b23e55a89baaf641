// The actor's mailbox batches by what arrives, counted in event-loop turns, not by time: a lone request after a
// large commit waits for the clients that commit answered, and one after a small commit goes at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createGatheringQueue } from '../../src/org/gather.js';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await turn();
}

/** A queue whose commits are resolved by the test; `batches` has each batch as committed. */
function controlledQueue() {
  const batches: number[][] = [];
  const pending: Array<() => void> = [];
  // A deadline far beyond anything the test waits: only turns decide.
  const queue = createGatheringQueue<number>((batch) => {
    batches.push(batch);
    return new Promise<void>((resolve) => pending.push(resolve));
  }, 60_000);
  const finish = () => (pending.shift() as () => void)();
  return { queue, batches, finish };
}

async function until(what: string, ready: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !ready(); i++) await turn();
  assert.ok(ready(), what);
}

test('after a commit of ten, a lone request waits for the nine its answers bring back', async () => {
  const { queue, batches, finish } = controlledQueue();
  for (let i = 0; i < 10; i++) queue.push(i);
  await until('the first batch', () => batches.length === 1);
  queue.push(10); // arrived while the first commit was in flight
  finish();
  // The nine answered clients come back a few turns later, as over a socket.
  await turns(5);
  assert.equal(batches.length, 1, 'the lone request did not go on its own');
  for (let i = 11; i < 20; i++) queue.push(i);
  await until('the second batch', () => batches.length === 2);
  assert.deepEqual(batches[1], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
  finish();
  await until('drained', () => !queue.draining);
});

test('after a commit of one, the next lone request goes at once', async () => {
  const { queue, batches, finish } = controlledQueue();
  queue.push(1);
  await until('the first batch', () => batches.length === 1);
  queue.push(2);
  finish();
  await until('the second batch, without waiting for more', () => batches.length === 2);
  assert.deepEqual(batches, [[1], [2]]);
  finish();
  await until('drained', () => !queue.draining);
});

test('a batch that reaches half the last one ends at the first quiet turn', async () => {
  const { queue, batches, finish } = controlledQueue();
  for (let i = 0; i < 8; i++) queue.push(i);
  await until('the first batch', () => batches.length === 1);
  for (let i = 8; i < 12; i++) queue.push(i);
  finish();
  await until('the second batch of four', () => batches.length === 2);
  assert.deepEqual(batches[1], [8, 9, 10, 11]);
  finish();
  await until('drained', () => !queue.draining);
});
