// Regional events end to end: SuborganizationCreated_InRegion_v1 at the local commit, SuborganizationCreated_v1
// once every region has applied it, read from WS /events. One region, a cut link healed, and restarts with the
// twin still owed: each twin appears exactly once, valid, after its _InRegion form.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { CommittedEntry } from '../../src/org/commit-bus.js';
import { validateEvent } from '../../src/events/validate.js';
import { email, removeDir, ROOT_ORG, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { ALL_REGIONS, caughtUp, setLink, startRegionServer, waitFor } from '../support/regions.js';
import { Subscriber, type JsonFrame } from '../support/ws.js';

const IN_REGION = 'SuborganizationCreated_InRegion_v1';
const PLAIN = 'SuborganizationCreated_v1';
const MARKER = 'ServiceSDKLoaded_v1';

const servers = new Set<TestServer>();
const subscribers = new Set<Subscriber>();
const dirs = new Set<string>();
after(async () => {
  for (const s of subscribers) await s.close();
  for (const s of servers) await s.stop();
  for (const d of dirs) removeDir(d);
});

async function start(env: Record<string, string> | 'three regions', dataDir: string): Promise<TestServer> {
  dirs.add(dataDir);
  const server = env === 'three regions' ? await startRegionServer({}, dataDir) : await startTestServer(env, {}, dataDir);
  servers.add(server);
  return server;
}

async function stop(server: TestServer): Promise<void> {
  for (const s of subscribers) await s.close();
  subscribers.clear();
  await server.stop();
  servers.delete(server);
}

async function subscribe(server: TestServer, from?: number): Promise<Subscriber> {
  const sub = await Subscriber.open(server.base, from === undefined ? {} : { query: { from: String(from) } });
  subscribers.add(sub);
  return sub;
}

const named = (frames: readonly JsonFrame[], name: string) => frames.filter((f) => f.event.event_metadata.event_name === name);

/** Appends a marker event and waits for the subscriber to receive it: every earlier event has been sent by then. */
async function settle(server: TestServer, sub: Subscriber): Promise<number> {
  const res = await server.client.post('/test-events', [{ event_name: MARKER }]);
  assert.equal(res.status, 201, res.text);
  const offset = res.body.result[0].offset as number;
  await sub.waitUntil(() => sub.frames.some((f) => f.offset === offset), 30_000, `marker ${offset}`);
  return offset;
}

function assertValid(frames: readonly JsonFrame[]): void {
  for (const { offset, event } of frames) assert.equal(validateEvent(event.event_metadata.event_name, event), null, `offset ${offset}`);
}

function assertTwins(frames: readonly JsonFrame[], sub: { id: string; org_name: string }): void {
  const body = { suborganization_id: sub.id, org_name: sub.org_name, parent_organization_id: ROOT_ORG };
  const inRegion = named(frames, IN_REGION).filter((f) => f.event.suborganization_id === sub.id);
  const plain = named(frames, PLAIN).filter((f) => f.event.suborganization_id === sub.id);
  assert.equal(inRegion.length, 1, `one ${IN_REGION} for ${sub.org_name}`);
  assert.equal(plain.length, 1, `one ${PLAIN} for ${sub.org_name}`);
  const [a, b] = [inRegion[0] as JsonFrame, plain[0] as JsonFrame];
  assert.deepEqual({ ...a.event, event_metadata: undefined }, { event_metadata: undefined, ...body, region: 'europe-belgium' });
  assert.deepEqual({ ...b.event, event_metadata: undefined }, { event_metadata: undefined, ...body });
  assert.ok(a.offset < b.offset, '_InRegion first');
  assert.notEqual(a.event.event_metadata.event_id, b.event.event_metadata.event_id);
  assertValid([a, b]);
}

/** The event offsets of each entry the root organization commits from now on. */
function recordEntries(server: TestServer): CommittedEntry[] {
  const entries: CommittedEntry[] = [];
  server.service.commits.subscribe((commit) => {
    if (commit.org === ROOT_ORG) entries.push(...commit.entries);
  });
  return entries;
}

const entryOf = (entries: readonly CommittedEntry[], eventOffset: number) => entries.find((e) => e.events.some((ev) => ev.offset === eventOffset));
const owed = (server: TestServer) => server.service.registry.get(ROOT_ORG)?.state.owed_twins ?? [];
const metrics = async (server: TestServer) => (await server.client.get('/metrics')).text;

test('with one region, both forms are emitted by the same entry, _InRegion first', async () => {
  const server = await start({}, tempDir());
  const entries = recordEntries(server);
  const sub = await subscribe(server);
  const created = await server.client.post('/organizations/suborganizations', { sub_org_name: 'alone' });
  assert.equal(created.status, 200);
  await settle(server, sub);
  assertTwins(sub.frames, { id: created.body.result.id, org_name: 'alone' });
  const [a, b] = [named(sub.frames, IN_REGION)[0] as JsonFrame, named(sub.frames, PLAIN)[0] as JsonFrame];
  assert.equal(b.offset, a.offset + 1);
  const entry = entryOf(entries, a.offset);
  assert.ok(entry);
  assert.deepEqual(entry.events.map((e) => e.offset), [a.offset, b.offset], 'one entry emits both');
  assert.deepEqual(entry.changes.map((c) => c.t), ['SuborganizationCreated'], 'and owes nothing');
  assert.deepEqual(owed(server), []);
  await stop(server);
});

test('with three regions, the plain twin waits while a link is cut and appears exactly once after healing, in entry order', async () => {
  const server = await start('three regions', tempDir());
  await waitFor(() => caughtUp(server.base), 30_000, 'the links to stream');
  const entries = recordEntries(server);
  const sub = await subscribe(server);
  assert.equal((await setLink(server.base, 'asia-japan', { link: 'cut' })).status, 200);

  const first = await server.client.post('/organizations/suborganizations', { sub_org_name: 'first' });
  const second = await server.client.post('/organizations/suborganizations', { sub_org_name: 'second' });
  assert.deepEqual([first.status, second.status], [200, 200]);
  const owing = owed(server).map((t) => t.offset);
  assert.equal(owing.length, 2);
  // us-iowa holds both entries; only asia-japan is missing.
  const iowa = server.service.regions.link('us-iowa');
  await waitFor(() => (iowa?.acked(ROOT_ORG) ?? 0) >= (owing[1] as number), 30_000, 'us-iowa to acknowledge both entries');
  // A twin released by that acknowledgement would be queued before the marker, so it would come before it.
  await settle(server, sub);
  assert.equal(named(sub.frames, IN_REGION).length, 2);
  assert.deepEqual(named(sub.frames, PLAIN), [], 'no plain twin while asia-japan lacks the entries');
  assert.equal(owed(server).length, 2);
  assert.match(await metrics(server), /^regional_twins_owed 2$/m);

  assert.equal((await setLink(server.base, 'asia-japan', { link: 'up' })).status, 200);
  await sub.waitUntil(() => named(sub.frames, PLAIN).length >= 2, 30_000, 'both plain twins');
  // More acknowledgements of later entries, from every region, must not emit anything again.
  assert.equal((await server.client.post('/persons', email('after@example.com'), ALL_REGIONS)).status, 201);
  assert.equal((await server.client.patch('/organizations/attributes/end_user_read_write', { k: 1 }, ALL_REGIONS)).status, 204);
  await settle(server, sub);

  assertTwins(sub.frames, { id: first.body.result.id, org_name: 'first' });
  assertTwins(sub.frames, { id: second.body.result.id, org_name: 'second' });
  const plains = named(sub.frames, PLAIN);
  assert.deepEqual(plains.map((f) => f.event.org_name), ['first', 'second'], 'twins follow entry order');
  const emittedBy = entryOf(entries, (plains[0] as JsonFrame).offset);
  assert.ok(emittedBy);
  assert.ok(emittedBy.offset > (owing[1] as number), 'emitted by an entry of its own, after the owing ones');
  assert.deepEqual(emittedBy.changes.map((c) => c.t), ['TwinsEmitted']);
  assert.deepEqual(owed(server), []);
  assert.match(await metrics(server), /^regional_twins_owed 0$/m);
  assertValid(sub.frames);
  await stop(server);
});

/**
 * Owes a twin (asia-japan cut) and stops; starts again on the same data dir with `restartEnv`; returns the
 * restarted server and every event of the root organization from offset 1.
 */
async function owedAcrossRestart(restartEnv: Record<string, string> | 'three regions'): Promise<{ server: TestServer; frames: JsonFrame[]; sub: { id: string; org_name: string } }> {
  const dataDir = tempDir();
  let server = await start('three regions', dataDir);
  await waitFor(() => caughtUp(server.base), 30_000, 'the links to stream');
  await setLink(server.base, 'asia-japan', { link: 'cut' });
  const created = await server.client.post('/organizations/suborganizations', { sub_org_name: 'owed' });
  assert.equal(created.status, 200);
  const entry = owed(server)[0]?.offset as number;
  const iowa = server.service.regions.link('us-iowa');
  await waitFor(() => (iowa?.acked(ROOT_ORG) ?? 0) >= entry, 30_000, 'us-iowa to acknowledge the entry');
  await stop(server);

  server = await start(restartEnv, dataDir);
  const sub = await subscribe(server, 1);
  await sub.waitUntil(() => named(sub.frames, PLAIN).length > 0, 30_000, 'the owed twin after the restart');
  await settle(server, sub);
  return { server, frames: [...sub.frames], sub: { id: created.body.result.id, org_name: 'owed' } };
}

test('across a restart with the link healed, the owed twin is emitted exactly once, and a further restart does not emit it again', async () => {
  const { server, frames, sub } = await owedAcrossRestart('three regions');
  assertTwins(frames, sub);
  assert.deepEqual(owed(server), []);
  assertValid(frames);

  const dataDir = server.dataDir;
  await stop(server);
  const again = await start('three regions', dataDir);
  await waitFor(() => caughtUp(again.base), 30_000, 'the links to stream again');
  const replay = await subscribe(again, 1);
  await settle(again, replay);
  assertTwins(replay.frames, sub);
  await stop(again);
});

test('restarted without the cut region, the twin is owed only to the region left, which already holds the entry: emitted once at start', async () => {
  const { server, frames, sub } = await owedAcrossRestart({ SERVICE_REGIONS: 'europe-belgium,us-iowa' });
  assertTwins(frames, sub);
  await stop(server);
});

test('restarted with a single region, the owed twin is emitted once at start', async () => {
  const { server, frames, sub } = await owedAcrossRestart({ SERVICE_REGIONS: 'europe-belgium' });
  assertTwins(frames, sub);
  await stop(server);
});
