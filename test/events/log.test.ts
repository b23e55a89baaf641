// The event log on a real LMDB store: reads bounded by the durable head, the oldest retained offset, and pruning
// by count and by age in bounded batches that leave other organizations alone.
import assert from 'node:assert/strict';
import { after, beforeEach, describe, test } from 'node:test';
import type { EventRetention } from '../../src/config.js';
import { createEventLog, type EventLog } from '../../src/events/log.js';
import { rfc3339Nanos } from '../../src/lib/time-text.js';
import { createWal, type Wal } from '../../src/wal/log.js';
import { openStore, type Store } from '../../src/wal/store.js';
import { range } from '../support/ws.js';
import { removeDir, tempDir } from '../support/server.js';

const T0 = Date.UTC(2026, 0, 1);
const dirs: string[] = [];
let store: Store;
let wal: Wal;
const heads = new Map<string, number>();
/** how many events each LMDB transaction of the pruning job removed */
const removals: number[] = [];

/** Appends events at offsets first..last, the one at offset n stamped T0 + n seconds; moves the head to last. */
async function append(org: string, first: number, last: number, moveHead = true): Promise<void> {
  const writes = range(first, last).map((offset) => ({
    org,
    offset,
    record: wal.encodeEntry({ at: T0, changes: [], ev: offset }),
    events: [{ offset, record: wal.encodeEvent({ event_metadata: { event_name: 'ServiceSDKLoaded_v1', timestamp: rfc3339Nanos(BigInt(T0 + offset * 1000) * 1_000_000n) }, n: offset }) }],
  }));
  await wal.append(writes);
  if (moveHead) heads.set(org, last);
}

function eventLog(retention: EventRetention, nowMs = T0, batchSize = 4, keepFrom?: (org: string) => number | undefined): EventLog {
  const observed: Wal = {
    ...wal,
    removeEvents: async (org, below, limit) => {
      const n = await wal.removeEvents(org, below, limit);
      removals.push(n);
      return n;
    },
  };
  return createEventLog({
    wal: observed,
    head: (org) => heads.get(org) ?? 0,
    organizations: () => heads.keys(),
    retention,
    nowMs: () => nowMs,
    warn: (m) => assert.fail(m),
    batchSize,
    ...(keepFrom ? { keepFrom } : {}),
  });
}

beforeEach(async () => {
  const dir = tempDir('event-log-');
  dirs.push(dir);
  store = openStore(dir, 'local', false);
  wal = createWal(store, () => {});
  heads.clear();
  removals.length = 0;
});
after(() => {
  for (const dir of dirs) removeDir(dir);
});

describe('reading', () => {
  test('reads from an offset up to the head, never past it', async () => {
    await append('a', 1, 10);
    await append('a', 11, 12, false);
    const log = eventLog({ kind: 'count', count: 100 });
    assert.deepEqual(log.read('a', 4, 100).map((e) => e.offset), range(4, 10));
    assert.deepEqual(log.read('a', 4, 3).map((e) => e.offset), [4, 5, 6]);
    assert.deepEqual(log.read('a', 11, 100), []);
    assert.deepEqual(log.read('a', 10, 100).map((e) => e.event['n']), [10]);
    assert.equal(log.oldest('a'), 1);
    assert.equal(log.oldest('nobody'), 1, 'an empty log: the oldest is head + 1');
    await store.close();
  });

  test('a read from below a pruned stretch still stops at the head', async () => {
    await append('a', 1, 8);
    await append('a', 9, 10, false);
    await wal.removeEvents('a', 5, 100);
    const log = eventLog({ kind: 'count', count: 100 });
    assert.deepEqual(log.read('a', 1, 100).map((e) => e.offset), range(5, 8));
    await store.close();
  });
});

describe('records of earlier versions', () => {
  test('a 64-bit integer an earlier version kept as a JSON number reads as a decimal string; other events come back as kept', async () => {
    const counted = {
      event_metadata: { event_name: 'BillableProtectedIdentitiesCounted_v1', event_version: '1' },
      region: 'europe-belgium',
      user_identities_count: 3,
      non_human_identities_count: 0,
      credentials_count: 2 ** 53 - 1,
    };
    const gate = { event_metadata: { event_name: 'GateRequestHandled_v1' }, plugins: [{ round_trips: [{ http_request_metadata: { request_length: 12 } }] }] };
    const other = { event_metadata: { event_name: 'ServiceSDKLoaded_v1' }, n: 3 };
    const events = [counted, gate, other].map((event, i) => ({ offset: i + 1, record: wal.encodeEvent(event, Buffer.alloc(32, i)) }));
    await wal.append([{ org: 'a', offset: 1, record: wal.encodeEntry({ at: T0, changes: [], ev: 3 }), events }]);
    heads.set('a', 3);
    const [a, b, c] = eventLog({ kind: 'count', count: 100 }).read('a', 1, 10).map((e) => e.event);
    assert.deepEqual(a, { ...counted, user_identities_count: '3', non_human_identities_count: '0', credentials_count: '9007199254740991' });
    assert.deepEqual(b, { event_metadata: gate.event_metadata, plugins: [{ round_trips: [{ http_request_metadata: { request_length: '12' } }] }] });
    assert.deepEqual(c, other);
    await store.close();
  });
});

