// Retention seen from WS /events: the periodic job prunes the log, and a subscriber asking for an offset older
// than the oldest retained gets the retained events from there on, told by the upgrade headers and the first offset.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ROOT_ORG, startTestServer, type TestServer } from '../support/server.js';
import { Subscriber, range, unchained } from '../support/ws.js';

let server: TestServer;

before(async () => {
  server = await startTestServer({ SERVICE_EVENT_RETENTION: '5', SERVICE_EVENT_PRUNE_INTERVAL_MS: '20' });
});
after(() => server.stop());

test('the pruning job keeps the newest events; a from older than the oldest retained starts at the oldest', async () => {
  const res = await server.client.post('/test-events', [{ event_name: 'PersonCreated_v1', count: 12 }]);
  assert.equal(res.status, 201);
  const log = server.service.events.log;
  const deadline = Date.now() + 30_000;
  while (log.oldest(ROOT_ORG) !== 8) {
    assert.ok(Date.now() < deadline, `the pruning job did not run within 30 s (oldest ${log.oldest(ROOT_ORG)})`);
    await new Promise((r) => setTimeout(r, 10));
  }

  const sub = await Subscriber.open(server.base, { query: { from: '1' } });
  try {
    assert.equal(sub.upgradeHeaders['service-events-oldest-offset'], '8');
    assert.equal(sub.upgradeHeaders['service-events-head-offset'], '12');
    await sub.waitForCount(5);
    assert.deepEqual(sub.offsets(), range(8, 12));
    assert.deepEqual(unchained(sub.frames), res.body.result.slice(7));
    // Then live, as usual.
    const more = await server.client.post('/test-events', [{ event_name: 'PersonCreated_v1' }]);
    await sub.waitForCount(6);
    assert.deepEqual(unchained(sub.frames).at(-1), more.body.result[0]);
  } finally {
    await sub.close();
  }
});
