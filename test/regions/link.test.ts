// Replication links through the real service, on a manual clock: a stall is a matter of clock time, so the
// test sees the link lag and recover at the clock times that make it, however busy the machine is.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ManualClock } from '../../src/lib/manual-clock.js';
import { removeDir, type TestServer } from '../support/server.js';
import { caughtUp, EVENTUALLY_MS, regionHealth, setLink, startClockedRegionServer, waitFor } from '../support/regions.js';

let server: TestServer;
let clock: ManualClock;
before(async () => {
  ({ server, clock } = await startClockedRegionServer());
});
after(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

const stateOf = async (region: string) => (await regionHealth(server.base)).find((r) => r.name === region);
const write = (n: number) => server.client.patch('/organizations/attributes/end_user_read_write', { [`k${n}`]: n });

/** Moves the clock in steps of a link tick until `check` holds; fails past `limitMs` of clock time. Returns when it held. */
async function stepUntil(check: () => Promise<boolean>, limitMs: number, what: string): Promise<number> {
  const limit = clock.monoMs() + limitMs;
  while (!(await check())) {
    if (clock.monoMs() >= limit) throw new Error(`still waiting for ${what} after ${limitMs} ms of clock time`);
    clock.advance(100);
  }
  return clock.monoMs();
}

test('a link catches up at start, then streams', async () => {
  await waitFor(() => caughtUp(server.base), EVENTUALLY_MS, 'both links to stream');
  const regions = await regionHealth(server.base);
  assert.deepEqual(
    regions.map((r) => [r.name, r.state]),
    [
      ['europe-belgium', 'local'],
      ['us-iowa', 'streaming'],
      ['asia-japan', 'streaming'],
    ],
  );
});

test('a cut link counts its lag, and catches up from the acknowledged offset when it is up again', async () => {
  const cut = await setLink(server.base, 'us-iowa', { link: 'cut' });
  assert.equal(cut.status, 200);
  assert.deepEqual(cut.body.result, { name: 'us-iowa', state: 'cut', lag_entries: 0, latency_ms: 0, jitter_ms: 0 });
  for (let i = 0; i < 3; i++) assert.equal((await write(i)).status, 204);
  assert.deepEqual(await stateOf('us-iowa'), { name: 'us-iowa', state: 'cut', lag_entries: 3 });
  await waitFor(async () => (await stateOf('asia-japan'))?.lag_entries === 0, EVENTUALLY_MS, 'the other link to keep streaming');

  const up = await setLink(server.base, 'us-iowa', { link: 'up' });
  assert.equal(up.body.result.state, 'catching_up');
  await waitFor(() => caughtUp(server.base), EVENTUALLY_MS, 'us-iowa to catch up');
  const local = server.service.registry.get('root-org')?.state;
  const replica = server.service.regions.replica('us-iowa')?.state('root-org');
  assert.equal(replica?.offset, local?.offset);
  assert.deepEqual(replica?.attributes.get('end_user_read_write'), { k0: 0, k1: 1, k2: 2 });
});

test('a link lags when acknowledgements take longer than its delay explains, and streams again once they arrive', async () => {
  await setLink(server.base, 'asia-japan', { link: 'up', latency_ms: 2500 });
  assert.equal((await write(10)).status, 204);
  // The batch is on its way with 2.5 s to go, far longer than any round trip the link has measured (it
  // knows nothing of the configured delay): that is a stall. Its acknowledgement comes back at once.
  const view = await setLink(server.base, 'asia-japan', { link: 'up', latency_ms: 0 });
  assert.equal(view.body.result.lag_entries, 1);
  const sent = clock.monoMs();
  // Before the batch can have arrived: the stall is seen while it is still on its way.
  const lagged = await stepUntil(async () => (await stateOf('asia-japan'))?.state === 'lagging', 2400, 'asia-japan to lag');
  assert.ok(lagged - sent > 500, `lagging ${lagged - sent} ms after sending, within the stall margin`);
  // Past the batch's arrival (the link resends it sooner, as its acknowledgement is overdue): once the
  // replica has stored it, the acknowledgement ends the stall, with no more clock time needed.
  clock.advance(sent + 2500 - clock.monoMs());
  await waitFor(async () => (await stateOf('asia-japan'))?.state === 'streaming', EVENTUALLY_MS, 'asia-japan to stream again');
  assert.equal((await stateOf('asia-japan'))?.lag_entries, 0);
});

test('the link state and lag are exported as metrics', async () => {
  await setLink(server.base, 'us-iowa', { link: 'cut' });
  await write(20);
  await waitFor(async () => (await stateOf('asia-japan'))?.lag_entries === 0, EVENTUALLY_MS, 'asia-japan to acknowledge');
  const text = (await server.client.get('/metrics')).text;
  assert.match(text, /^replication_lag_entries\{region="us-iowa"\} 1$/m);
  assert.match(text, /^replication_lag_entries\{region="asia-japan"\} 0$/m);
  assert.match(text, /^replication_link_state\{region="us-iowa",state="cut"\} 1$/m);
  await setLink(server.base, 'us-iowa', { link: 'up' });
  await waitFor(() => caughtUp(server.base), EVENTUALLY_MS, 'us-iowa to catch up');
});
