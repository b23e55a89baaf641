// Consistency waits through the real service, on a manual clock: a wait's timeout comes due exactly when the
// test moves the clock past it, so what is proven about timing holds however busy the machine is.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { email, removeDir, type TestServer } from '../support/server.js';
import { allRegions, caughtUp, EVENTUALLY_MS, setLink, startClockedRegionServer, waitFor, within, type ClockedRegionServer } from '../support/regions.js';

let clocked: ClockedRegionServer;
let server: TestServer;
before(async () => {
  clocked = await startClockedRegionServer();
  server = clocked.server;
  await waitFor(() => caughtUp(server.base), EVENTUALLY_MS, 'the links to stream');
});
after(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

/** A request, and whether it has been answered yet. */
function track<T>(p: Promise<T>) {
  const t = { answered: false, done: p.finally(() => (t.answered = true)) };
  return t;
}

/** Gives an answer that should not come a chance to arrive: real time passes and a request makes a round trip. */
async function quiet(): Promise<void> {
  await new Promise((r) => setTimeout(r, 100));
  await server.client.get('/health');
}

const waitsPending = (n: number, what: string) => waitFor(() => clocked.waiter.pending() === n, EVENTUALLY_MS, what);

test('200 all_regions writes waiting on a cut link all answer 408 at their timeout, the server keeps serving, and every write arrives after healing', async () => {
  const { clock } = clocked;
  await setLink(server.base, 'asia-japan', { link: 'cut' });
  const writes = Array.from({ length: 200 }, (_, i) => track(server.client.post('/persons', email(`wait-${i}@example.com`), allRegions(1))));
  await waitsPending(200, 'all 200 writes to wait');

  // No clock time passes: were these held up by the waiting writes, they could not be answered at all.
  const read = await within(server.client.get('/persons?limit=1'), 'a read while 200 writes wait');
  const local = await within(server.client.post('/persons', email('meanwhile@example.com')), 'a local_region write while 200 writes wait');
  assert.equal(read.status, 200);
  assert.equal(local.status, 201, 'a local_region write is not held up by the waiting ones');
  assert.equal(writes.filter((w) => w.answered).length, 0, 'answered while all 200 were still waiting');

  clock.advance(999);
  await quiet();
  assert.equal(writes.filter((w) => w.answered).length, 0, 'none answered before its 1 s timeout');
  assert.equal(clocked.waiter.pending(), 200);
  clock.advance(1);
  const done = await within(Promise.all(writes.map((w) => w.done)), 'the 408 answers');
  for (const d of done) {
    assert.equal(d.status, 408);
    assert.deepEqual(d.body.errors.map((e: { httpcode: number }) => e.httpcode), [408]);
  }
  assert.equal(clocked.waiter.pending(), 0);
  const metrics = (await server.client.get('/metrics')).text;
  assert.match(metrics, /^consistency_wait_seconds_sum\{level="all_regions",outcome="timeout"\} 200$/m, 'each waited exactly its second of clock time');
  const listed = await server.client.get('/persons?limit=1');
  assert.equal(listed.body.meta.pagination.total_count, 201, 'every 408 write is committed and readable at once');

  await setLink(server.base, 'asia-japan', { link: 'up' });
  await waitFor(() => caughtUp(server.base), EVENTUALLY_MS, 'asia-japan to catch up');
  for (const region of ['us-iowa', 'asia-japan']) {
    const persons = server.service.regions.replica(region)?.state('root-org')?.persons;
    const handles = new Set([...(persons?.values() ?? [])].map((p) => p.handles[0]?.value));
    for (let i = 0; i < 200; i++) assert.ok(handles.has(`wait-${i}@example.com`), `${region} holds write ${i}`);
  }
});

test('a write waiting for all_regions completes as soon as the cut link heals within its timeout', async () => {
  const { clock } = clocked;
  await setLink(server.base, 'us-iowa', { link: 'cut' });
  const started = clock.monoMs();
  const pending = track(server.client.put('/organizations/attributes/end_user_read_only', { heal: true }, allRegions(10)));
  await waitsPending(1, 'the write to wait');
  clock.advance(5000);
  await quiet();
  assert.equal(pending.answered, false, 'still waiting 5 s into its 10 s while us-iowa is cut');
  await setLink(server.base, 'us-iowa', { link: 'up' });
  const value = await within(pending.done, 'the write to complete after healing');
  assert.equal(value.status, 204);
  assert.equal(clock.monoMs() - started, 5000, 'answered by the heal, with half its timeout left');
  assert.deepEqual(server.service.regions.replica('us-iowa')?.state('root-org')?.attributes.get('end_user_read_only'), { heal: true });
});

test('a command that changes nothing waits for the last entry before it', async () => {
  const { clock } = clocked;
  await waitFor(() => caughtUp(server.base), EVENTUALLY_MS, 'the links to stream');
  const body = email('noop@example.com');
  assert.equal((await server.client.put('/persons', body, allRegions(5))).status, 201);
  const same = await server.client.put('/persons', body, allRegions(5));
  assert.equal(same.status, 200, 'every region already holds everything it depends on');

  await setLink(server.base, 'us-iowa', { link: 'cut' });
  assert.equal((await server.client.patch('/organizations/attributes/end_user_no_access', { x: 1 })).status, 204);
  const behind = track(server.client.put('/persons', body, allRegions(1)));
  await waitsPending(1, 'the no-op to wait');
  clock.advance(1000);
  assert.equal((await within(behind.done, 'the no-op to time out')).status, 408, 'the no-op depends on an entry us-iowa has not acknowledged');
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
  await waitFor(() => caughtUp(server.base), EVENTUALLY_MS, 'the links to catch up');
  const metrics = (await server.client.get('/metrics')).text;
  assert.match(metrics, /^consistency_wait_seconds_count\{level="all_regions",outcome="timeout"\} 201$/m);
  assert.match(metrics, /^consistency_wait_seconds_count\{level="all_regions",outcome="reached"\} \d+$/m);
  assert.match(metrics, /^consistency_wait_seconds_count\{level="local_region",outcome="reached"\} \d+$/m);
});
