// Used one-time values in the data dir: a value is refused again by a guard opened later on the same store,
// each kind keeps its own values, and expired ones leave the database (at the next start, or when swept).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore, type Store } from '../../src/wal/store.js';
import { createUsedOnce } from '../../src/wal/used-once.js';
import { movableClock } from '../support/clock.js';
import { removeDir, tempDir } from '../support/server.js';

const dir = tempDir('used-once-');
const stored = (store: Store) => [...store.usedOnce.getKeys({ start: 'client_assertion\u001f', end: 'client_assertion\u001f\uffff' })].length;
after(() => removeDir(dir));

test('a used value is refused by the next guard on the same data dir until it expires, and then dropped', async () => {
  const clock = movableClock();
  const nowS = () => Math.floor(clock.nowMs() / 1000);
  let store = openStore(dir, 'local', true);
  const first = createUsedOnce(clock, store.usedOnce, 'client_assertion');
  assert.equal(await first.firstUse('client\u0000jti-1', nowS() + 60), true);
  assert.equal(await first.firstUse('client\u0000jti-1', nowS() + 60), false, 'a replay in the same process');
  assert.equal(await first.firstUse('client\u0000jti-2', nowS() + 5), true);
  assert.equal(stored(store), 2);
  assert.ok(![...store.usedOnce.getKeys()].some((k) => k.includes('jti-1')), 'stored as digests');
  await store.close();

  store = openStore(dir, 'local', true);
  const again = createUsedOnce(clock, store.usedOnce, 'client_assertion');
  assert.equal(again.size, 2);
  assert.equal(await again.firstUse('client\u0000jti-1', nowS() + 60), false, 'a replay after the restart');
  assert.equal(await createUsedOnce(clock, store.usedOnce, 'dpop').firstUse('client\u0000jti-1', nowS() + 60), true, 'another kind has its own values');
  assert.equal(await again.firstUse('client\u0000jti-3', nowS() + 60), true, 'a new value after the restart');

  // jti-2 expires: the next sweep (at most once a second) drops it from memory and from the database
  clock.advance(10_000);
  assert.equal(await again.firstUse('client\u0000jti-4', nowS() + 60), true);
  await store.usedOnce.flushed;
  assert.equal(stored(store), 3);
  // a value of a later format is left alone, neither read nor removed
  await store.usedOnce.put('client_assertion\u001ffuture', Buffer.from([2, 0, 0, 0, 0, 0]));
  await store.close();

  // past every expiry, a start drops what is left
  clock.advance(120_000);
  store = openStore(dir, 'local', true);
  assert.equal(createUsedOnce(clock, store.usedOnce, 'client_assertion').size, 0);
  await store.usedOnce.flushed;
  assert.equal(stored(store), 1);
  assert.ok(store.usedOnce.get('client_assertion\u001ffuture'), 'the later format is kept');
  await store.close();
});
