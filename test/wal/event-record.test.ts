// Event records carry their chain link (one put per event); links of records written before that stay in the
// chains database, and every read of links (events, chainAt, lastChainOffset, pruning) sees both alike.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeRecord } from '../../src/wal/codec.js';
import { decodeEventRecord, encodeEventRecord, eventRecordFormat, eventRecordLink } from '../../src/wal/event-record.js';
import { createWal, type Wal } from '../../src/wal/log.js';
import { openStore, type Store } from '../../src/wal/store.js';
import { removeDir, tempDir } from '../support/server.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

async function withWal(fn: (wal: Wal, store: Store) => Promise<void>): Promise<void> {
  const dir = tempDir('identity-event-record-');
  dirs.push(dir);
  const store = openStore(dir, 'local', true);
  try {
    await fn(createWal(store, () => undefined), store);
  } finally {
    await store.close();
  }
}

const link = (n: number): Buffer => Buffer.alloc(32, n);

/**
 * Events 1..old as the code before did it (a format-0 record, its link in the chains database), then
 * old+1..last with the link in the record.
 */
async function mixedLog(wal: Wal, store: Store, old: number, last: number): Promise<void> {
  for (let n = 1; n <= old; n++) store.events.putSync(['a', n], encodeRecord({ n }));
  await wal.putChains('a', Array.from({ length: old }, (_, i) => ({ offset: i + 1, chain: link(i + 1) })));
  for (let n = old + 1; n <= last; n++) {
    await wal.append([{ org: 'a', offset: n, record: wal.encodeEntry({ at: n, changes: [], ev: n }), events: [{ offset: n, record: wal.encodeEvent({ n }, link(n)) }] }]);
  }
}

test('an event record with a link carries it, and one without is the format-0 record', () => {
  const linked = encodeEventRecord({ a: 1, s: 'x'.repeat(300) }, link(9));
  assert.deepEqual(decodeEventRecord(linked), { event: { a: 1, s: 'x'.repeat(300) }, chain: link(9) });
  assert.deepEqual(eventRecordLink(linked), link(9));
  const plain = encodeEventRecord({ a: 1 });
  assert.ok(plain.equals(encodeRecord({ a: 1 })));
  assert.deepEqual(decodeEventRecord(plain), { event: { a: 1 } });
  assert.equal(eventRecordLink(plain), undefined);
  // the checksum covers the link
  const altered = Buffer.from(linked);
  altered[10] = (altered[10] as number) ^ 1;
  assert.throws(() => decodeEventRecord(altered), { name: 'CorruptRecordError' });
  assert.throws(() => encodeEventRecord({}, Buffer.alloc(31)), RangeError);
});

test("a linked event with its protobuf bytes is stored as those bytes, and read back through the log's decoder", async () => {
  const bytes = Buffer.from([0x0a, 0x03, 0x61, 0x62, 0x63, 0xff]);
  const record = encodeEventRecord({ ignored: true }, link(7), { name: 'TokenMinted_v1', bytes });
  assert.equal(eventRecordFormat(record), 2);
  assert.deepEqual(eventRecordLink(record), link(7));
  // The record is the bytes themselves after its header, not an encoding of the event object.
  assert.ok(record.subarray(record.length - bytes.length).equals(bytes));
  const seen: Array<[string, Buffer]> = [];
  const stored = decodeEventRecord(record, (name, b) => (seen.push([name, Buffer.from(b)]), { decoded: name }));
  assert.deepEqual(stored, { event: { decoded: 'TokenMinted_v1' }, chain: link(7), wire: { name: 'TokenMinted_v1', bytes } });
  assert.deepEqual(seen, [['TokenMinted_v1', bytes]]);
  // Without a decoder it cannot be read, and says why; bytes the decoder refuses make the record corrupt.
  assert.throws(() => decodeEventRecord(record), /without a decoder/);
  assert.throws(
    () =>
      decodeEventRecord(record, () => {
        throw new Error('not a message');
      }),
    { name: 'CorruptRecordError' },
  );
  // The checksum covers the name and the bytes.
  for (const at of [4 + 34 + 2, record.length - 1]) {
    const altered = Buffer.from(record);
    altered[at] = (altered[at] as number) ^ 1;
    assert.throws(() => decodeEventRecord(altered, () => ({})), { name: 'CorruptRecordError' }, `byte ${at}`);
  }
  // A name that does not fit the record is corrupt, not read past the end.
  const short = encodeEventRecord(undefined, link(7), { name: 'X', bytes: Buffer.alloc(0) });
  assert.deepEqual(decodeEventRecord(short, (name, b) => ({ name, length: b.length })).event, { name: 'X', length: 0 });
  assert.throws(() => encodeEventRecord(undefined, link(7), { name: '', bytes }), RangeError);
  assert.equal(eventRecordFormat(encodeEventRecord({ a: 1 }, link(1))), 1);
  assert.equal(eventRecordFormat(encodeEventRecord({ a: 1 })), 0);
});