describe('retention by count', () => {
  test('keeps the newest N events of each organization, removing in batches', async () => {
    await append('a', 1, 35);
    await append('b', 1, 8);
    const log = eventLog({ kind: 'count', count: 10 }, T0, 4);
    assert.equal(await log.prune(), 25);
    assert.equal(log.oldest('a'), 26);
    assert.deepEqual(log.read('a', 1, 100).map((e) => e.offset), range(26, 35));
    assert.equal(log.oldest('b'), 1, 'an organization within its retention keeps everything');
    assert.deepEqual(removals, [4, 4, 4, 4, 4, 4, 1], 'at most 4 removals per transaction');
    assert.equal(await log.prune(), 0, 'a second pass has nothing to do');
    await store.close();
  });

  test('concurrent calls share one pass', async () => {
    await append('a', 1, 20);
    const log = eventLog({ kind: 'count', count: 5 }, T0, 2);
    const [x, y] = await Promise.all([log.prune(), log.prune()]);
    assert.equal(x, 15);
    assert.equal(y, 15);
    await store.close();
  });
});

describe('retention by age', () => {
  test('removes the events older than the age, walking from the oldest in batches', async () => {
    await append('a', 1, 30);
    // Now is T0 + 40 s; keeping 20 s keeps the events stamped from T0 + 20 s, offsets 20 to 30.
    const log = eventLog({ kind: 'age', ms: 20_000 }, T0 + 40_000, 3);
    assert.equal(await log.prune(), 19);
    assert.equal(log.oldest('a'), 20);
    assert.ok(removals.every((n) => n <= 3));
    assert.deepEqual(log.read('a', 1, 100).map((e) => e.offset), range(20, 30));
    await store.close();
  });

  test('when everything is older, everything goes, and the oldest retained offset is head + 1', async () => {
    await append('a', 1, 10);
    const log = eventLog({ kind: 'age', ms: 1000 }, T0 + 3_600_000, 4);
    assert.equal(await log.prune(), 10);
    assert.equal(log.oldest('a'), 11);
    assert.deepEqual(log.read('a', 1, 100), []);
    await store.close();
  });

  test('never removes past the durable head', async () => {
    await append('a', 1, 5);
    await append('a', 6, 8, false);
    const log = eventLog({ kind: 'age', ms: 1000 }, T0 + 3_600_000, 2);
    assert.equal(await log.prune(), 5);
    assert.equal(wal.firstEventOffset('a'), 6);
    await store.close();
  });
});

describe('events a webhook has still to deliver', () => {
  test('count retention stops at the oldest one, and goes on once it moves', async () => {
    await append('a', 1, 30);
    await append('b', 1, 30);
    let keep: number | undefined = 12;
    const log = eventLog({ kind: 'count', count: 5 }, T0, 4, (org) => (org === 'a' ? keep : undefined));
    assert.equal(await log.prune(), 11 + 25);
    assert.equal(log.oldest('a'), 12);
    assert.equal(log.oldest('b'), 26, 'another organization is pruned as usual');
    keep = 20;
    assert.equal(await log.prune(), 8);
    assert.equal(log.oldest('a'), 20);
    keep = undefined;
    assert.equal(await log.prune(), 6);
    assert.equal(log.oldest('a'), 26);
    await store.close();
  });

  test('age retention stops at the oldest one too', async () => {
    await append('a', 1, 30);
    const log = eventLog({ kind: 'age', ms: 1000 }, T0 + 3_600_000, 3, () => 7);
    assert.equal(await log.prune(), 6);
    assert.equal(log.oldest('a'), 7);
    assert.equal(await log.prune(), 0);
    await store.close();
  });
});

describe('the periodic job', () => {
  test('prunes on its interval until stopped', async () => {
    await append('a', 1, 50);
    const log = eventLog({ kind: 'count', count: 5 }, T0, 10);
    log.startPruning(10);
    const deadline = Date.now() + 30_000;
    while (log.oldest('a') !== 46) {
      assert.ok(Date.now() < deadline, 'the job did not prune within 30 s');
      await new Promise((r) => setTimeout(r, 10));
    }
    await log.stop();
    await append('a', 51, 60);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(log.oldest('a'), 46, 'nothing pruned after stop');
    await store.close();
  });
});
