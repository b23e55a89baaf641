import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCompaction } from '../../src/wal/compaction.js';
import { createWal, type EncodedWrite, type Wal } from '../../src/wal/log.js';
import { openStore, type Store } from '../../src/wal/store.js';
import { countCommits } from '../support/registry.js';
import { removeDir, tempDir } from '../support/server.js';
import { aGroup, aPerson, given } from '../support/domain.js';
import { apply } from '../../src/domain/apply.js';
import { fromSnapshot, heldSnapshot, toSnapshot, type StateSnapshot } from '../../src/domain/snapshot.js';
import type { Change } from '../../src/domain/changes.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

async function withWal(fn: (wal: Wal, store: Store, warnings: string[]) => Promise<void>): Promise<void> {
  const dir = tempDir('identity-wal-unit-');
  dirs.push(dir);
  const store = openStore(dir, 'local', true);
  const warnings: string[] = [];
  try {
    await fn(createWal(store, (m) => warnings.push(m)), store, warnings);
  } finally {
    await store.close();
  }
}

/** Entry n of org carries change n and, from entry 2 on, one event numbered n - 1. */
function write(wal: Wal, org: string, n: number): EncodedWrite {
  const events = n === 1 ? [] : [{ offset: n - 1, record: wal.encodeEvent({ n }) }];
  return { org, offset: n, record: wal.encodeEntry({ at: n, changes: [n], ev: Math.max(0, n - 1) }), events };
}

async function fill(wal: Wal, org: string, count: number): Promise<void> {
  for (let n = 1; n <= count; n++) await wal.append([write(wal, org, n)], n === 1 ? [org] : []);
}

async function replayAll(wal: Wal, org: string, after = 0, afterEvent = 0) {
  const seen: number[] = [];
  const result = await wal.replay<number>(org, after, afterEvent, (offset, entry) => {
    assert.deepEqual(entry.changes, [offset]);
    seen.push(offset);
  });
  return { seen, result };
}

test('given appended entries, when replayed, then each comes back once, in order, from the given offset', async () => {
  await withWal(async (wal, _store, warnings) => {
    await fill(wal, 'a', 6);
    assert.deepEqual(wal.organizations(), ['a']);
    assert.deepEqual(await replayAll(wal, 'a'), { seen: [1, 2, 3, 4, 5, 6], result: { lastOffset: 6, lastEventOffset: 5 } });
    assert.deepEqual(await replayAll(wal, 'a', 4, 3), { seen: [5, 6], result: { lastOffset: 6, lastEventOffset: 5 } });
    assert.deepEqual(wal.entries<number>('a', 2, 2).map((e) => [e.offset, e.entry.changes]), [[3, [3]], [4, [4]]]);
    assert.deepEqual(warnings, []);
  });
});

test('given one append for two organizations, then both are written and each replays only its own', async () => {
  await withWal(async (wal) => {
    await wal.append([write(wal, 'a', 1), write(wal, 'b', 1), write(wal, 'b', 2)], ['a', 'b']);
    assert.deepEqual(wal.organizations(), ['a', 'b']);
    assert.deepEqual((await replayAll(wal, 'a')).seen, [1]);
    assert.deepEqual((await replayAll(wal, 'b')).seen, [1, 2]);
    assert.deepEqual(wal.events('b', 1, 10).map((e) => e.event), [{ n: 2 }]);
  });
});

test('given a corrupt entry in the middle, when replayed, then it and everything after it are cut, with their events', async () => {
  await withWal(async (wal, store, warnings) => {
    await fill(wal, 'a', 6);
    await fill(wal, 'b', 3);
    const damaged = Buffer.from(store.wal.getBinary(['a', 4]) as Buffer);
    damaged[damaged.length - 1] = (damaged[damaged.length - 1] as number) ^ 0xff;
    store.wal.putSync(['a', 4], damaged);

    assert.deepEqual(await replayAll(wal, 'a'), { seen: [1, 2, 3], result: { lastOffset: 3, lastEventOffset: 2, cutAt: 4 } });
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] as string, /WAL of a: entry 4 is corrupt \(record checksum mismatch\)/);
    assert.deepEqual(wal.entries('a', 0, 100).map((e) => e.offset), [1, 2, 3], 'the cut is on disk');
    assert.deepEqual(wal.events('a', 1, 100).map((e) => e.offset), [1, 2]);
    assert.deepEqual((await replayAll(wal, 'b')).seen, [1, 2, 3], 'another organization is untouched');

    // The log goes on from the cut.
    await wal.append([write(wal, 'a', 4)]);
    assert.deepEqual(await replayAll(wal, 'a'), { seen: [1, 2, 3, 4], result: { lastOffset: 4, lastEventOffset: 3 } });
  });
});