test('a log opened with a decoder reads protobuf records beside older ones', async () => {
  const dir = tempDir('identity-event-record-');
  dirs.push(dir);
  const store = openStore(dir, 'local', true);
  try {
    const wal = createWal(store, () => undefined, { decodeEvent: (name, b) => ({ name, text: Buffer.from(b).toString() }) });
    await mixedLog(wal, store, 2, 3);
    await wal.append([{ org: 'a', offset: 4, record: wal.encodeEntry({ at: 4, changes: [], ev: 4 }), events: [{ offset: 4, record: wal.encodeEvent({ n: 4 }, link(4), { name: 'N_v1', bytes: Buffer.from('four') }) }] }]);
    assert.deepEqual(wal.events('a', 1, 10), [
      { offset: 1, event: { n: 1 }, chain: link(1) },
      { offset: 2, event: { n: 2 }, chain: link(2) },
      { offset: 3, event: { n: 3 }, chain: link(3) },
      { offset: 4, event: { name: 'N_v1', text: 'four' }, chain: link(4) },
    ]);
    assert.deepEqual(wal.chainAt('a', 4), link(4));
    assert.throws(() => createWal(store, () => undefined).events('a', 4, 1), /without a decoder/);
  } finally {
    await store.close();
  }
});

test('a write puts one key per event: the chains database gets nothing', async () => {
  await withWal(async (wal, store) => {
    await mixedLog(wal, store, 0, 3);
    assert.equal(store.chains.getKeysCount({}), 0);
    assert.deepEqual(wal.events('a', 1, 10), [1, 2, 3].map((n) => ({ offset: n, event: { n }, chain: link(n) })));
    assert.deepEqual(wal.chainAt('a', 2), link(2));
    assert.equal(wal.chainAt('a', 4), undefined);
    assert.equal(wal.lastChainOffset('a'), 3);
  });
});

test('links read alike from records written before and after links moved into them', async () => {
  await withWal(async (wal, store) => {
    await mixedLog(wal, store, 4, 7);
    assert.deepEqual(wal.events('a', 1, 10), [1, 2, 3, 4, 5, 6, 7].map((n) => ({ offset: n, event: { n }, chain: link(n) })));
    assert.deepEqual([3, 4, 5, 7].map((n) => wal.chainAt('a', n)), [link(3), link(4), link(5), link(7)]);
    assert.equal(wal.lastChainOffset('a'), 7);
  });
});

test('a log whose links were never computed has none, and the newest filled link is the last', async () => {
  await withWal(async (wal, store) => {
    for (let n = 1; n <= 3; n++) store.events.putSync(['a', n], encodeRecord({ n }));
    assert.equal(wal.lastChainOffset('a'), undefined);
    assert.deepEqual(wal.events('a', 1, 10), [1, 2, 3].map((n) => ({ offset: n, event: { n } })));
    await wal.putChains('a', [{ offset: 1, chain: link(1) }]);
    assert.equal(wal.lastChainOffset('a'), 1);
  });
});

for (const [name, old] of [
  ['links in records only', 0],
  ['links of both kinds', 3],
] as const) {
  test(`pruning keeps the link just below the oldest retained event, and the newest (${name})`, async () => {
    await withWal(async (wal, store) => {
      await mixedLog(wal, store, old, 10);
      // batches of 2, as the event log prunes in batches
      while ((await wal.removeEvents('a', 6, 2)) === 2);
      assert.equal(wal.firstEventOffset('a'), 6);
      assert.deepEqual(wal.chainAt('a', 5), link(5));
      for (let n = 1; n < 5; n++) assert.equal(wal.chainAt('a', n), undefined, `link ${n}`);
      assert.deepEqual(wal.events('a', 1, 10).map((e) => [e.offset, e.chain]), [6, 7, 8, 9, 10].map((n) => [n, link(n)]));
      assert.equal(wal.lastChainOffset('a'), 10);

      // Everything goes: the newest link stays, for the chain to go on from.
      while ((await wal.removeEvents('a', 11, 3)) === 3);
      assert.equal(wal.firstEventOffset('a'), undefined);
      assert.deepEqual(wal.chainAt('a', 10), link(10));
      assert.equal(wal.lastChainOffset('a'), 10);
      assert.deepEqual([...store.chains.getKeys({})].map((k) => k[1]), [10]);
    });
  });
}
