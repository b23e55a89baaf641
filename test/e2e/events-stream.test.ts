// WS /events with real `ws` clients: order, replay equal to live, the replay/live seam under concurrent writes,
// filters, protobuf frames read with protobufjs from the shipped .proto, organization isolation, refused upgrades.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import protobuf from 'protobufjs';
import { ROOT_KEY, ROOT_ORG, email, startTestServer, type Client, type TestServer } from '../support/server.js';
import { Subscriber, range, refusal, unchained } from '../support/ws.js';

let server: TestServer;
let c: Client;
const open: Subscriber[] = [];

async function subscribe(options: Parameters<typeof Subscriber.open>[1] = {}): Promise<Subscriber> {
  const sub = await Subscriber.open(server.base, options);
  open.push(sub);
  return sub;
}

/** The organization's last event offset, read as a live subscriber would: the offset of a marker event. */
async function marker(client: Client = c): Promise<number> {
  const res = await client.post('/test-events', [{ event_name: 'ServiceSDKLoaded_v1' }]);
  assert.equal(res.status, 201, res.text);
  return res.body.result[0].offset as number;
}

before(async () => {
  server = await startTestServer();
  c = server.client;
});
after(async () => {
  await Promise.all(open.map((s) => s.close()));
  await server.stop();
});

