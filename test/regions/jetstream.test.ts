// Regions as separate processes over NATS JetStream: three real nats-servers (a domain each, leafnodes to
// the origin's as hub, a proxy of ours on each link), the origin's service process and two replica region
// processes. all_regions, 408 and the event twins keep their meaning; a link cut, black-holed and restored,
// kill -9 of a replica process, of the hub's nats-server and of the origin process lose nothing: afterwards every region's log
// equals the origin's, byte for byte, and each twin was emitted once.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { consumerName, streamName } from '../../src/regions/jetstream/wire.js';
import { replicaStoreName } from '../../src/regions/replica-store.js';
import { createWal } from '../../src/wal/log.js';
import { openStore } from '../../src/wal/store.js';
import { jetstreamEnv, natsAvailable, startNatsRegions, type NatsRegions } from '../support/nats.js';
import { spawnService, type ServiceProcess } from '../support/process.js';
import { ALL_REGIONS, allRegions, readLog, regionHealth, waitFor } from '../support/regions.js';
import { email, removeDir, ROOT_ORG, tempDir } from '../support/server.js';
import { Subscriber, type JsonFrame } from '../support/ws.js';

const REGIONS = ['europe-belgium', 'us-iowa', 'asia-japan'] as const;
const [ORIGIN, IOWA, JAPAN] = REGIONS;
const skip = natsAvailable ? false : 'nats-server is not on PATH (.ci/run installs it)';

const dir = tempDir('identity-nats-');
let nats: NatsRegions;
let origin: ServiceProcess;
const replicas = new Map<string, ServiceProcess>();
let events: Subscriber;

const env = (region: string): Record<string, string> => ({ ...jetstreamEnv(nats, REGIONS, region), SERVICE_ORIGIN_URL: 'https://belgium.example' });

const startReplica = async (region: string) => replicas.set(region, await spawnService(env(region), join(dir, `svc-${region}`)));

before(async () => {
  if (skip) return;
  nats = await startNatsRegions(REGIONS, join(dir, 'nats'));
  origin = await spawnService(env(ORIGIN), join(dir, `svc-${ORIGIN}`));
  for (const r of [IOWA, JAPAN]) await startReplica(r);
  events = await Subscriber.open(origin.base);
});

after(async () => {
  await events?.close();
  for (const p of [origin, ...replicas.values()]) await p?.kill();
  await nats?.stop();
  removeDir(dir);
});

/** The offset of the snapshot a stopped region's store holds for the organization (0 when none). */
async function snapshotOffset(dataDir: string, storeName: string, org: string): Promise<number> {
  const store = openStore(dataDir, storeName, false);
  try {
    return createWal(store, () => {}).loadSnapshot(org)?.offset ?? 0;
  } finally {
    await store.close();
  }
}

const applied = async (region: string, org = ROOT_ORG): Promise<number> => {
  const res = await fetch(`${(replicas.get(region) as ServiceProcess).base}/replica/organizations/${org}`);
  return res.status === 200 ? ((await res.json()) as { result: { offset: number } }).result.offset : 0;
};
const originLink = async (region: string) => (await regionHealth(origin.base)).find((r) => r.name === region);
const caughtUp = async () => (await regionHealth(origin.base)).every((r) => r.state === 'local' || r.lag_entries === 0);
const named = (name: string, id: string) => events.frames.filter((f: JsonFrame) => f.event.event_metadata.event_name === name && f.event.suborganization_id === id);

/** Writes persons while `run` lasts, a few in flight; returns how many were acknowledged (local_region). */
let written = 0;
async function underLoad(run: () => Promise<void>): Promise<number> {
  let done = false;
  let acknowledged = 0;
  const writer = async () => {
    while (!done) {
      const res = await origin.client.post('/persons', email(`load-${written++}@example.com`));
      if (res.status === 201) acknowledged++;
      else assert.fail(`a local write was refused: ${res.status} ${res.text}`);
    }
  };
  const writers = [writer(), writer(), writer()];
  try {
    await run();
  } finally {
    done = true;
    await Promise.all(writers);
  }
  assert.ok(acknowledged > 0, 'writes went on meanwhile');
  return acknowledged;
}

test('an all_regions write is answered once every region applied it; a replica refuses writes naming the origin', { skip }, async () => {
  const before = await Promise.all([applied(IOWA), applied(JAPAN)]);
  const res = await origin.client.post('/persons', email('everywhere@example.com'), ALL_REGIONS);
  assert.equal(res.status, 201, res.text);
  const now = await Promise.all([applied(IOWA), applied(JAPAN)]);
  assert.ok((now[0] as number) > (before[0] as number) && (now[1] as number) > (before[1] as number), `applied ${before} → ${now}`);

  const refused = await (replicas.get(IOWA) as ServiceProcess).client.post('/persons', email('wrong@example.com'));
  assert.equal(refused.status, 409, refused.text);
  assert.match(refused.body.errors[0].message, /europe-belgium at https:\/\/belgium\.example/);
  const health = (await (await fetch(`${(replicas.get(IOWA) as ServiceProcess).base}/health`)).json()) as { result: { role: string; regions: Array<{ name: string }> } };
  assert.equal(health.result.role, 'replica');
  assert.equal(health.result.regions[1]?.name, ORIGIN);
});

