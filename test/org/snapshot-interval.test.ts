// Periodic snapshots of a large organization are spaced by its size: every SERVICE_SNAPSHOT_INTERVAL entries,
// or a quarter of its persons' count if that is more, so their packing never outweighs the writes between them.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../../src/wal/store.js';
import { testRegistry } from '../support/registry.js';
import { removeDir, tempDir } from '../support/server.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

test('an organization of 100 to 200 persons with an interval of 2 is snapshotted every 25 to 50 entries', async () => {
  const dir = tempDir('identity-snapshot-interval-');
  dirs.push(dir);
  const store = openStore(dir, 'local', false);
  const registry = testRegistry(store, { snapshotInterval: 2 });
  try {
    assert.ok(await registry.bootstrap('root', 'key-0123456789abcdef'));
    const actor = registry.get('root');
    assert.ok(actor);
    const create = (i: number) => actor.execute({ kind: 'CreatePerson', input: { handles: [{ type: 'username', value: `p${i}` }] } });
    for (let i = 0; i < 100; i++) await create(i);
    const stored: number[] = [];
    const put = store.snapshots.put.bind(store.snapshots);
    store.snapshots.put = ((key: string, value: Buffer) => {
      stored.push(actor.state.offset);
      return put(key, value);
    }) as typeof store.snapshots.put;
    for (let i = 100; i < 200; i++) await create(i);
    // Every 2 entries would be 50 snapshots; a quarter of 100..200 persons is 25..50 entries: 2 to 4 of them.
    assert.ok(stored.length >= 2 && stored.length <= 4, `snapshots at offsets ${stored.join(', ')}`);
    for (let i = 1; i < stored.length; i++) assert.ok((stored[i] as number) - (stored[i - 1] as number) >= 25, `snapshots at offsets ${stored.join(', ')}`);
  } finally {
    await registry.stop();
    await store.close();
  }
});
