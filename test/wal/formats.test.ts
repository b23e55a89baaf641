// Format versions of stored records: entries and snapshots written before versions existed read as the
// current format, a version from the future is refused without cutting anything, and steps run in order.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEntry } from '../../src/domain/apply.js';
import { fromSnapshot, SNAPSHOT_FORMAT, toSnapshot } from '../../src/domain/snapshot.js';
import { currentVersion, FormatVersionError, upgrade, type Format } from '../../src/lib/versions.js';
import { encodeRecord } from '../../src/wal/codec.js';
import { decodeEntry, encodeEntry, WAL_ENTRY_FORMAT } from '../../src/wal/entry.js';
import { createWal } from '../../src/wal/log.js';
import { openStore } from '../../src/wal/store.js';
import { aGroup, aPerson, GENESIS, given } from '../support/domain.js';
import { removeDir, tempDir } from '../support/server.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

const entry = { at: 1_760_000_000_123, changes: [{ t: 'GroupCreated', name: 'staff', description: '', created: GENESIS.created }], ev: 3 };

describe('WAL entries', () => {
  test('given an entry written before versions, when decoded, then it reads as the current format', () => {
    const decoded = decodeEntry(encodeRecord(entry));
    assert.deepEqual(decoded, { ...entry, v: currentVersion(WAL_ENTRY_FORMAT) });
  });

  test('given an entry, when encoded, then it carries the version for one small integer more', () => {
    const record = encodeEntry(entry);
    assert.deepEqual(decodeEntry(record), { v: currentVersion(WAL_ENTRY_FORMAT), ...entry });
    // The key `v` (2 bytes) and a positive fixint (1 byte).
    assert.equal(record.length - encodeRecord(entry).length, 3);
  });

  test('given an entry of a later version, when replayed, then start-up stops on it and nothing is cut', async () => {
    const dir = tempDir('identity-formats-');
    dirs.push(dir);
    const store = openStore(dir, 'local', false);
    const warnings: string[] = [];
    try {
      const wal = createWal(store, (m) => warnings.push(m));
      const future = encodeRecord({ ...entry, v: currentVersion(WAL_ENTRY_FORMAT) + 1 });
      await wal.append([{ org: 'a', offset: 1, record: wal.encodeEntry(entry), events: [] }, { org: 'a', offset: 2, record: future, events: [] }], ['a']);
      assert.throws(() => decodeEntry(future), FormatVersionError);
      await assert.rejects(wal.replay('a', 0, 0, () => {}), { name: 'FormatVersionError', message: /WAL entry of format version 2 cannot be read/ });
      assert.equal(wal.records('a', 0, 10).length, 2);
      assert.deepEqual(warnings, []);
    } finally {
      await store.close();
    }
  });

  test('given a record that is not a map, when decoded as an entry, then it is corrupt', () => {
    assert.throws(() => decodeEntry(encodeRecord(7)), { name: 'CorruptRecordError' });
  });
});

describe('snapshots', () => {
  test('given a snapshot written before versions, when read, then it is upgraded; a later version is refused', () => {
    const state = given(aGroup('staff'), aPerson('p-1', { groups: ['staff'] }));
    const { v, ...unversioned } = toSnapshot(state);
    assert.equal(v, currentVersion(SNAPSHOT_FORMAT));
    const { owed_twins: _owed, ...org } = unversioned.org;
    assert.deepEqual(fromSnapshot({ ...unversioned, org }), state);
    assert.throws(() => fromSnapshot({ ...toSnapshot(state), v: v + 1 }), FormatVersionError);
  });
});

describe('upgrade', () => {
  const format: Format = {
    name: 'sample',
    steps: [(r) => ({ ...r, a: 1 }), (r) => ({ ...r, b: (r['a'] as number) + 1 }), (r) => ({ ...r, c: (r['b'] as number) + 1 })],
  };

  test('given a record of any earlier version, then every later step runs, in order, and it is stamped current', () => {
    assert.deepEqual(upgrade(format, {}), { a: 1, b: 2, c: 3, v: 3 });
    assert.deepEqual(upgrade(format, { v: 1, a: 10 }), { v: 3, a: 10, b: 11, c: 12 });
    const current = { v: 3, a: 0 };
    assert.equal(upgrade(format, current), current);
  });

  test('given a version that is not one this reads, then it is refused', () => {
    for (const v of [4, -1, 1.5]) assert.throws(() => upgrade(format, { v }), FormatVersionError, String(v));
  });
});

describe('applyEntry', () => {
  test('given no state, then changes before the genesis are ignored and the genesis starts the organization', () => {
    assert.equal(applyEntry(undefined, { offset: 1, changes: [aGroup('staff')], ev: 0 }), undefined);
    const state = applyEntry(undefined, { offset: 1, changes: [{ t: 'OrgCreated', genesis: GENESIS }, aGroup('staff')], ev: 2 });
    assert.equal(state?.id, GENESIS.id);
    assert.deepEqual([...(state?.groups.keys() ?? [])], ['staff']);
    assert.equal(state?.offset, 1);
    assert.equal(state?.event_offset, 2);
  });

  test('given a state, then the entry changes it and sets its offsets', () => {
    const state = applyEntry(given(), { offset: 7, changes: [aPerson('p-1')], ev: 4 });
    assert.ok(state.persons.has('p-1'));
    assert.equal(state.offset, 7);
    assert.equal(state.event_offset, 4);
  });
});