test('given a missing entry, when replayed, then the log is cut at the gap', async () => {
  await withWal(async (wal, store, warnings) => {
    await fill(wal, 'a', 5);
    await store.wal.remove(['a', 3]);
    assert.deepEqual(await replayAll(wal, 'a'), { seen: [1, 2], result: { lastOffset: 2, lastEventOffset: 1, cutAt: 3 } });
    assert.match(warnings[0] as string, /WAL of a: entry 3 is missing; cutting from 4 on/);
    assert.deepEqual(wal.entries('a', 0, 100).map((e) => e.offset), [1, 2]);
  });
});

test('given a snapshot, when saved and loaded, then it comes back; when corrupt, then it is ignored with a warning', async () => {
  await withWal(async (wal, store, warnings) => {
    assert.equal(wal.loadSnapshot('a'), undefined);
    await wal.saveSnapshot('a', { offset: 7, event_offset: 3, state: { x: [1, 2] } });
    assert.deepEqual(wal.loadSnapshot('a'), { offset: 7, event_offset: 3, state: { x: [1, 2] } });
    const damaged = Buffer.from(store.snapshots.getBinary('a') as Buffer);
    damaged[5] = (damaged[5] as number) ^ 0x10;
    store.snapshots.putSync('a', damaged);
    assert.equal(wal.loadSnapshot('a'), undefined);
    assert.match(warnings[0] as string, /snapshot of a is corrupt/);
  });
});

test('given appends issued back to back without waiting, then each resolves in order, its entry and events readable', async () => {
  await withWal(async (wal) => {
    await wal.append([write(wal, 'a', 1)], ['a']);
    const resolved: number[] = [];
    const pending: Array<Promise<void>> = [];
    for (let n = 2; n <= 40; n++) {
      pending.push(
        wal.append([write(wal, 'a', n)]).then(() => {
          // What a resolved append wrote is there: the entry and its event.
          assert.deepEqual(wal.entries<number>('a', n - 1, 1).map((e) => e.offset), [n]);
          assert.deepEqual(wal.events('a', n - 1, 1).map((e) => e.event), [{ n }]);
          resolved.push(n);
        }),
      );
      if (n % 7 === 0) await new Promise((r) => setImmediate(r));
    }
    await Promise.all(pending);
    assert.deepEqual(resolved, Array.from({ length: 39 }, (_, i) => i + 2));
    assert.deepEqual((await replayAll(wal, 'a')).seen.length, 40);
  });
});

test('given a held snapshot of more persons than one slice, when the organization changes while it is packed, then it loads as it was when saved, and the event loop ran meanwhile', async () => {
  await withWal(async (wal) => {
    let state = given(aGroup('g'), aGroup('h'));
    for (let i = 0; i < 12_000; i++) state = apply(state, aPerson(`p${String(i).padStart(5, '0')}`, { groups: ['g'], attributes: { b: { n: i } } }));
    const expected: unknown = JSON.parse(JSON.stringify({ offset: 9, event_offset: 4, state: toSnapshot(state) }));
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const held = heldSnapshot(state);
    const saving = wal.saveSnapshot('big', { offset: 9, event_offset: 4, state: held.snapshot }, held.lists);
    // Changes after the save began, of every kind that reaches into a person or the groups: none may show.
    const late: Change[] = [
      { t: 'PersonHandlesAdded', person_id: 'p11999', handles: [{ type: 'username', value: 'late' }] },
      { t: 'AttributesSet', person_id: 'p00000', bucket: 'b', attributes: { n: -1 }, replace: true },
      { t: 'PersonActiveSet', person_id: 'p00005', active: false },
      { t: 'PersonGroupsSet', person_id: 'p00006', groups: ['h'] },
      { t: 'PersonDeleted', person_id: 'p00007' },
      { t: 'GroupDeleted', name: 'g' },
      aPerson('p-late'),
    ];
    for (const c of late) apply(state, c);
    await saving;
    held.release();
    clearInterval(ticking);
    const loaded = wal.loadSnapshot<StateSnapshot>('big');
    assert.deepEqual(loaded, expected);
    assert.equal(fromSnapshot(loaded?.state as StateSnapshot, true).persons.size, 12_000);
    assert.ok(turns > 0, 'the event loop never ran while the snapshot was packed');
  });
});

