// POST /test-events: random, well-typed events marked as test events, with duplicates sharing an event_id,
// appended to the caller's event log and streamed like any other.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventByMessageName, eventSource } from '../../src/events/catalog.js';
import { validateEvent } from '../../src/events/validate.js';
import { ROOT_ORG, startTestServer, type TestServer } from '../support/server.js';
import { Subscriber, range, unchained } from '../support/ws.js';

const CORRELATION = '0195f3a2-7c1e-7000-8000-00000000c0de';
let server: TestServer;

before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

test('generates count events per item, each followed by its duplicates, and streams exactly what it answered', async () => {
  const sub = await Subscriber.open(server.base);
  try {
    const res = await server.client.post('/test-events', [
      { event_name: 'PersonCreated_v1', count: 3, duplicates: 2, analytics_correlation_id: CORRELATION },
      { event_name: 'GdprConsentsChanged_v1', analytics_correlation_id: CORRELATION },
      { event_name: 'AuthenticationSucceeded_v1', count: 2 },
    ]);
    assert.equal(res.status, 201, res.text);
    const result = res.body.result as Array<{ offset: number; event: any }>;
    assert.equal(result.length, 3 * 3 + 1 + 2);
    assert.deepEqual(result.map((r) => r.offset), range(1, 12));

    for (const { event } of result) {
      const name = event.event_metadata.event_name as string;
      assert.equal(validateEvent(name, event), null, name);
      const def = eventByMessageName(name);
      assert.ok(def);
      assert.equal(event.event_metadata.is_test_event, true);
      assert.equal(event.event_metadata.organization_id, ROOT_ORG);
      assert.equal(event.event_metadata.root_organization_id, ROOT_ORG);
      assert.equal(event.event_metadata.source, eventSource(def));
      assert.match(event.event_metadata.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    }

    // Each generated PersonCreated comes three times: the same event (id and content), at three offsets.
    const persons = result.slice(0, 9).map((r) => r.event);
    for (let i = 0; i < 9; i += 3) {
      assert.deepEqual(persons[i + 1], persons[i]);
      assert.deepEqual(persons[i + 2], persons[i]);
    }
    assert.equal(new Set(persons.map((e) => e.event_metadata.event_id)).size, 3);
    assert.equal(new Set(persons.map((e) => e.person_id)).size, 3, 'random content differs between generated events');
    assert.ok(persons.every((e) => e.analytics_metadata.analytics_correlation_id === CORRELATION));
    // GdprConsentsChanged has no analytics_metadata: the correlation ID has nowhere to go.
    assert.equal(result[9]?.event.analytics_metadata, undefined);
    assert.notEqual(result[10]?.event.analytics_metadata?.analytics_correlation_id, CORRELATION);

    await sub.waitForCount(12);
    assert.deepEqual(unchained(sub.frames), result);
  } finally {
    await sub.close();
  }
});

test('an unknown event name, or counts out of range, are 400s naming the problem, and nothing is appended', async () => {
  const before = server.service.events.log.head(ROOT_ORG);
  const cases: Array<[unknown, RegExp]> = [
    [[{ event_name: 'PersonCreated_v1' }, { event_name: 'PersonExploded_v1' }], /body\[1\]\.event_name: unknown event "PersonExploded_v1"/],
    [[{ event_name: 'PersonCreated_v1', count: 101 }], /count/],
    [[{ event_name: 'PersonCreated_v1', count: 0 }], /count/],
    [[{ event_name: 'PersonCreated_v1', duplicates: 11 }], /duplicates/],
    [[{ event_name: 'PersonCreated_v1', analytics_correlation_id: 'not-a-uuid' }], /analytics_correlation_id/],
    [[{ event_name: 'PersonCreated_v1', colour: 'blue' }], /colour: unknown field/],
    [[], /body/],
    [{ event_name: 'PersonCreated_v1' }, /body/],
    [Array.from({ length: 10 }, () => ({ event_name: 'PersonCreated_v1', count: 100, duplicates: 10 })), /asks for 11000 events.*at most 10000/],
  ];
  for (const [body, message] of cases) {
    const res = await server.client.post('/test-events', body);
    assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
    assert.match(res.body.errors[0].message, message);
  }
  assert.equal(server.service.events.log.head(ROOT_ORG), before);
});

test('test events are durable: after a restart the log holds them and offsets continue', async () => {
  const last = server.service.events.log.head(ROOT_ORG);
  const before = server.service.events.log.read(ROOT_ORG, 1, 10_000);
  assert.equal(before.length, last);
  await server.stop();
  server = await startTestServer({}, {}, server.dataDir);
  assert.equal(server.service.events.log.head(ROOT_ORG), last);
  assert.deepEqual(server.service.events.log.read(ROOT_ORG, 1, 10_000), before);
  const res = await server.client.post('/test-events', [{ event_name: 'TokenMinted_v1' }]);
  assert.equal(res.body.result[0].offset, last + 1);
});