describe('delivery', () => {
  test('live frames arrive in offset order, and a replay from an offset equals exactly what the live subscriber saw from it', async () => {
    const start = (await marker()) + 1;
    const live = await subscribe();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await c.post('/persons', email(`order-${i}@example.com`))).body.result.person_id);
    // Concurrent writes too: they share commits, and still get distinct consecutive offsets.
    await Promise.all(range(10, 29).map((i) => c.post('/persons', email(`order-${i}@example.com`))));
    const last = await marker();
    await live.waitUntil(() => live.frames.at(-1)?.offset === last, 30_000, `offset ${last}`);

    assert.deepEqual(live.offsets(), range(start, last));
    assert.deepEqual(live.frames.slice(0, 10).map((f) => f.event.person_id), ids);

    const replay = await subscribe({ query: { from: String(start) } });
    await replay.waitForCount(live.frames.length);
    assert.deepEqual(replay.frames, live.frames);

    const middle = start + 12;
    const partial = await subscribe({ query: { from: String(middle) } });
    await partial.waitForCount(last - middle + 1);
    assert.deepEqual(partial.frames, live.frames.slice(12));
    assert.equal(partial.upgradeHeaders['service-events-oldest-offset'], '1');
    assert.equal(partial.upgradeHeaders['service-events-head-offset'], String(last));

    // Both stay live after the replay.
    const next = await marker();
    await Promise.all([replay, partial, live].map((s) => s.waitUntil(() => s.frames.at(-1)?.offset === next)));
    for (const s of [replay, partial, live]) assert.equal(s.frames.filter((f) => f.offset === next).length, 1);
  });

  test('subscribing from offset 1 while writes are in flight: every subscriber gets exactly 1..N, no gap, no duplicate', async () => {
    const subs: Promise<Subscriber>[] = [];
    const writes: Promise<unknown>[] = [];
    // 300 persons in 30 waves; a new from=1 subscriber joins after each of the first 10 waves, mid-flight.
    for (let wave = 0; wave < 30; wave++) {
      for (let i = 0; i < 10; i++) writes.push(c.post('/persons', email(`seam-${wave}-${i}@example.com`)));
      if (wave < 10) {
        subs.push(subscribe({ query: { from: '1' } }));
        await new Promise((r) => setImmediate(r));
      }
    }
    const statuses = (await Promise.all(writes)) as Array<{ status: number }>;
    assert.ok(statuses.every((r) => r.status === 201));
    const last = await marker();
    for (const sub of await Promise.all(subs)) {
      await sub.waitUntil(() => sub.frames.at(-1)?.offset === last, 30_000, `offset ${last}`);
      assert.deepEqual(sub.offsets(), range(1, last));
    }
  });

  test('commits in quick succession, held and joined on a busy topic, reach every live subscriber whole and in order', async () => {
    const start = (await marker()) + 1;
    const subs = await Promise.all(range(1, 5).map(() => subscribe()));
    const created = await subscribe({ query: { types: 'PersonCreated_v1' } });
    // 20 writers, each with its own request after the last: many small commits, back to back.
    const ids = await Promise.all(
      range(1, 20).map(async (w) => {
        const mine: string[] = [];
        for (let i = 0; i < 15; i++) mine.push((await c.post('/persons', email(`quick-${w}-${i}@example.com`))).body.result.person_id as string);
        return mine;
      }),
    );
    const last = await marker();
    for (const sub of subs) {
      await sub.waitUntil(() => sub.frames.at(-1)?.offset === last, 30_000, `offset ${last}`);
      assert.deepEqual(sub.offsets(), range(start, last));
    }
    await created.waitForCount(300);
    assert.deepEqual(new Set(created.frames.map((f) => f.event.person_id)), new Set(ids.flat()));
    const offsets = created.offsets();
    assert.ok(offsets.every((o, i) => i === 0 || o > (offsets[i - 1] as number)), 'in offset order');
  });

  test('?types= sends only the named events, still in order', async () => {
    const sub = await subscribe({ query: { types: 'PersonDeleted_v1,GdprConsentsChanged_v1' } });
    const id = (await c.post('/persons', email('filtered@example.com'))).body.result.person_id as string;
    await c.put(`/persons/${id}/consent/gdpr`, { consent_levels: ['analytics'] });
    await c.delete(`/persons/${id}`);
    await marker();
    await sub.waitForCount(2);
    assert.deepEqual(sub.frames.map((f) => f.event.event_metadata.event_name), ['GdprConsentsChanged_v1', 'PersonDeleted_v1']);
    assert.ok((sub.frames[0] as { offset: number }).offset < (sub.frames[1] as { offset: number }).offset);
    // The marker after them was not sent: wait for a later matching event and check nothing came in between.
    const other = (await c.post('/persons', email('filtered-2@example.com'))).body.result.person_id as string;
    await c.delete(`/persons/${other}`);
    await sub.waitForCount(3);
    assert.deepEqual(sub.frames.map((f) => f.event.event_metadata.event_name), ['GdprConsentsChanged_v1', 'PersonDeleted_v1', 'PersonDeleted_v1']);
  });

  test('a from beyond the head waits for that offset', async () => {
    const head = await marker();
    const sub = await subscribe({ query: { from: String(head + 3) } });
    const res = await c.post('/test-events', [{ event_name: 'PersonCreated_v1', count: 4 }]);
    await sub.waitForCount(2);
    assert.deepEqual(unchained(sub.frames), res.body.result.slice(2));
  });

  test('protobuf frames decode with protobufjs and the shipped events.proto, and carry what the JSON frames carry', async () => {
    const protoPath = fileURLToPath(new URL('../../src/events/events.proto', import.meta.url));
    const root = new protobuf.Root().loadSync(protoPath, { keepCase: true });
    const StreamFrame = root.lookupType('events.StreamFrame');
    const from = (await marker()) + 1;
    await c.post('/persons', { handles: [{ type: 'email_address', value: 'proto@example.com' }, { type: 'phone_number', value: '+15555550100' }] });
    await c.post('/test-events', [{ event_name: 'GateRequestHandled_v1' }, { event_name: 'TokenMinted_v1' }]);
    const last = await marker();
    const [json, binary] = await Promise.all([subscribe({ query: { from: String(from) } }), subscribe({ query: { from: String(from), format: 'protobuf' } })]);
    await Promise.all([json.waitForCount(last - from + 1), binary.waitForCount(last - from + 1)]);
    assert.equal(binary.frames.length, 0, 'no text frames on a protobuf stream');

    binary.binary.forEach((bytes, i) => {
      const expected = json.frames[i] as { offset: number; event: any };
      const frame = StreamFrame.toObject(StreamFrame.decode(bytes), { longs: Number }) as { offset: number; event_name: string; event: Uint8Array };
      assert.equal(frame.offset, expected.offset);
      assert.equal(frame.event_name, expected.event.event_metadata.event_name);
      const Message = root.lookupType(`events.${frame.event_name}`);
      const event = Message.toObject(Message.decode(frame.event), { longs: String, enums: String, defaults: false }) as any;
      // proto3 leaves a false bool off the wire, so protobufjs leaves it out of the object.
      assert.deepEqual({ is_test_event: false, ...event.event_metadata }, expected.event.event_metadata);
      if (frame.event_name === 'PersonCreated_v1') {
        assert.equal(event.person_id, expected.event.person_id);
        assert.deepEqual(event.handles, [{ type: 'EmailAddress', value: 'proto@example.com' }, { type: 'PhoneNumber', value: '+15555550100' }]);
      }
      if (frame.event_name === 'TokenMinted_v1') assert.equal(event.token_id, expected.event.token_id);
    });
    assert.deepEqual(
      binary.binary.map((b) => (StreamFrame.decode(b) as unknown as { event_name: string }).event_name),
      ['PersonCreated_v1', 'GateRequestHandled_v1', 'TokenMinted_v1', 'ServiceSDKLoaded_v1'],
    );
  });
});