test('a cut link: 408 past the timeout, _InRegion at once, the plain twin and the write after the heal', { skip }, async () => {
  const proxy = nats.proxies.get(JAPAN)!;
  proxy.setMode('cut');
  const created = await origin.client.post('/organizations/suborganizations', { sub_org_name: 'while-cut' }, allRegions(1));
  assert.equal(created.status, 408, created.text);
  const id = (await origin.client.get('/organizations/suborganizations')).body.result.find((o: { org_name?: string; name?: string }) => (o.org_name ?? o.name) === 'while-cut')?.id as string | undefined;
  await waitFor(() => events.frames.some((f) => f.event.event_metadata.event_name === 'SuborganizationCreated_InRegion_v1' && f.event.org_name === 'while-cut'), 30_000, '_InRegion at the local commit');
  const sub = events.frames.find((f) => f.event.org_name === 'while-cut')?.event.suborganization_id as string;
  assert.ok(sub, `suborganization id (listed: ${id})`);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(named('SuborganizationCreated_v1', sub).length, 0, 'no plain twin while a region lacks it');
  assert.notEqual((await originLink(JAPAN))?.lag_entries, 0);

  proxy.setMode('up');
  await waitFor(() => named('SuborganizationCreated_v1', sub).length === 1, 60_000, 'the plain twin after the heal');
  await waitFor(caughtUp, 60_000, 'every link caught up');
  assert.ok((await applied(JAPAN, sub)) >= 1, 'the suborganization reached the cut region');
});

test('a black-holed link, then restored, under load', { skip }, async () => {
  const proxy = nats.proxies.get(IOWA)!;
  await underLoad(async () => {
    proxy.setMode('blackhole');
    await new Promise((r) => setTimeout(r, 3000));
    proxy.setMode('up');
  });
  await waitFor(caughtUp, 60_000, 'caught up after the black hole');
});

test('kill -9 of a replica region process, under load', { skip }, async () => {
  await underLoad(async () => {
    await (replicas.get(JAPAN) as ServiceProcess).kill();
    await new Promise((r) => setTimeout(r, 1000));
    await startReplica(JAPAN);
  });
  await waitFor(caughtUp, 60_000, 'caught up after the replica restarted');
});

// Once in eight full runs this case stalled past its 90 s. What the origin allowed then: a publish lost with
// the hub while a later one, buffered by the client through the reconnect, was stored; the replica skipped that
// later batch as a gap, and a resend of it with the same boundaries, and so the same Msg-Id, was dropped as a
// duplicate for the stream's two-minute window. Every publish now has its own Msg-Id, and the origin publishes
// again, in order, from any failed publish (jetstream-publisher.test.ts), so the case runs by default again.
test('kill -9 of the hub nats-server, under load', { skip }, async () => {
  const hub = nats.servers.get(ORIGIN)!;
  await underLoad(async () => {
    // Shipping in full flow when the hub dies, so that publishes are in flight and buffered through the reconnect.
    await new Promise((r) => setTimeout(r, 1500));
    await hub.kill();
    await new Promise((r) => setTimeout(r, 1000));
    await hub.start();
    await nats.joined();
  });
  await waitFor(caughtUp, 90_000, 'caught up after the hub restarted');
  const res = await origin.client.post('/persons', email('after-all@example.com'), allRegions(30));
  assert.equal(res.status, 201, res.text);
});

test('kill -9 of the origin process under load, with a twin owed: what it acknowledged reaches every region', { skip }, async () => {
  const proxy = nats.proxies.get(JAPAN)!;
  proxy.setMode('cut');
  const owed = await origin.client.post('/organizations/suborganizations', { sub_org_name: 'owed-at-crash' });
  assert.equal(owed.status, 200, owed.text);
  const acknowledged: string[] = [];
  let done = false;
  const writer = async () => {
    while (!done) {
      try {
        const res = await origin.client.post('/persons', email(`crash-${written++}@example.com`));
        if (res.status === 201) acknowledged.push(res.body.result.person_id as string);
      } catch {
        await new Promise((r) => setTimeout(r, 50)); // the process is gone, or not back yet
      }
    }
  };
  const writers = [writer(), writer(), writer()];
  await new Promise((r) => setTimeout(r, 1000));
  await events.close();
  await origin.kill();
  const killedAt = acknowledged.length;
  origin = await origin.restart();
  await new Promise((r) => setTimeout(r, 1000));
  done = true;
  await Promise.all(writers);
  assert.ok(killedAt > 0 && acknowledged.length > killedAt, `writes before (${killedAt}) and after the crash (${acknowledged.length})`);
  proxy.setMode('up');
  // The whole log again: each twin must appear once over both lives of the process.
  events = await Subscriber.open(origin.base, { query: { from: '1' } });
  await waitFor(caughtUp, 90_000, 'caught up after the origin restarted');
  for (const id of acknowledged) assert.equal((await origin.client.get(`/persons/${id}`)).status, 200, `acknowledged person ${id} survived`);
});

