import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/changes.js';
import { ReplicationLink } from '../../src/regions/link.js';
import { Replica } from '../../src/regions/replica.js';
import { openReplicaStore } from '../../src/regions/replica-store.js';
import { createSimulatedTransport } from '../../src/regions/simulated-transport.js';
import type { Batch, Transport } from '../../src/regions/transport.js';
import { createWal, type Wal } from '../../src/wal/log.js';
import { openStore } from '../../src/wal/store.js';
import { removeDir, tempDir } from '../support/server.js';
import { waitFor } from '../support/regions.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

const ORG = 'org-s';

/** A real local WAL holding offsets 1..n of one organization. */
async function localLog(n: number) {
  const dir = tempDir();
  dirs.push(dir);
  const store = openStore(dir, 'local', false);
  const wal = createWal(store, () => {});
  const genesis: Change = { t: 'OrgCreated', genesis: { id: ORG, org_name: 's', parent_id: null, root_id: ORG, api_key_hash: 'ab', created: '2026-01-01T00:00:00.000Z' } };
  const writes = Array.from({ length: n }, (_, i) => {
    const changes: Change[] = i === 0 ? [genesis] : [{ t: 'AttributesSet', bucket: 'end_user_read_write', attributes: { [`k${i + 1}`]: 'x'.repeat(100) }, replace: false }];
    return { org: ORG, offset: i + 1, record: wal.encodeEntry({ at: 0, changes, ev: 0 }), events: [] };
  });
  await wal.append(writes, [ORG]);
  return { dir, store, wal };
}

async function replicaIn(dir: string) {
  return Replica.open('us-iowa', openReplicaStore(dir, 'us-iowa', false, () => {}), 10_000, () => {});
}

/** The simulated transport, with a network that loses the batches `lose` picks and notes every batch sent. */
function lossy(inner: Transport, lose: (batch: Batch, index: number) => boolean) {
  const sent: Batch[] = [];
  const transport: Transport = {
    ...inner,
    send(batch) {
      sent.push(batch);
      if (!lose(batch, sent.length - 1)) inner.send(batch);
    },
  };
  return { transport, sent };
}

test('entries are shipped in order in bounded batches within the window, and every one is applied once', async () => {
  const { dir, store, wal } = await localLog(50);
  const replica = await replicaIn(dir);
  const { transport, sent } = lossy(createSimulatedTransport(replica, { latencyMs: 2, jitterMs: 0 }), () => false);
  const link = new ReplicationLink({ region: 'us-iowa', wal, transport, warn: () => {}, batchEntries: 8, batchBytes: 600, windowEntries: 16 });
  link.start([[ORG, 50]]);
  await waitFor(() => link.acked(ORG) === 50 && link.state() === 'streaming', 30_000, 'the replica to hold all 50 entries');
  const data = sent.filter((b) => b.entries.length > 0);
  const offsets = data.flatMap((b) => b.entries.map((e) => e.offset));
  assert.deepEqual(offsets, Array.from({ length: 50 }, (_, i) => i + 1), 'each entry sent once, in order');
  assert.ok(data.every((b) => b.entries.length <= 8), 'at most batchEntries per batch');
  assert.ok(data.every((b) => b.entries.length === 1 || b.entries.reduce((n, e) => n + e.record.length, 0) <= 600), 'at most batchBytes per batch');
  assert.equal(replica.stats.applied, 50);
  assert.equal(replica.stats.duplicates, 0);
  assert.equal(link.lag(), 0);
  link.stop();
  await replica.close();
  await store.close();
});

test('a batch lost on the way is sent again from the last acknowledgement, and nothing is applied twice', async () => {
  const { dir, store, wal } = await localLog(30);
  const replica = await replicaIn(dir);
  // Lose the first batch that carries entries: the ones after it then arrive after a gap.
  let lost = false;
  const { transport } = lossy(createSimulatedTransport(replica, { latencyMs: 0, jitterMs: 0 }), (b) => {
    if (lost || b.entries.length === 0) return false;
    return (lost = true);
  });
  const link = new ReplicationLink({ region: 'us-iowa', wal, transport, warn: () => {}, batchEntries: 5, stallMarginMs: 50, tickMs: 10 });
  link.start([[ORG, 30]]);
  await waitFor(() => link.acked(ORG) === 30, 30_000, 'the lost entries to be sent again');
  assert.equal(replica.stats.applied, 30);
  assert.ok(replica.stats.gaps > 0, 'the batches after the lost one were refused, not applied out of order');
  assert.deepEqual(
    replica.wal.records(ORG, 0, 100).map((r) => r.offset),
    Array.from({ length: 30 }, (_, i) => i + 1),
  );
  link.stop();
  await replica.close();
  await store.close();
});

test('a link started against a replica that already holds part of the log resumes from the replica position', async () => {
  const { dir, store, wal } = await localLog(20);
  const first = await replicaIn(dir);
  await first.receive({ org: ORG, session: 1, entries: wal.records(ORG, 0, 12) });
  await first.close();

  const replica = await replicaIn(dir);
  const { transport, sent } = lossy(createSimulatedTransport(replica, { latencyMs: 0, jitterMs: 0 }), () => false);
  const link = new ReplicationLink({ region: 'us-iowa', wal: wal as Wal, transport, warn: () => {} });
  link.start([[ORG, 20]]);
  assert.equal(link.state(), 'catching_up');
  await waitFor(() => link.acked(ORG) === 20 && link.state() === 'streaming', 30_000, 'the replica to catch up');
  assert.deepEqual(
    sent.flatMap((b) => b.entries.map((e) => e.offset)),
    [13, 14, 15, 16, 17, 18, 19, 20],
    'only what the replica lacked was shipped',
  );
  assert.equal(replica.stats.applied, 8);
  link.stop();
  await replica.close();
  await store.close();
});
