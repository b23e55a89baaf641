// Used one-time values in the data dir: a value is refused again by a guard opened later on the same store,
// each kind keeps its own values, and expired ones leave the database (at the next start, or when swept).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUsedOnce, openUsedOnceStore, type UsedOnceStore } from '../../src/wal/used-once.js';
import { movableClock } from '../support/clock.js';
import { removeDir, tempDir } from '../support/server.js';

const dir = tempDir('used-once-');
const stored = (store: UsedOnceStore) => [...store.db.getKeys({ start: 'client_assertion\u001f', end: 'client_assertion\u001f\uffff' })].length;
after(() => removeDir(dir));

test('a used value is refused by the next guard on the same data dir until it expires, and then dropped', async () => {
  const clock = movableClock();
  const nowS = () => Math.floor(clock.nowMs() / 1000);
  let store = openUsedOnceStore(dir);
  const first = createUsedOnce(clock, store.db, 'client_assertion');
  assert.equal(await first.firstUse('client\u0000jti-1', nowS() + 60), true);
  assert.equal(await first.firstUse('client\u0000jti-1', nowS() + 60), false, 'a replay in the same process');
  assert.equal(await first.firstUse('client\u0000jti-2', nowS() + 5), true);
  assert.equal(stored(store), 2);
  assert.ok(![...store.db.getKeys()].some((k) => k.includes('jti-1')), 'stored as digests');
  await store.close();

  store = openUsedOnceStore(dir);
  const again = createUsedOnce(clock, store.db, 'client_assertion');
  assert.equal(again.size, 2);
  assert.equal(await again.firstUse('client\u0000jti-1', nowS() + 60), false, 'a replay after the restart');
  assert.equal(await createUsedOnce(clock, store.db, 'dpop').firstUse('client\u0000jti-1', nowS() + 60), true, 'another kind has its own values');
  assert.equal(await again.firstUse('client\u0000jti-3', nowS() + 60), true, 'a new value after the restart');

  // jti-2 expires: the next sweep (at most once a second) drops it from memory and from the database
  clock.advance(10_000);
  assert.equal(await again.firstUse('client\u0000jti-4', nowS() + 60), true);
  await store.db.flushed;
  assert.equal(stored(store), 3);
  // a value of a later format is left alone, neither read nor removed
  await store.db.put('client_assertion\u001ffuture', Buffer.from([2, 0, 0, 0, 0, 0]));
  await store.close();

  // past every expiry, a start drops what is left
  clock.advance(120_000);
  store = openUsedOnceStore(dir);
  assert.equal(createUsedOnce(clock, store.db, 'client_assertion').size, 0);
  await store.db.flushed;
  assert.equal(stored(store), 1);
  assert.ok(store.db.get('client_assertion\u001ffuture'), 'the later format is kept');
  await store.close();
});
