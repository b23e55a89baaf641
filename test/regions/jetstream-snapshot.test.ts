// A replica region that fell behind past the stream's retention, over real nats-servers: it is stopped, the
// stream and its mirror are cut to a few messages so its position is dropped, writes go on, and on restart
// it installs the origin's snapshot and goes on from the stream, ending with exactly the origin's state.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { toSnapshot } from '../../src/domain/snapshot.js';
import { recoverOrg } from '../../src/org/recovery.js';
import { streamName } from '../../src/regions/jetstream/wire.js';
import { replicaStoreName } from '../../src/regions/replica-store.js';
import { createWal } from '../../src/wal/log.js';
import { openStore } from '../../src/wal/store.js';
import { jetstreamEnv, natsAvailable, startNatsRegions, type NatsRegions } from '../support/nats.js';
import { spawnService, type ServiceProcess } from '../support/process.js';
import { readLog, regionHealth, waitFor } from '../support/regions.js';
import { email, removeDir, ROOT_ORG, tempDir } from '../support/server.js';

const REGIONS = ['europe-belgium', 'us-iowa', 'asia-japan'] as const;
const [ORIGIN, IOWA, JAPAN] = REGIONS;
const skip = natsAvailable ? false : 'nats-server is not on PATH (.ci/run installs it)';

const dir = tempDir('identity-natsnap-');
let nats: NatsRegions;
let origin: ServiceProcess;
const replicas = new Map<string, ServiceProcess>();

const env = (region: string): Record<string, string> => jetstreamEnv(nats, REGIONS, region);
const startReplica = async (region: string) => replicas.set(region, await spawnService(env(region), join(dir, `svc-${region}`)));

before(async () => {
  if (skip) return;
  nats = await startNatsRegions(REGIONS, join(dir, 'nats'));
  origin = await spawnService(env(ORIGIN), join(dir, `svc-${ORIGIN}`));
  for (const r of [IOWA, JAPAN]) await startReplica(r);
});

after(async () => {
  for (const p of [origin, ...replicas.values()]) await p?.kill();
  await nats?.stop();
  removeDir(dir);
});

const caughtUp = async () => (await regionHealth(origin.base)).every((r) => r.state === 'local' || r.lag_entries === 0);
const replicaStats = async (region: string) => ((await (await fetch(`${(replicas.get(region) as ServiceProcess).base}/health`)).json()) as { result: { stats: { installed: number } } }).result.stats;

/**
 * Sets the max_age of the origin's stream (in the origin's domain) or of a region's mirror of it. The
 * duplicate window may not exceed it, and the origin's process puts both back when it starts.
 */
async function setRetention(region: string, maxAgeMs: number): Promise<void> {
  const nc = await connect({ servers: nats.servers.get(region)?.url as string });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(streamName(ORIGIN));
    await jsm.streams.update(streamName(ORIGIN), { ...info.config, max_age: maxAgeMs * 1_000_000, duplicate_window: Math.min(info.config.duplicate_window, maxAgeMs * 1_000_000) });
  } finally {
    await nc.close();
  }
}

async function storedMessages(region: string): Promise<number> {
  const nc = await connect({ servers: nats.servers.get(region)?.url as string });
  try {
    return (await (await jetstreamManager(nc)).streams.info(streamName(ORIGIN))).state.messages;
  } finally {
    await nc.close();
  }
}

/** An organization's state as a store's snapshot and log rebuild it, in the snapshot format, and its snapshot's offset. */
async function stateIn(dataDir: string, storeName: string, org: string) {
  const store = openStore(dataDir, storeName, false);
  try {
    const r = await recoverOrg(createWal(store, () => {}), org);
    return r && { state: toSnapshot(r.state), snapshotOffset: r.snapshotOffset };
  } finally {
    await store.close();
  }
}

