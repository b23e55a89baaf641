import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/changes.js';
import { Replica } from '../../src/regions/replica.js';
import { openReplicaStore } from '../../src/regions/replica-store.js';
import type { ShippedEntry } from '../../src/regions/transport.js';
import { encodeRecord } from '../../src/wal/codec.js';
import { removeDir, tempDir } from '../support/server.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

const ORG = 'org-a';
const genesis: Change = { t: 'OrgCreated', genesis: { id: ORG, org_name: 'a', parent_id: null, root_id: ORG, api_key_hash: 'ab', created: '2026-01-01T00:00:00.000Z' } };

/** Offsets 1..n: the genesis, then one attribute write per entry (counter = offset). */
function entries(n: number): ShippedEntry[] {
  return Array.from({ length: n }, (_, i) => {
    const offset = i + 1;
    const changes: Change[] = offset === 1 ? [genesis] : [{ t: 'AttributesSet', bucket: 'end_user_read_write', attributes: { counter: offset, [`k${offset}`]: true }, replace: false }];
    return { offset, record: encodeRecord({ at: 1_700_000_000_000 + offset, changes, ev: 0 }) };
  });
}

async function openReplica(dir: string) {
  return Replica.open('us-iowa', openReplicaStore(dir, 'us-iowa', true, () => {}), 10_000, () => {});
}

const batch = (list: ShippedEntry[]) => ({ org: ORG, session: 1, entries: list });

test('given consecutive entries, when received, then they are applied, durable and acknowledged', async () => {
  const dir = tempDir();
  dirs.push(dir);
  const replica = await openReplica(dir);
  const all = entries(5);
  assert.deepEqual(await replica.receive(batch(all.slice(0, 3))), { org: ORG, session: 1, offset: 3 });
  assert.deepEqual(await replica.receive(batch(all.slice(3))), { org: ORG, session: 1, offset: 5 });
  assert.equal(replica.state(ORG)?.attributes.get('end_user_read_write')?.['counter'], 5);
  assert.equal(replica.stats.applied, 5);
  await replica.close();
  const records = await (async () => {
    const store = openReplicaStore(dir, 'us-iowa', false, () => {});
    try {
      return { log: store.wal.records(ORG, 0, 100), saved: store.savedOffset(ORG) };
    } finally {
      await store.close();
    }
  })();
  assert.deepEqual(records.log.map((r) => r.offset), [1, 2, 3, 4, 5]);
  assert.ok(records.log.every((r, i) => r.record.equals((all[i] as ShippedEntry).record)), 'the replica stores the records byte for byte');
  assert.equal(records.saved, 5, 'the applied offset is saved with the entries');
});

test('given entries already applied, when received again, then they are skipped and the acknowledgement is unchanged', async () => {
  const dir = tempDir();
  dirs.push(dir);
  const replica = await openReplica(dir);
  const all = entries(4);
  await replica.receive(batch(all));
  const ack = await replica.receive(batch(all.slice(1, 3)));
  assert.equal(ack.offset, 4);
  assert.equal(replica.stats.applied, 4);
  assert.equal(replica.stats.duplicates, 2);
  // Overlapping batch: old entries skipped, new ones applied once.
  const more = entries(6);
  assert.equal((await replica.receive(batch(more.slice(2)))).offset, 6);
  assert.equal(replica.stats.applied, 6);
  assert.equal(replica.state(ORG)?.attributes.get('end_user_read_write')?.['counter'], 6);
  await replica.close();
});

test('given a gap or a corrupt record, when received, then nothing past it is applied and the ack says where to resume', async () => {
  const dir = tempDir();
  dirs.push(dir);
  const replica = await openReplica(dir);
  const all = entries(6);
  await replica.receive(batch(all.slice(0, 2)));
  assert.equal((await replica.receive(batch(all.slice(3)))).offset, 2, 'entries after a gap are refused');
  assert.equal(replica.stats.gaps, 1);
  const torn = Buffer.from((all[2] as ShippedEntry).record);
  torn.writeUInt8(torn.readUInt8(torn.length - 1) ^ 0xff, torn.length - 1);
  assert.equal((await replica.receive(batch([{ offset: 3, record: torn }, ...all.slice(3)]))).offset, 2, 'a record that does not verify is refused');
  assert.equal(replica.stats.corrupt, 1);
  assert.equal(replica.state(ORG)?.offset, 2);
  assert.equal((await replica.receive(batch(all.slice(2)))).offset, 6);
  await replica.close();
});

test('given a replica reopened, then it resumes from its own saved position with the same state', async () => {
  const dir = tempDir();
  dirs.push(dir);
  const all = entries(8);
  const first = await openReplica(dir);
  await first.receive(batch(all.slice(0, 5)));
  await first.close();
  const second = await openReplica(dir);
  assert.equal(second.applied(ORG), 5);
  assert.equal((await second.receive({ org: ORG, session: 7, entries: [] })).offset, 5, 'a probe answers the applied offset');
  await second.receive(batch(all));
  assert.equal(second.stats.applied, 3, 'only the entries it did not have are applied');
  assert.equal(second.stats.duplicates, 5);
  assert.equal(second.state(ORG)?.attributes.get('end_user_read_write')?.['counter'], 8);
  assert.deepEqual(Object.keys(second.state(ORG)?.attributes.get('end_user_read_write') ?? {}).filter((k) => k.startsWith('k')).length, 7);
  await second.close();
});

test('an unknown organization is acknowledged at zero', async () => {
  const dir = tempDir();
  dirs.push(dir);
  const replica = await openReplica(dir);
  assert.deepEqual(await replica.receive({ org: 'nobody', session: 1, entries: [] }), { org: 'nobody', session: 1, offset: 0 });
  await replica.close();
  await assert.rejects(replica.receive({ org: 'nobody', session: 1, entries: [] }), /closed/);
});