describe('organizations', () => {
  test('a subscriber sees only its own organization, and cannot subscribe to another with its key', async () => {
    const created = await c.post('/organizations/suborganizations', { sub_org_name: 'stream-child' });
    assert.equal(created.status, 200);
    const { id, api_key } = created.body.result as { id: string; api_key: string };
    const child = c.as(id, api_key);
    const [rootLive, childLive, childReplay] = await Promise.all([
      subscribe(),
      subscribe({ org: id, key: api_key }),
      subscribe({ org: id, key: api_key, query: { from: '1' }, credentialsInQuery: true }),
    ]);
    await Promise.all([c.post('/persons', email('root-side@example.com')), child.post('/persons', email('child-side@example.com'))]);
    await child.post('/test-events', [{ event_name: 'PersonCreated_v1', count: 3 }]);
    const rootLast = await marker();
    const childLast = await marker(child);
    await rootLive.waitUntil(() => rootLive.frames.at(-1)?.offset === rootLast);
    await Promise.all([childLive, childReplay].map((s) => s.waitUntil(() => s.frames.at(-1)?.offset === childLast)));

    assert.ok(rootLive.frames.every((f) => f.event.event_metadata.organization_id === ROOT_ORG));
    for (const s of [childLive, childReplay]) {
      assert.ok(s.frames.every((f) => f.event.event_metadata.organization_id === id && f.event.event_metadata.root_organization_id === ROOT_ORG));
      assert.ok(!s.frames.some((f) => JSON.stringify(f).includes('root-side@example.com')));
    }
    // The child's offsets are its own, from 1.
    assert.deepEqual(childReplay.offsets(), range(1, childLast));
    assert.equal(childLast, 5);

    assert.equal((await refusal(server.base, { org: ROOT_ORG, key: api_key })).status, 403);
    assert.equal((await refusal(server.base, { org: id, key: ROOT_KEY })).status, 403);
  });
});

describe('metrics', () => {
  test('/metrics counts the open subscribers', async () => {
    const gauge = async () => Number(/^events_ws_subscribers (\d+)$/m.exec((await c.get('/metrics')).text)?.[1]);
    const before = await gauge();
    const subs = await Promise.all([Subscriber.open(server.base), Subscriber.open(server.base), Subscriber.open(server.base, { query: { from: '1' } })]);
    assert.equal(await gauge(), before + 3);
    await Promise.all(subs.map((s) => s.close()));
    const deadline = Date.now() + 30_000;
    while ((await gauge()) !== before) {
      assert.ok(Date.now() < deadline, 'closed subscribers are still counted after 30 s');
      await new Promise((r) => setTimeout(r, 10));
    }
  });
});

describe('refused upgrades', () => {
  const cases: Array<[string, Parameters<typeof refusal>[1], number, RegExp]> = [
    ['no organization', { org: '' }, 400, /Service-OrgID/],
    ['a malformed organization ID', { org: 'not an id!' }, 400, /Service-OrgID/],
    ['an unknown organization', { org: 'no-such-org' }, 404, /not found/],
    ['no API key', { key: '' }, 401, /Service-API-Key/],
    ['a wrong API key', { key: 'wrong-key-0123456789' }, 401, /not valid/],
    ['a wrong API key in the query', { key: 'wrong-key-0123456789', credentialsInQuery: true }, 401, /not valid/],
    ['an unknown event type', { query: { types: 'PersonCreated_v1,NoSuchEvent_v1' } }, 400, /types: unknown event "NoSuchEvent_v1"/],
    ['an empty types list', { query: { types: ',' } }, 400, /types/],
    ['from 0', { query: { from: '0' } }, 400, /from/],
    ['a non-numeric from', { query: { from: 'abc' } }, 400, /from/],
    ['an unknown format', { query: { format: 'xml' } }, 400, /format: must be json or protobuf/],
    ['an unknown query parameter', { query: { since: '1' } }, 400, /since: unknown query parameter/],
  ];
  for (const [what, options, status, message] of cases) {
    test(`${what} → ${status} with the error envelope`, async () => {
      const refused = await refusal(server.base, options);
      assert.equal(refused.status, status);
      assert.equal(refused.body.errors.length, 1);
      assert.equal(refused.body.errors[0].httpcode, status);
      assert.match(refused.body.errors[0].message, message);
    });
  }

  test('credentials in the query are accepted, as browsers must send them', async () => {
    const sub = await subscribe({ credentialsInQuery: true });
    const offset = await marker();
    await sub.waitUntil(() => sub.frames.at(-1)?.offset === offset);
  });
});