test('given two snapshots of one organization packed at once, when the older finishes last, then the newer stays', async () => {
  await withWal(async (wal) => {
    const older = wal.saveSnapshot('a', { offset: 5, event_offset: 2, state: { persons: [] } }, [Array.from({ length: 20_000 }, (_, i) => ({ i }))]);
    const newer = wal.saveSnapshot('a', { offset: 6, event_offset: 3, state: { persons: [] } });
    await Promise.all([older, newer]);
    assert.equal(wal.loadSnapshot('a')?.offset, 6);
  });
});

test('given many organizations\' snapshots saved together, then they take one commit and each loads back; an older one than stored is left out', async () => {
  await withWal(async (wal, store) => {
    await wal.saveSnapshot('org-7', { offset: 50, event_offset: 20, state: { n: 'newer' } });
    const commits = countCommits(store);
    const items = Array.from({ length: 300 }, (_, i) => ({ org: `org-${i}`, snapshot: { offset: 10 + i, event_offset: i, state: { n: i, persons: [] as unknown[] } } }));
    // One packed in slices, as a large organization's is.
    items[3] = { org: 'org-3', snapshot: { offset: 13, event_offset: 3, state: { n: 3, persons: [] } }, lists: [Array.from({ length: 12_000 }, (_, i) => ({ i }))] } as (typeof items)[number];
    await wal.saveSnapshots(items);
    assert.equal(commits.count, 1);
    for (let i = 0; i < 300; i++) {
      const loaded = wal.loadSnapshot<{ n: unknown; persons: unknown[] }>(`org-${i}`);
      if (i === 7) assert.deepEqual(loaded, { offset: 50, event_offset: 20, state: { n: 'newer' } }, 'the newer snapshot stays');
      else assert.deepEqual(loaded?.offset, 10 + i);
    }
    assert.equal(wal.loadSnapshot<{ persons: unknown[] }>('org-3')?.state.persons.length, 12_000);
  });
});

test('given a batch size smaller than the snapshots, then saveSnapshots commits as it goes, and every snapshot is stored', async () => {
  const dir = tempDir('identity-wal-unit-');
  dirs.push(dir);
  const store = openStore(dir, 'local', true);
  try {
    const wal = createWal(store, () => {}, { snapshotBatchBytes: 1000 });
    const commits = countCommits(store);
    const filler = 'x'.repeat(400);
    await wal.saveSnapshots(Array.from({ length: 10 }, (_, i) => ({ org: `o${i}`, snapshot: { offset: 1, event_offset: 0, state: { filler } } })));
    // 400 bytes each: a commit every third snapshot, the last one for the tenth.
    assert.equal(commits.count, 4);
    for (let i = 0; i < 10; i++) assert.equal(wal.loadSnapshot<{ filler: string }>(`o${i}`)?.state.filler, filler);
  } finally {
    await store.close();
  }
});

test('given a log behind a stream\'s retention, when a shipped snapshot is installed, then recovery starts at it and the event chain goes on from its link, an older snapshot packed meanwhile does not replace it, and compaction removes the entries it covers', async () => {
  await withWal(async (wal, store) => {
    await fill(wal, 'a', 5);
    await wal.installSnapshot('a', { offset: 40, event_offset: 39, state: 'shipped' }, { meta: [['position:a', 77]], chain: Buffer.alloc(32, 7) });
    await wal.installSnapshot('b', { offset: 12, event_offset: 11, state: 'new' });
    assert.deepEqual(wal.organizations(), ['a', 'b'], 'a new organization is recorded with its snapshot');
    assert.equal(wal.getMeta<number>('position:a'), 77, 'the meta values in the same transaction');
    assert.deepEqual(wal.chainAt('a', 39), Buffer.alloc(32, 7), "the chain link the organization's next event follows");
    assert.equal(wal.snapshotOffset('a'), 40);
    await wal.saveSnapshot('a', { offset: 5, event_offset: 4, state: 'periodic, taken before the install' });
    assert.equal(wal.loadSnapshot<string>('a')?.state, 'shipped');
    // Entries after the snapshot follow it; the stale ones before it are never read again, and compaction removes them.
    await wal.append([write(wal, 'a', 41)]);
    assert.deepEqual(await replayAll(wal, 'a', 40, 39), { seen: [41], result: { lastOffset: 41, lastEventOffset: 40 } });
    const removed = await createCompaction({ logs: [{ wal, organizations: () => wal.organizations() }], warn: () => {} }).compact();
    assert.equal(removed, 5);
    assert.equal(wal.firstOffset('a'), 41);
    // Read back by a log opened afresh (a restart): the same snapshot.
    assert.equal(createWal(store, () => {}).snapshotOffset('a'), 40);
  });
});
