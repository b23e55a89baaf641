// A link's own measure of its round trips, on a manual clock: the stall threshold follows what the link
// has measured, not what its transport was configured with.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/changes.js';
import { createManualClock } from '../../src/lib/manual-clock.js';
import { ReplicationLink } from '../../src/regions/link.js';
import { Replica } from '../../src/regions/replica.js';
import { openReplicaStore } from '../../src/regions/replica-store.js';
import { createRoundTrip } from '../../src/regions/round-trip.js';
import { createSimulatedTransport } from '../../src/regions/simulated-transport.js';
import { createWal } from '../../src/wal/log.js';
import { openStore } from '../../src/wal/store.js';
import { countingEndpoint, driveUntil, settled } from '../support/drive.js';
import { removeDir, tempDir } from '../support/server.js';

const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

const ORG = 'org-r';

test('given no sample, then nothing is late beyond the margin; given samples, then the bound is the mean plus four deviations', () => {
  const rtt = createRoundTrip();
  assert.equal(rtt.bound(), 0);
  rtt.sample(200);
  assert.equal(rtt.mean(), 200);
  assert.equal(rtt.bound(), 200 + 4 * 100, 'a first sample counts as half uncertain');
  rtt.sample(200);
  assert.equal(rtt.mean(), 200);
  assert.equal(rtt.bound(), 200 + 4 * 75);
  for (let i = 0; i < 100; i++) rtt.sample(200);
  assert.ok(rtt.bound() - 200 < 1, 'steady round trips leave no deviation');
  rtt.sample(-5);
  assert.ok(rtt.mean() < 200, 'a negative sample counts as zero');
});

test('a link measures its round trips and lags only when an acknowledgement is later than they explain', async () => {
  const dir = tempDir();
  dirs.push(dir);
  const store = openStore(dir, 'local', false);
  const wal = createWal(store, () => {});
  const genesis: Change = { t: 'OrgCreated', genesis: { id: ORG, org_name: 'r', parent_id: null, root_id: ORG, api_key_hash: 'ab', created: '2026-01-01T00:00:00.000Z' } };
  const writes = [1, 2, 3].map((offset) => ({
    org: ORG,
    offset,
    record: wal.encodeEntry({ at: 0, changes: offset === 1 ? [genesis] : [{ t: 'AttributesSet', bucket: 'end_user_read_write', attributes: { n: offset }, replace: false }], ev: 0 }),
    events: [],
  }));
  await wal.append(writes, [ORG]);
  const replica = await Replica.open('us-iowa', openReplicaStore(dir, 'us-iowa', false, () => {}), 10_000, () => {});

  const clock = createManualClock();
  const { endpoint, outstanding } = countingEndpoint(replica);
  const transport = createSimulatedTransport(endpoint, { latencyMs: 100, jitterMs: 0, clock });
  const link = new ReplicationLink({ region: 'us-iowa', wal, transport, clock, warn: () => {} });
  link.start([[ORG, 2]]);
  await driveUntil(clock, outstanding, () => link.acked(ORG) === 2 && link.state() === 'streaming', 'the link to stream');
  assert.equal(link.roundTripMs(), 200, 'the probe and the first batch each took 2 × 100 ms');

  // The network slows down behind the link's back: it only learns of it from its acknowledgements.
  transport.setConditions({ latencyMs: 1000 });
  link.committed(ORG, 3);
  clock.advance(900);
  await settled(outstanding);
  assert.equal(link.state(), 'streaming', 'within the measured round trip plus the margin');
  clock.advance(100);
  await settled(outstanding);
  clock.advance(300);
  assert.equal(link.state(), 'lagging', 'later than any round trip measured so far explains');
  await driveUntil(clock, outstanding, () => link.state() === 'streaming', 'the acknowledgement');
  assert.equal(link.acked(ORG), 3);
  assert.equal(link.roundTripMs(), 0.875 * 200 + 0.125 * 2000, 'the slow round trip is measured too');

  link.stop();
  await replica.close();
  await store.close();
});
