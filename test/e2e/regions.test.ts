import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { toSnapshot } from '../../src/domain/snapshot.js';
import { replicaStoreName } from '../../src/regions/replica-store.js';
import { email, removeDir, ROOT_ORG, startTestServer, type TestServer } from '../support/server.js';
import { ALL_REGIONS, allRegions, caughtUp, OPERATOR_KEY, readLog, regionHealth, setLink, startRegionServer, waitFor } from '../support/regions.js';

const REPLICAS = ['us-iowa', 'asia-japan'] as const;
let server: TestServer;
before(async () => {
  server = await startRegionServer();
});
after(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

/** Every organization's state on a replica equals the local one, and each entry was applied exactly once. */
function assertReplicaMatches(region: string): void {
  const replica = server.service.regions.replica(region);
  assert.ok(replica);
  let entries = 0;
  for (const actor of server.service.registry.all()) {
    const copy = replica.state(actor.id);
    assert.ok(copy, `${region} holds organization ${actor.id}`);
    assert.deepEqual(toSnapshot(copy), toSnapshot(actor.state), `${region}'s copy of ${actor.id} equals the local state`);
    entries += actor.state.offset;
  }
  assert.equal(replica.stats.applied, entries, `${region} applied every entry once`);
}

test('an all_regions write succeeds once every replica holds it', async () => {
  await waitFor(() => caughtUp(server.base), 30_000, 'the links to stream');
  const created = await server.client.post('/persons', email('everywhere@example.com'), ALL_REGIONS);
  assert.equal(created.status, 201);
  const id = created.body.result.person_id as string;
  for (const region of REPLICAS) {
    // No waiting here: the answer itself says every replica has applied it.
    assert.equal(server.service.regions.replica(region)?.state(ROOT_ORG)?.persons.get(id)?.handles[0]?.value, 'everywhere@example.com');
  }
});

test('with a link cut, all_regions answers 408 after its timeout, local_region succeeds, and the 408 write is readable at once', async () => {
  assert.equal((await setLink(server.base, 'asia-japan', { link: 'cut' })).status, 200);
  const started = performance.now();
  const slow = await server.client.put('/organizations/attributes/end_user_read_write', { step: 'timed out' }, allRegions(1));
  const elapsed = performance.now() - started;
  assert.equal(slow.status, 408);
  assert.deepEqual(slow.body.errors, [{ httpcode: 408, message: slow.body.errors[0].message }]);
  assert.match(slow.body.errors[0].message, /all_regions/);
  // Not before the 1 s asked for, and well before the default 30 s (the exact timing is waiters.test's, on a manual clock).
  assert.ok(elapsed >= 990 && elapsed < 10_000, `408 after ${Math.round(elapsed)} ms`);

  const read = await server.client.get('/organizations/attributes/end_user_read_write');
  assert.deepEqual(read.body.result, { step: 'timed out' }, 'the write is committed locally');
  const local = await server.client.post('/persons', email('local@example.com'), { 'Service-Required-Consistency': 'local_region' });
  assert.equal(local.status, 201);
  assert.equal(server.service.regions.replica('asia-japan')?.state(ROOT_ORG)?.persons.has(local.body.result.person_id), false);

  await waitFor(async () => (await regionHealth(server.base)).find((r) => r.name === 'us-iowa')?.lag_entries === 0, 30_000, 'us-iowa to acknowledge');
  assert.deepEqual(
    (await regionHealth(server.base)).find((r) => r.name === 'asia-japan'),
    { name: 'asia-japan', state: 'cut', lag_entries: 2 },
  );
});

test('after healing, the lag returns to zero, the replica holds every write in order exactly once, and all_regions succeeds', async () => {
  const up = await setLink(server.base, 'asia-japan', { link: 'up' });
  assert.equal(up.body.result.state, 'catching_up');
  await waitFor(() => caughtUp(server.base), 30_000, 'asia-japan to catch up');
  for (const region of REPLICAS) assertReplicaMatches(region);
  const again = await server.client.patch('/organizations/attributes/end_user_read_write', { step: 'healed' }, allRegions(5));
  assert.equal(again.status, 204);
  assert.deepEqual(server.service.regions.replica('asia-japan')?.state(ROOT_ORG)?.attributes.get('end_user_read_write'), { step: 'healed' });
});

test('a suborganization and its writes reach every replica', async () => {
  const sub = await server.client.post('/organizations/suborganizations', { sub_org_name: 'branch' }, ALL_REGIONS);
  assert.equal(sub.status, 200);
  const child = server.client.as(sub.body.result.id, sub.body.result.api_key);
  assert.equal((await child.post('/persons', email('child@example.com'), ALL_REGIONS)).status, 201);
  for (const region of REPLICAS) {
    const state = server.service.regions.replica(region)?.state(sub.body.result.id);
    assert.equal(state?.org_name, 'branch');
    assert.equal(state?.persons.size, 1);
  }
});

test('a person may live in any configured region, which is reported back and replicated', async () => {
  const there = await server.client.post('/persons', { ...email('iowa@example.com'), region: 'us-iowa' }, ALL_REGIONS);
  assert.equal(there.status, 201);
  assert.equal(there.body.result.region, 'us-iowa');
  assert.equal((await server.client.get(`/persons/${there.body.result.person_id}`)).body.result.region, 'us-iowa');
  assert.equal(server.service.regions.replica('asia-japan')?.state(ROOT_ORG)?.persons.get(there.body.result.person_id)?.region, 'us-iowa');

  const here = await server.client.post('/persons', email('default-region@example.com'));
  assert.equal(here.body.result.region, 'europe-belgium', 'the local region by default');

  for (const region of ['europe-england', 'mars']) {
    const refused = await server.client.post('/persons', { ...email(`${region}@example.com`), region });
    assert.equal(refused.status, 400);
    assert.match(refused.body.errors[0].message, /^region: /);
  }
  const listed = await server.client.get('/persons?handle=email_address:europe-england@example.com');
  assert.equal(listed.body.meta.pagination.total_count, 0, 'a refused person is not created');
});

test('the operator endpoint checks its key, the region and the body', async () => {
  assert.equal((await setLink(server.base, 'us-iowa', { link: 'cut' }, 'wrong-key-0123456789')).status, 401);
  assert.equal((await setLink(server.base, 'us-iowa', { link: 'cut' }, '')).status, 401);
  const unknown = await setLink(server.base, 'australia-sydney', { link: 'cut' });
  assert.equal(unknown.status, 404);
  assert.match(unknown.body.errors[0].message, /australia-sydney/);
  assert.equal((await setLink(server.base, 'europe-belgium', { link: 'cut' })).status, 400, 'the local region has no link');
  for (const [body, field] of [
    [{ link: 'down' }, /^link: /],
    [{}, /^link: /],
    [{ link: 'up', latency_ms: -1 }, /^latency_ms: /],
    [{ link: 'up', jitter_ms: 1.5 }, /^jitter_ms: /],
    [{ link: 'up', extra: 1 }, /^extra: /],
  ] as const) {
    const r = await setLink(server.base, 'us-iowa', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(r.body.errors[0].message, field);
  }
  const ok = await setLink(server.base, 'us-iowa', { link: 'up', latency_ms: 5, jitter_ms: 2 });
  assert.deepEqual({ ...ok.body.result, state: undefined }, { name: 'us-iowa', state: undefined, lag_entries: 0, latency_ms: 5, jitter_ms: 2 });
  await setLink(server.base, 'us-iowa', { link: 'up', latency_ms: 0, jitter_ms: 0 });
  const doc = (await server.client.get('/openapi.json')).body;
  assert.ok(doc.paths['/ops/regions/{region}']?.put, 'the operator endpoint is in the OpenAPI document');

  const plain = await startTestServer(); // no operator key configured
  try {
    const res = await fetch(`${plain.base}/ops/regions/us-iowa`, { method: 'PUT', headers: { 'Content-Type': 'application/json', 'Service-Operator-Key': OPERATOR_KEY }, body: '{"link":"cut"}' });
    assert.equal(res.status, 404);
    assert.deepEqual((await regionHealth(plain.base)).map((r) => r.state), ['local']);
  } finally {
    await plain.stop();
    removeDir(plain.dataDir);
  }
});

test('replicas keep their position across a restart: the logs on disk match byte for byte, and a cut link catches up after it', async () => {
  await setLink(server.base, 'us-iowa', { link: 'cut' });
  for (let i = 0; i < 5; i++) assert.equal((await server.client.patch('/organizations/attributes/end_user_read_only', { [`r${i}`]: i })).status, 204);
  await server.stop();

  const lagging = await readLog(server.dataDir, replicaStoreName('us-iowa'));
  const local = await readLog(server.dataDir, 'local');
  assert.equal((local.get(ROOT_ORG)?.length ?? 0) - (lagging.get(ROOT_ORG)?.length ?? 0), 5);

  server = await startRegionServer({}, server.dataDir);
  await waitFor(() => caughtUp(server.base), 30_000, 'us-iowa to catch up after the restart');
  for (const region of REPLICAS) assert.deepEqual(server.service.regions.replica(region)?.state(ROOT_ORG)?.attributes.get('end_user_read_only'), { r0: 0, r1: 1, r2: 2, r3: 3, r4: 4 });
  assert.equal(server.service.regions.replica('us-iowa')?.stats.applied, 5, 'only the missing entries were applied');
  assert.equal(server.service.regions.replica('asia-japan')?.stats.applied, 0);
  await server.stop();

  const after = await readLog(server.dataDir, 'local');
  assert.deepEqual(after, local);
  for (const region of REPLICAS) assert.deepEqual(await readLog(server.dataDir, replicaStoreName(region)), local, `${region}'s log equals the local log`);
  server = await startRegionServer({}, server.dataDir);
});
