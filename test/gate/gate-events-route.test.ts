// POST /gate/events: only the three Gate events, as Gate built them (event_id, timestamp, source kept,
// organization overwritten), deduplicated by event_id, then streamed like any other event.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { heartbeat, requestHandled, serverStarted } from '../../src/gate/events.js';
import { validateEvent } from '../../src/events/validate.js';
import { ROOT_ORG, startTestServer, type TestServer } from '../support/server.js';
import { Subscriber } from '../support/ws.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

const origin = { orgId: 'someone-else' };
const build = { version: '0.1.0', variant: 'community' };

test('accepts the three events, keeps their ids and times, overwrites the organization, and streams them', async () => {
  const sub = await Subscriber.open(server.base);
  try {
    const instance = randomUUID();
    const events = [
      serverStarted(origin, instance, build, false, Date.now()),
      heartbeat(origin, instance, 1, Date.now()),
      requestHandled(origin, {
        correlationId: randomUUID(), ip: '127.0.0.1', start: Date.now() - 3, end: Date.now(), method: 'GET', url: 'http://h/x?y=1', status: 200, requestLength: 0, responseLength: 12,
        plugins: [{ index: 0, id: 'jwt', type: 'validate-jwt', start: Date.now() - 2, end: Date.now() - 1, metadata: { decision: 'allow' }, trips: [{ start: Date.now() - 2, end: Date.now() - 1, method: 'GET', url: 'http://s/jwks', status: 200, requestLength: 0, responseLength: 100 }] }],
      }),
    ];
    for (const e of events) assert.equal(validateEvent(e.event_metadata.event_name, e), null);
    const res = await server.client.post('/gate/events', events);
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(res.body.result, { accepted: 3, duplicates: 0 });
    await sub.waitForCount(3);
    const got = sub.frames.map((f) => f.event);
    assert.deepEqual(got.map((e) => e.event_metadata.event_id), events.map((e) => e.event_metadata.event_id));
    for (const [i, e] of got.entries()) {
      const sent = events[i]!.event_metadata as Record<string, unknown>;
      assert.equal(e.event_metadata.source, 'Gate');
      assert.equal(e.event_metadata.is_test_event, false);
      assert.equal(e.event_metadata.organization_id, ROOT_ORG);
      assert.equal(e.event_metadata.root_organization_id, ROOT_ORG);
      assert.equal(e.event_metadata.timestamp, sent['timestamp']);
    }
    assert.equal(got[1].sequence, '1');
    assert.equal(got[2].plugins[0].round_trips[0].http_request_metadata.response_length, '100');
  } finally {
    await sub.close();
  }
});

test('a resent batch is not appended twice; repeats inside a batch count as duplicates', async () => {
  {
    const a = heartbeat(origin, randomUUID(), 1, Date.now());
    const b = heartbeat(origin, randomUUID(), 2, Date.now());
    const first = await server.client.post('/gate/events', [a, a]);
    assert.deepEqual(first.body.result, { accepted: 1, duplicates: 1 });
    const again = await server.client.post('/gate/events', [a, b]);
    assert.deepEqual(again.body.result, { accepted: 1, duplicates: 1 });
    const log = await server.client.post('/gate/events', [b]);
    assert.deepEqual(log.body.result, { accepted: 0, duplicates: 1 });
  }
});

test('refusals: other events, another source, test events, malformed fields, no key; nothing appended', async () => {
  const ok = heartbeat(origin, randomUUID(), 1, Date.now());
  const bad = async (events: unknown, pattern: RegExp) => {
    const res = await server.client.post('/gate/events', events);
    assert.equal(res.status, 400, res.text);
    assert.match(res.body.errors[0].message, pattern);
  };
  const meta = (patch: Record<string, unknown>) => ({ ...ok, event_metadata: { ...ok.event_metadata, ...patch } });
  await bad([ok, meta({ event_name: 'PersonCreated_v1' })], /body\[1\]\.event_metadata\.event_name: "PersonCreated_v1" is not a Gate event/);
  await bad([meta({ source: 'Cloud' })], /source: must be Gate/);
  await bad([meta({ is_test_event: true })], /is_test_event/);
  await bad([meta({ event_id: 'nope' })], /event_id: must be a UUID/);
  await bad([meta({ timestamp: 'yesterday' })], /timestamp/);
  await bad([{ ...ok, sequence: 'many' }], /sequence/);
  await bad([], /./);
  // None of the refused batches claimed the good event's id.
  const res = await server.client.post('/gate/events', [ok]);
  assert.deepEqual(res.body.result, { accepted: 1, duplicates: 0 });
  const anon = await server.client.as(ROOT_ORG, 'wrong-key').post('/gate/events', [heartbeat(origin, randomUUID(), 1, Date.now())]);
  assert.equal(anon.status, 401);
});