test('the origin starts and takes local writes while its nats-server is down; shipping resumes once it is up', { skip }, async () => {
  const hub = nats.servers.get(ORIGIN)!;
  await events.close();
  await origin.stop();
  await hub.kill();
  origin = await origin.restart();
  const res = await origin.client.post('/persons', email('hub-down@example.com'));
  assert.equal(res.status, 201, res.text);
  const waiting = await origin.client.post('/persons', email('hub-down-all@example.com'), allRegions(1));
  assert.equal(waiting.status, 408, waiting.text);
  await hub.start();
  await nats.joined();
  events = await Subscriber.open(origin.base, { query: { from: '1' } });
  await waitFor(caughtUp, 90_000, 'caught up once the hub was back');
});

test("a replica cut off past the stream's retention catches up (the origin's WAL resent, or its snapshot)", { skip }, async () => {
  const proxy = nats.proxies.get(JAPAN)!;
  proxy.setMode('cut');
  await underLoad(() => new Promise((r) => setTimeout(r, 1000)));
  // What the stream held while the region was away ages out (here: is purged, as max_age would).
  const nc = await connect({ servers: nats.servers.get(ORIGIN)?.url as string });
  try {
    const jsm = await jetstreamManager(nc);
    const purged = await jsm.streams.purge(streamName(ORIGIN));
    assert.ok(purged.purged > 0, 'the stream held what the cut region missed');
  } finally {
    await nc.close();
  }
  const res = await origin.client.post('/persons', email('after-purge@example.com'));
  assert.equal(res.status, 201, res.text);
  proxy.setMode('up');
  await waitFor(caughtUp, 90_000, 'the region caught up past the purge');
});

test('a replica whose durable consumer was deleted sets it up again and catches up', { skip }, async () => {
  const nc = await connect({ servers: nats.servers.get(JAPAN)?.url as string });
  try {
    const jsm = await jetstreamManager(nc);
    // nats-server can refuse a delete that races the consumer's own state flush ("unlinkat …: directory not
    // empty"); the consumer is then still there, and deleting it again succeeds.
    for (let attempt = 1; ; attempt++) {
      try {
        assert.ok(await jsm.consumers.delete(streamName(ORIGIN), consumerName(JAPAN)));
        break;
      } catch (error) {
        if (attempt === 10 || !/directory not empty/.test(String(error))) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    await nc.close();
  }
  const res = await origin.client.post('/persons', email('after-consumer-deleted@example.com'));
  assert.equal(res.status, 201, res.text);
  await waitFor(caughtUp, 60_000, 'caught up with a consumer set up again');
  assert.ok((await applied(JAPAN)) >= 1, 'the region applies again');
});

test('every region holds every entry exactly once, byte for byte, and each twin was emitted once', { skip }, async () => {
  await waitFor(caughtUp, 60_000, 'caught up');
  const subs = new Set(events.frames.filter((f) => f.event.event_metadata.event_name === 'SuborganizationCreated_InRegion_v1').map((f) => f.event.suborganization_id as string));
  for (const s of subs) {
    await waitFor(() => named('SuborganizationCreated_v1', s).length >= 1, 30_000, `plain twin of ${s}`);
    assert.equal(named('SuborganizationCreated_v1', s).length, 1, `one plain twin of ${s}`);
    assert.equal(named('SuborganizationCreated_InRegion_v1', s).length, 1, `one _InRegion twin of ${s}`);
  }
  await events.close();
  for (const p of [origin, ...replicas.values()]) await p.stop();
  const local = await readLog(origin.dataDir, 'local');
  for (const r of [IOWA, JAPAN]) {
    const log = await readLog((replicas.get(r) as ServiceProcess).dataDir, replicaStoreName(r));
    assert.deepEqual([...log.keys()].sort(), [...local.keys()].sort(), `${r} holds every organization`);
    for (const [org, entries] of local) {
      // A region that was caught up from the origin's snapshot lacks the entries the snapshot covered, only those.
      const held = log.get(org) ?? [];
      const covered = await snapshotOffset((replicas.get(r) as ServiceProcess).dataDir, replicaStoreName(r), org);
      const missing = new Set(entries.map(([offset]) => offset));
      for (const [offset] of held) missing.delete(offset);
      assert.ok([...missing].every((offset) => offset <= covered), `${r}: ${org} lacks only entries its snapshot (at ${covered}) covers`);
      assert.deepEqual(held, entries.filter(([offset]) => !missing.has(offset)), `${r}: ${org} entry for entry`);
    }
  }
});
