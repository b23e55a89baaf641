// WAL compaction over the real service: an organization written for a long time keeps only the entries after its
// newest snapshot, a restart rebuilds the same state from that snapshot and tail, entries a replica region has not
// yet applied stay until it has, and a compacted log whose snapshot is lost refuses to start instead of cutting.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../../src/wal/store.js';
import { readLog, setLink, startRegionServer, waitFor, caughtUp, EVENTUALLY_MS } from '../support/regions.js';
import { email, removeDir, ROOT_ORG, startTestServer, tempDir, type TestServer } from '../support/server.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

/** Snapshots every 20 entries; compaction only when the test asks for it. */
const ENV = { SERVICE_SNAPSHOT_INTERVAL: '20', SERVICE_WAL_COMPACT_INTERVAL_MS: '0', SERVICE_DURABILITY: 'nosync' };

async function writeMany(server: TestServer, n: number, prefix: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await server.client.post('/persons', email(`${prefix}-${i}@example.com`));
    assert.equal(res.status, 201, res.text);
    ids.push(res.body.result.person_id);
  }
  return ids;
}

/** The offsets of the root organization's entries in a stopped data dir's log. */
async function offsetsIn(dataDir: string, storeName = 'local'): Promise<number[]> {
  return ((await readLog(dataDir, storeName)).get(ROOT_ORG) ?? []).map(([offset]) => offset);
}

describe('WAL compaction', () => {
  test('given an organization written for a long time, when compacted, then only the entries after its last snapshot remain, and a restart serves the same state', async () => {
    const dataDir = tempDir('identity-compaction-');
    dirs.push(dataDir);
    let server = await startTestServer(ENV, {}, dataDir);
    let ids: string[];
    let offset: number;
    let snapshotAt: number;
    try {
      ids = await writeMany(server, 250, 'long');
      // the snapshot is written beside the commit that crossed the interval; wait until it is durable
      const actor = server.service.registry.get(ROOT_ORG);
      assert.ok(actor);
      offset = actor.durableOffset;
      await waitFor(() => server.service.wal.snapshotOffset(ROOT_ORG) >= offset - 20, EVENTUALLY_MS, 'the last snapshot');
      snapshotAt = server.service.wal.snapshotOffset(ROOT_ORG);
      const removed = await server.service.compaction.compact();
      assert.ok(removed >= snapshotAt - 1, `removed ${removed} entries, snapshot at ${snapshotAt}`);
      assert.equal(server.service.wal.firstOffset(ROOT_ORG), snapshotAt < offset ? snapshotAt + 1 : undefined);
      // compaction never blocks the next write
      ids.push(...(await writeMany(server, 5, 'after')));
    } finally {
      await server.stop();
    }
    const stopped = await offsetsIn(dataDir);
    // a clean stop writes a final snapshot; the log holds nothing older than the one compaction went by
    assert.ok(stopped.every((o) => o > snapshotAt), `entries at or before ${snapshotAt} remain: ${stopped.slice(0, 5).join(', ')}`);
    assert.ok(stopped.length < 30, `${stopped.length} entries kept`);

    server = await startTestServer(ENV, {}, dataDir);
    try {
      const actor = server.service.registry.get(ROOT_ORG);
      assert.ok(actor && actor.state.offset >= offset + 5);
      for (const id of [ids[0], ids[100], ids.at(-1)] as string[]) {
        const res = await server.client.get(`/persons/${id}`);
        assert.equal(res.status, 200, res.text);
      }
      const more = await server.client.post('/persons', email('after-restart@example.com'));
      assert.equal(more.status, 201, more.text);
    } finally {
      await server.stop();
    }
  });

  test('given a replica region whose link is cut, when compacted, then the entries it has not applied stay until it has', async () => {
    const dataDir = tempDir('identity-compaction-');
    dirs.push(dataDir);
    const server = await startRegionServer(ENV, dataDir);
    try {
      await writeMany(server, 30, 'before');
      await waitFor(() => caughtUp(server.base), EVENTUALLY_MS, 'the replicas');
      const cut = await setLink(server.base, 'us-iowa', { link: 'cut' });
      assert.equal(cut.status, 200);
      const acked = server.service.regions.link('us-iowa')?.acked(ROOT_ORG) ?? 0;
      await writeMany(server, 60, 'cut');
      await waitFor(() => server.service.wal.snapshotOffset(ROOT_ORG) > acked + 20, EVENTUALLY_MS, 'a snapshot past the cut');
      await server.service.compaction.compact();
      // nothing us-iowa still needs is gone: the link resends from its acknowledgement
      assert.equal(server.service.wal.firstOffset(ROOT_ORG), acked + 1);

      assert.equal((await setLink(server.base, 'us-iowa', { link: 'up' })).status, 200);
      await waitFor(() => caughtUp(server.base), EVENTUALLY_MS, 'us-iowa after the heal');
      await server.service.compaction.compact();
      const snapshotAt = server.service.wal.snapshotOffset(ROOT_ORG);
      assert.ok((server.service.wal.firstOffset(ROOT_ORG) ?? Infinity) > snapshotAt);
      // the replica's state is whole, and its own log was compacted up to its own snapshot
      const replica = server.service.regions.replica('us-iowa');
      assert.equal(replica?.applied(ROOT_ORG), server.service.registry.get(ROOT_ORG)?.durableOffset);
    } finally {
      await server.stop();
    }
    const replicaLog = await offsetsIn(dataDir, 'replica-us-iowa');
    assert.ok(replicaLog.length < 40, `the replica keeps ${replicaLog.length} entries`);
  });

  test('given a compacted log whose snapshot is lost, when started, then it refuses to start and cuts nothing', async () => {
    const dataDir = tempDir('identity-compaction-');
    dirs.push(dataDir);
    let server = await startTestServer(ENV, {}, dataDir);
    try {
      await writeMany(server, 60, 'lost');
      await waitFor(() => server.service.wal.snapshotOffset(ROOT_ORG) >= 40, EVENTUALLY_MS, 'a snapshot');
      assert.ok((await server.service.compaction.compact()) > 0);
    } finally {
      await server.stop();
    }
    const before = await offsetsIn(dataDir);
    const store = openStore(dataDir, 'local', false);
    await store.snapshots.remove(ROOT_ORG);
    await store.close();
    await assert.rejects(startTestServer(ENV, {}, dataDir), { name: 'CompactedLogError', message: /compacted through entry \d+/ });
    assert.deepEqual(await offsetsIn(dataDir), before);
  });
});
