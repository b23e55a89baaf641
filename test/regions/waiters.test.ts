import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { email, removeDir, type TestServer } from '../support/server.js';
import { allRegions, caughtUp, setLink, startRegionServer, waitFor } from '../support/regions.js';

let server: TestServer;
before(async () => {
  server = await startRegionServer();
  await waitFor(() => caughtUp(server.base), 5000, 'the links to stream');
});
after(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

const timed = async <T>(p: () => Promise<T>) => {
  const started = performance.now();
  const value = await p();
  return { value, ms: performance.now() - started, at: performance.now() };
};

test('200 all_regions writes waiting on a cut link all answer 408 on time, the server keeps serving, and every write arrives after healing', async () => {
  await setLink(server.base, 'asia-japan', { link: 'cut' });
  const writes = Array.from({ length: 200 }, (_, i) => timed(() => server.client.post('/persons', email(`wait-${i}@example.com`), allRegions(1))));

  await new Promise((r) => setTimeout(r, 250));
  const read = await timed(() => server.client.get('/persons?limit=1'));
  const local = await timed(() => server.client.post('/persons', email('meanwhile@example.com')));
  const done = await Promise.all(writes);

  assert.equal(read.value.status, 200);
  assert.equal(local.value.status, 201, 'a local_region write is not held up by the waiting ones');
  const firstTimeout = Math.min(...done.map((d) => d.at));
  assert.ok(read.at < firstTimeout && local.at < firstTimeout, 'answered while all 200 were still waiting');
  assert.ok(read.ms < 500, `a read took ${Math.round(read.ms)} ms while 200 writes waited`);
  for (const d of done) {
    assert.equal(d.value.status, 408);
    assert.deepEqual(d.value.body.errors.map((e: { httpcode: number }) => e.httpcode), [408]);
    assert.ok(d.ms >= 990 && d.ms < 3000, `answered after ${Math.round(d.ms)} ms for a 1 s timeout`);
  }
  const listed = await server.client.get('/persons?limit=1');
  assert.equal(listed.body.meta.pagination.total_count, 201, 'every 408 write is committed and readable at once');

  await setLink(server.base, 'asia-japan', { link: 'up' });
  await waitFor(() => caughtUp(server.base), 10_000, 'asia-japan to catch up');
  for (const region of ['us-iowa', 'asia-japan']) {
    const persons = server.service.regions.replica(region)?.state('root-org')?.persons;
    const handles = new Set([...(persons?.values() ?? [])].map((p) => p.handles[0]?.value));
    for (let i = 0; i < 200; i++) assert.ok(handles.has(`wait-${i}@example.com`), `${region} holds write ${i}`);
  }
});

test('a write waiting for all_regions completes as soon as the cut link heals within its timeout', async () => {
  await setLink(server.base, 'us-iowa', { link: 'cut' });
  let answered = false;
  const pending = timed(() => server.client.put('/organizations/attributes/end_user_read_only', { heal: true }, allRegions(10))).finally(() => (answered = true));
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(answered, false, 'still waiting while us-iowa is cut');
  await setLink(server.base, 'us-iowa', { link: 'up' });
  const { value, ms } = await pending;
  assert.equal(value.status, 204);
  assert.ok(ms >= 300 && ms < 5000, `answered after ${Math.round(ms)} ms`);
  assert.deepEqual(server.service.regions.replica('us-iowa')?.state('root-org')?.attributes.get('end_user_read_only'), { heal: true });
});

test('a command that changes nothing waits for the last entry before it', async () => {
  await waitFor(() => caughtUp(server.base), 5000, 'the links to stream');
  const body = email('noop@example.com');
  assert.equal((await server.client.put('/persons', body, allRegions(5))).status, 201);
  const same = await timed(() => server.client.put('/persons', body, allRegions(5)));
  assert.equal(same.value.status, 200, 'every region already holds everything it depends on');

  await setLink(server.base, 'us-iowa', { link: 'cut' });
  assert.equal((await server.client.patch('/organizations/attributes/end_user_no_access', { x: 1 })).status, 204);
  const behind = await server.client.put('/persons', body, allRegions(1));
  assert.equal(behind.status, 408, 'the no-op depends on an entry us-iowa has not acknowledged');
  await setLink(server.base, 'us-iowa', { link: 'up' });
  assert.equal((await server.client.put('/persons', body, allRegions(5))).status, 200);
});

test('local_region writes answer after the local commit even with every link cut', async () => {
  await setLink(server.base, 'us-iowa', { link: 'cut' });
  await setLink(server.base, 'asia-japan', { link: 'cut' });
  const r = await server.client.patch('/organizations/attributes/end_user_read_write', { local: true }, { 'Service-Required-Consistency': 'local_region' });
  assert.equal(r.status, 204);
  await setLink(server.base, 'us-iowa', { link: 'up' });
  await setLink(server.base, 'asia-japan', { link: 'up' });
  await waitFor(() => caughtUp(server.base), 5000, 'the links to catch up');
  const metrics = (await server.client.get('/metrics')).text;
  assert.match(metrics, /^consistency_wait_seconds_count\{level="all_regions",outcome="timeout"\} 201$/m);
  assert.match(metrics, /^consistency_wait_seconds_count\{level="all_regions",outcome="reached"\} \d+$/m);
  assert.match(metrics, /^consistency_wait_seconds_count\{level="local_region",outcome="reached"\} \d+$/m);
});
