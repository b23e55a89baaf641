// The outbox's durable state on a real LMDB store: positions and dead letters survive a reopen, dead letters are
// updated and removed one by one, capped per webhook, and forgotten with their webhook.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createOutboxStore, type DeadLetter } from '../../src/wal/outbox-store.js';
import { openStore } from '../../src/wal/store.js';
import { removeDir, tempDir } from '../support/server.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) removeDir(dir);
});

const letter = (offset: number): DeadLetter => ({
  offset,
  event_name: 'PersonCreated_v1',
  event: { event_metadata: { event_name: 'PersonCreated_v1' }, person_id: `p${offset}` },
  attempts: 3,
  last_error: 'the receiver answered 500',
  failed_at: '2026-01-01T00:00:00.000Z',
  state: 'dead',
});

test('positions and dead letters survive a reopen', async () => {
  const dir = tempDir('outbox-store-');
  dirs.push(dir);
  let store = openStore(dir, 'local', true);
  let outbox = createOutboxStore(store);
  await outbox.savePositions([{ org: 'o1', webhook: 'w1', position: 7 }, { org: 'o2', webhook: 'w1', position: 3 }]);
  await outbox.savePositions([{ org: 'o1', webhook: 'w1', position: 9 }]);
  assert.deepEqual(await outbox.putDeadLetter('o1', 'w1', letter(4), 100), { created: true, dropped: 0 });
  assert.deepEqual(await outbox.putDeadLetter('o1', 'w1', letter(4), 100), { created: false, dropped: 0 });
  await outbox.putDeadLetter('o1', 'w2', letter(5), 100);
  await store.close();

  store = openStore(dir, 'local', true);
  outbox = createOutboxStore(store);
  assert.deepEqual(outbox.positions(), [
    { org: 'o1', webhook: 'w1', position: 9 },
    { org: 'o2', webhook: 'w1', position: 3 },
  ]);
  assert.deepEqual(outbox.deadLetter('o1', 'w1', 4), letter(4));
  assert.deepEqual(outbox.webhooksWithDeadLetters(), [['o1', 'w1'], ['o1', 'w2']]);
  await store.close();
});

test('dead letters: updated, removed, capped oldest first, forgotten with their webhook', async () => {
  const dir = tempDir('outbox-store-');
  dirs.push(dir);
  const store = openStore(dir, 'local', false);
  const outbox = createOutboxStore(store);
  for (const offset of [3, 11, 20]) await outbox.putDeadLetter('o', 'w', letter(offset), 3);
  await outbox.putDeadLetter('o', 'other', letter(1), 3);
  assert.deepEqual(outbox.deadLetterOffsets('o', 'w'), [3, 11, 20], 'in numeric order');
  assert.deepEqual(await outbox.putDeadLetter('o', 'w', letter(25), 3), { created: true, dropped: 1 });
  assert.deepEqual(outbox.deadLetterOffsets('o', 'w'), [11, 20, 25]);

  const updated = await outbox.updateDeadLetter('o', 'w', 11, (l) => ({ ...l, state: 'retrying' }));
  assert.equal(updated?.state, 'retrying');
  assert.equal(outbox.deadLetter('o', 'w', 11)?.state, 'retrying');
  assert.equal(await outbox.updateDeadLetter('o', 'w', 12, (l) => l), undefined);

  assert.equal(await outbox.removeDeadLetter('o', 'w', 20), true);
  assert.equal(await outbox.removeDeadLetter('o', 'w', 20), false);
  await outbox.savePositions([{ org: 'o', webhook: 'w', position: 30 }]);
  assert.equal(await outbox.forgetWebhook('o', 'w'), 2);
  assert.deepEqual(outbox.deadLetterOffsets('o', 'w'), []);
  assert.deepEqual(outbox.positions(), []);
  assert.deepEqual(outbox.deadLetterOffsets('o', 'other'), [1], "another webhook's dead letters stay");
  await store.close();
});
