// A replica installing the origin's snapshot of an organization: the snapshot's offset becomes the applied
// floor in the same transaction, entries it covers are skipped, later ones apply on top, an older snapshot
// changes nothing, and a restarted replica comes back exactly there.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/changes.js';
import { toSnapshot } from '../../src/domain/snapshot.js';
import type { StoredRecord } from '../../src/lib/versions.js';
import { Replica } from '../../src/regions/replica.js';
import { openReplicaStore } from '../../src/regions/replica-store.js';
import type { ShippedEntry } from '../../src/regions/transport.js';
import { decodeRecord, encodeRecord } from '../../src/wal/codec.js';
import type { Snapshot } from '../../src/wal/log.js';
import { removeDir, tempDir } from '../support/server.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

const ORG = 'org-a';
const genesis: Change = { t: 'OrgCreated', genesis: { id: ORG, org_name: 'a', parent_id: null, root_id: ORG, api_key_hash: 'ab', created: '2026-01-01T00:00:00.000Z' } };
const entries: ShippedEntry[] = Array.from({ length: 12 }, (_, i) => {
  const offset = i + 1;
  const changes: Change[] = offset === 1 ? [genesis] : [{ t: 'AttributesSet', bucket: 'end_user_read_write', attributes: { counter: offset, [`k${offset}`]: true }, replace: false }];
  return { offset, record: encodeRecord({ at: 1_700_000_000_000 + offset, changes, ev: 0 }) };
});
const range = (from: number, to: number) => ({ org: ORG, session: 1, entries: entries.filter((e) => e.offset >= from && e.offset <= to) });

async function openReplica(region: string) {
  const dir = tempDir();
  dirs.push(dir);
  return { dir, replica: await Replica.open(region, openReplicaStore(dir, region, true, () => {}), 10_000, () => {}) };
}

/** The origin's snapshot at `offset`, through the bytes it travels as. */
async function snapshotAt(offset: number): Promise<Snapshot<StoredRecord>> {
  const { replica } = await openReplica('europe-belgium');
  await replica.receive(range(1, offset));
  const state = replica.state(ORG)!;
  await replica.close();
  return decodeRecord<Snapshot<StoredRecord>>(encodeRecord({ offset: state.offset, event_offset: state.event_offset, state: toSnapshot(state) }, 'records'));
}

test('given a replica behind a gap, when it installs a snapshot, then it applies on top of it and keeps that after a restart', async () => {
  const { dir, replica } = await openReplica('asia-japan');
  await replica.receive(range(1, 3));
  assert.equal((await replica.receive(range(9, 10))).offset, 3, 'a gap: nothing after 3 applies');

  assert.equal(await replica.install(ORG, await snapshotAt(8)), 8);
  assert.equal(replica.applied(ORG), 8);
  assert.equal((await replica.receive(range(6, 10))).offset, 10, 'entries up to 8 skipped, 9 and 10 applied');
  assert.equal(await replica.install(ORG, await snapshotAt(5)), 10, 'an older snapshot changes nothing');
  assert.equal(replica.stats.installed, 1);
  const expected = toSnapshot(replica.state(ORG)!);
  const reference = await openReplica('us-iowa');
  await reference.replica.receive(range(1, 10));
  assert.deepEqual(expected, toSnapshot(reference.replica.state(ORG)!), 'the same state as a replica that applied every entry');
  await reference.replica.close();
  await replica.close();

  const store = openReplicaStore(dir, 'asia-japan', true, () => {});
  assert.equal(store.savedOffset(ORG), 10);
  const again = await Replica.open('asia-japan', store, 10_000, () => {});
  assert.equal(again.applied(ORG), 10);
  assert.deepEqual(toSnapshot(again.state(ORG)!), expected, 'recovered from the installed snapshot and the entries after it');
  assert.equal((await again.receive(range(11, 12))).offset, 12);
  await again.close();
});

test('given an organization the replica never saw, when a snapshot is installed, then it is known from there on', async () => {
  const { dir, replica } = await openReplica('asia-japan');
  assert.equal(await replica.install(ORG, await snapshotAt(7)), 7);
  assert.deepEqual(replica.organizations(), [ORG]);
  await replica.close();
  const again = await Replica.open('asia-japan', openReplicaStore(dir, 'asia-japan', true, () => {}), 10_000, () => {});
  assert.equal(again.applied(ORG), 7);
  await again.close();
});
