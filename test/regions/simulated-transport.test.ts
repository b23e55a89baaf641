// The simulated network on a manual clock: delays are exact in clock time, and nothing sleeps.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/changes.js';
import { createManualClock, type ManualClock } from '../../src/lib/manual-clock.js';
import { Replica } from '../../src/regions/replica.js';
import { openReplicaStore } from '../../src/regions/replica-store.js';
import { createSimulatedTransport } from '../../src/regions/simulated-transport.js';
import type { Ack, Batch, ReplicaEndpoint, ShippedEntry } from '../../src/regions/transport.js';
import { encodeRecord } from '../../src/wal/codec.js';
import { countingEndpoint, driveUntil, settled } from '../support/drive.js';
import { removeDir, tempDir } from '../support/server.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

const ORG = 'org-t';
function entry(offset: number): ShippedEntry {
  const changes: Change[] =
    offset === 1
      ? [{ t: 'OrgCreated', genesis: { id: ORG, org_name: 't', parent_id: null, root_id: ORG, api_key_hash: 'ab', created: '2026-01-01T00:00:00.000Z' } }]
      : [{ t: 'AttributesSet', bucket: 'end_user_read_write', attributes: { n: offset }, replace: false }];
  return { offset, record: encodeRecord({ at: 0, changes, ev: 0 }) };
}

/** A real replica, with a note of every batch as it arrives and when on the clock. */
async function recordingReplica(clock: ManualClock) {
  const dir = tempDir();
  dirs.push(dir);
  const replica = await Replica.open('asia-japan', openReplicaStore(dir, 'asia-japan', false, () => {}), 10_000, () => {});
  const arrivals: Array<{ first: number | undefined; at: number }> = [];
  const { endpoint, outstanding }: { endpoint: ReplicaEndpoint; outstanding: () => number } = countingEndpoint(replica, (batch: Batch) =>
    arrivals.push({ first: batch.entries[0]?.offset, at: clock.monoMs() }),
  );
  return { replica, endpoint, arrivals, outstanding };
}

function collectAcks(transport: { onAck(l: (a: Ack) => void): void }) {
  const acks: Ack[] = [];
  transport.onAck((a) => acks.push(a));
  return acks;
}

test('batches arrive in the order sent, never before the latency, even when jitter would reorder them', async () => {
  const clock = createManualClock();
  const { replica, endpoint, arrivals, outstanding } = await recordingReplica(clock);
  // Decreasing jitter draws: without the ordering rule each batch would overtake the one before it.
  let draw = 1;
  const transport = createSimulatedTransport(endpoint, { latencyMs: 30, jitterMs: 40, clock, random: () => (draw = Math.max(0, draw - 0.2)) });
  const acks = collectAcks(transport);
  const sentAt = clock.monoMs();
  for (let offset = 1; offset <= 5; offset++) transport.send({ org: ORG, session: 1, entries: [entry(offset)] });
  await driveUntil(clock, outstanding, () => acks.length === 5, 'five acknowledgements');
  assert.deepEqual(arrivals.map((a) => a.first), [1, 2, 3, 4, 5]);
  assert.ok(arrivals.every((a) => a.at - sentAt >= 29), 'no batch arrives before the one-way latency');
  // Batches that reach the replica together share a commit, so their acknowledgements may name a later offset.
  const offsets = acks.map((a) => a.offset);
  assert.deepEqual(offsets, [...offsets].sort((a, b) => a - b), 'acknowledgements come back in order');
  assert.equal(offsets[4], 5);
  assert.ok(clock.monoMs() - sentAt >= 59, 'an acknowledgement takes a round trip');
  assert.equal(replica.stats.gaps, 0);
  transport.close();
  await replica.close();
});

test('a cut loses what is in flight both ways and ignores sends until the link is up again', async () => {
  const clock = createManualClock();
  const { replica, endpoint, arrivals, outstanding } = await recordingReplica(clock);
  const transport = createSimulatedTransport(endpoint, { latencyMs: 50, jitterMs: 0, clock });
  const acks = collectAcks(transport);
  transport.send({ org: ORG, session: 1, entries: [entry(1)] });
  transport.setConditions({ up: false });
  transport.send({ org: ORG, session: 1, entries: [entry(2)] });
  clock.advance(120);
  await settled(outstanding);
  assert.equal(arrivals.length, 0, 'nothing crosses a cut link');
  assert.equal(acks.length, 0);
  assert.deepEqual(transport.setConditions({ up: true, latencyMs: 0 }), { up: true, latencyMs: 0, jitterMs: 0 });
  transport.send({ org: ORG, session: 2, entries: [entry(1), entry(2)] });
  await driveUntil(clock, outstanding, () => acks.length === 1, 'the acknowledgement of the batch sent after the cut');
  assert.deepEqual(acks[0], { org: ORG, session: 2, offset: 2 });

  // An acknowledgement on its way back when the link is cut is lost too.
  transport.setConditions({ latencyMs: 60 });
  transport.send({ org: ORG, session: 2, entries: [entry(3)] });
  await driveUntil(clock, outstanding, () => arrivals.length === 2, 'the third entry to arrive');
  transport.setConditions({ up: false });
  clock.advance(120);
  await settled(outstanding);
  assert.equal(acks.length, 1);
  assert.equal(replica.applied(ORG), 3, 'the replica applied the batch that arrived before the cut');
  transport.close();
  await replica.close();
});