test("a replica stopped past the stream's retention installs the origin's snapshot, then follows the stream", { skip, timeout: 240_000 }, async () => {
  const acknowledged: string[] = [];
  const write = async (n: number, tag: string) => {
    // One at a time, so the order they were acknowledged in is the order they were committed in.
    for (let i = 0; i < n; i++) {
      const res = await origin.client.post('/persons', email(`${tag}-${i}@example.com`));
      assert.equal(res.status, 201, res.text);
      acknowledged.push(res.body.result.person_id as string);
    }
  };
  await write(20, 'before');
  await waitFor(caughtUp, 60_000, 'caught up before the stop');

  await (replicas.get(JAPAN) as ServiceProcess).stop();
  await write(100, 'while-away');
  const linkTo = async (region: string) => (await regionHealth(origin.base)).find((r) => r.name === region)?.lag_entries === 0;
  await waitFor(() => linkTo(IOWA), 60_000, 'Iowa, still there, caught up');
  // The origin stops too, so that nothing resends from Japan's position while the stream forgets it; the
  // stream and Japan's mirror then age out everything they held.
  await origin.stop();
  await setRetention(ORIGIN, 1000);
  await setRetention(JAPAN, 1000);
  await waitFor(async () => (await storedMessages(ORIGIN)) === 0 && (await storedMessages(JAPAN)) === 0, 60_000, "the stream and Japan's mirror dropped Japan's position");
  await setRetention(JAPAN, 3_600_000);

  // The origin puts its stream's retention back; new writes reach the stream through Iowa's link, and
  // Japan's link asks where Japan stands before it resends anything.
  origin = await origin.restart();
  await write(20, 'after-restart');
  // Before Japan is back, Iowa's link has published them: the stream then starts past Japan's position, and
  // Japan's link ships only what the stream lacks, so the gap is Japan's to close (else its link could publish
  // the missing entries from the origin's WAL first, and Japan would never need the snapshot).
  await waitFor(() => linkTo(IOWA), 60_000, 'Iowa caught up after the restart');
  await startReplica(JAPAN);
  await write(20, 'after');
  await waitFor(caughtUp, 120_000, 'Japan caught up');
  assert.ok((await replicaStats(JAPAN)).installed >= 1, "Japan installed the origin's snapshot");
  assert.equal((await replicaStats(IOWA)).installed, 0, 'Iowa, never behind, needed none');

  for (const p of [origin, ...replicas.values()]) await p.stop();
  const expected = (await stateIn(origin.dataDir, 'local', ROOT_ORG))?.state;
  assert.ok(expected);
  let japanSnapshotAt = 0;
  for (const r of [IOWA, JAPAN]) {
    const held = await stateIn((replicas.get(r) as ServiceProcess).dataDir, replicaStoreName(r), ROOT_ORG);
    if (r === JAPAN) japanSnapshotAt = held?.snapshotOffset ?? 0;
    const got = held?.state;
    assert.deepEqual(got, expected, `${r} holds exactly the origin's state`);
    // Every acknowledged write once, in the order it was acknowledged.
    const order = (got as { persons: Array<{ person_id: string }> }).persons.map((p) => p.person_id);
    const mine = order.filter((id) => acknowledged.includes(id));
    assert.deepEqual(mine, acknowledged, `${r}: every acknowledged person once, in order`);
  }
  // What Japan's log holds is the origin's, byte for byte; it lacks only entries its snapshot covers.
  const local = (await readLog(origin.dataDir, 'local')).get(ROOT_ORG) ?? [];
  const log = (await readLog((replicas.get(JAPAN) as ServiceProcess).dataDir, replicaStoreName(JAPAN))).get(ROOT_ORG) ?? [];
  const byOffset = new Map(local);
  for (const [offset, record] of log) assert.equal(record, byOffset.get(offset), `entry ${offset}`);
  // The snapshot Japan installed may already cover the last writes (it is taken when Japan asks for it).
  assert.equal(Math.max(log[log.length - 1]?.[0] ?? 0, japanSnapshotAt), local[local.length - 1]?.[0], 'the same last entry applied');
  assert.ok(log.length < local.length, 'entries the snapshot covered were not shipped one by one');
});
