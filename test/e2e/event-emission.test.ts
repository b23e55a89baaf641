// Emission checks: every operation the API has, driven over HTTP, and exactly the events it should emit read back
// from WS /events: bodies as the catalog defines them, every event valid, event_metadata complete and ids unique.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { KEPT_AS_PROTOBUF } from '../../src/events/chain.js';
import { validateEvent } from '../../src/events/validate.js';
import { ROOT_ORG, startTestServer, type Client, type TestServer } from '../support/server.js';
import { Subscriber, range, refusal, type JsonFrame } from '../support/ws.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NANOS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/;
const MARKER = 'ServiceSDKLoaded_v1';

let server: TestServer;
let c: Client;
let sub: Subscriber;
/** every frame received before the current subscription, across the resubscription after key rotation */
const earlier: JsonFrame[] = [];
let seen = 0;

before(async () => {
  server = await startTestServer();
  c = server.client;
  sub = await Subscriber.open(server.base);
});
after(async () => {
  await sub.close();
  await server.stop();
});

type Expected = Array<{ name: string; body: Record<string, unknown> }>;

/** Runs op, then a marker test event, and checks that exactly `expected` arrived between the previous marker and this one. */
async function emits<T>(what: string, op: () => Promise<T>, expected: (result: T) => Expected): Promise<T> {
  const result = await op();
  const res = await c.post('/test-events', [{ event_name: MARKER }]);
  assert.equal(res.status, 201);
  const offset = res.body.result[0].offset as number;
  await sub.waitUntil(() => sub.frames.some((f) => f.offset === offset), 30_000, `the marker after ${what}`);
  const frames = sub.frames.slice(seen);
  seen = sub.frames.length;
  assert.equal(frames.at(-1)?.offset, offset, `${what}: the marker comes last`);
  const got = frames.slice(0, -1).map((f) => {
    const { event_metadata, ...body } = f.event;
    return { name: event_metadata.event_name as string, body };
  });
  assert.deepEqual(got, expected(result), what);
  return result;
}

const none = (): Expected => [];
const email = (value: string) => ({ type: 'email_address', value });

test('every operation emits exactly its events, each valid and with complete event_metadata', async () => {
  await emits('POST /groups', () => c.post('/groups', { name: 'admins' }), none);
  await emits('POST /groups with a description', () => c.post('/groups', { name: 'staff', description: 'the staff' }), none);
  await emits('POST /groups of an existing name', () => c.post('/groups', { name: 'admins' }), none);

  const adaHandles = [email('Ada@Example.com'), { type: 'username', value: 'ada_l' }, { type: 'phone_number', value: '+15555550101' }];
  const ada = await emits(
    'POST /persons',
    () => c.post('/persons', { handles: adaHandles, groups: ['admins'], attributes: { end_user_read_write: { colour: 'green' } } }),
    (r) => {
      assert.equal(r.status, 201);
      return [{
        name: 'PersonCreated_v1',
        body: {
          person_id: r.body.result.person_id,
          region: 'europe-belgium',
          handles: [{ type: 'EmailAddress', value: 'Ada@Example.com' }, { type: 'Username', value: 'ada_l' }, { type: 'PhoneNumber', value: '+15555550101' }],
          gdpr_consents: [],
        },
      }];
    },
  );
  const adaId = ada.body.result.person_id as string;
  await emits('POST /persons with a taken handle (409)', () => c.post('/persons', { handles: [email('ada@example.com')] }), (r) => (assert.equal(r.status, 409), []));
  await emits('POST /persons with a bad handle (400)', () => c.post('/persons', { handles: [email('not-an-address')] }), (r) => (assert.equal(r.status, 400), []));

  const bob = await emits('PUT /persons creating', () => c.put('/persons', { handles: [email('bob@example.com')], region: 'europe-belgium' }), (r) => {
    assert.equal(r.status, 201);
    return [{ name: 'PersonCreated_v1', body: { person_id: r.body.result.person_id, region: 'europe-belgium', handles: [{ type: 'EmailAddress', value: 'bob@example.com' }], gdpr_consents: [] } }];
  });
  const bobId = bob.body.result.person_id as string;
  await emits('PUT /persons updating', () => c.put('/persons', { handles: [email('bob@example.com'), { type: 'username', value: 'bob' }], active: false }), (r) => (assert.equal(r.status, 200), []));
  await emits('PATCH /persons/{id}', () => c.patch(`/persons/${bobId}`, { active: true }), (r) => (assert.equal(r.status, 200), []));
  await emits('PUT /persons/{id}/groups', () => c.put(`/persons/${adaId}/groups`, { groups: ['admins', 'staff'] }), (r) => (assert.equal(r.status, 200), []));
  await emits('PUT /persons/{id}/groups with an unknown group (400)', () => c.put(`/persons/${adaId}/groups`, { groups: ['nobody'] }), (r) => (assert.equal(r.status, 400), []));

  for (const [method, path, body] of [
    ['put', '/organizations/attributes/end_user_read_write', { a: 1, b: [1, 2] }],
    ['patch', '/organizations/attributes/end_user_read_write', { c: { d: true } }],
    ['delete', '/organizations/attributes/end_user_read_write?attributes=a', undefined],
    ['put', `/persons/${adaId}/attributes/person_pool-end_user_no_access`, { secret: 'x' }],
    ['patch', `/persons/${adaId}/attributes/end_user_read_only`, { plan: 'pro' }],
    ['delete', `/persons/${adaId}/attributes/person_pool-end_user_no_access`, undefined],
  ] as const) {
    await emits(`${method.toUpperCase()} ${path}`, () => c.request(method.toUpperCase(), path, body), (r) => (assert.equal(r.status, 204, r.text), []));
  }

  const gdpr = `/persons/${adaId}/consent/gdpr`;
  const first = await emits('PUT consent/gdpr', () => c.put(gdpr, { consent_levels: ['necessary', 'analytics'] }), (r) => [
    { name: 'GdprConsentsChanged_v1', body: { person_id: adaId, new_gdpr_consents: r.body.result.consents, old_gdpr_consents: [] } },
  ]);
  const second = await emits('PUT consent/gdpr changing it', () => c.put(gdpr, { consent_levels: ['analytics', 'marketing'] }), (r) => [
    { name: 'GdprConsentsChanged_v1', body: { person_id: adaId, new_gdpr_consents: r.body.result.consents, old_gdpr_consents: first.body.result.consents } },
  ]);
  await emits('PUT consent/gdpr with the same set', () => c.put(gdpr, { consent_levels: ['analytics', 'marketing'] }), none);
  await emits('DELETE consent/gdpr', () => c.delete(gdpr), () => [
    { name: 'GdprConsentsChanged_v1', body: { person_id: adaId, new_gdpr_consents: [], old_gdpr_consents: second.body.result.consents } },
  ]);
  await emits('DELETE consent/gdpr again', () => c.delete(gdpr), none);

  const mintedEvent = (r: { status: number; body: any; text: string }) => {
    assert.equal(r.status, 201, r.text);
    const claims = JSON.parse(Buffer.from((r.body.result as string).split('.')[1] as string, 'base64url').toString()) as { jti: string; iat: number; exp: number };
    const at = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', '.000000000Z');
    const body = { token_id: claims.jti, person_id: adaId, mint_token_api: true, issued_at: at(claims.iat), expires_at: at(claims.exp), first_token: false, authentications: [] };
    return [{ name: 'TokenMinted_v1', body }];
  };
  await emits('POST /persons/{id}/mint-token', () => c.post(`/persons/${adaId}/mint-token`), mintedEvent);
  await emits('POST /persons/{id}/mint-token with custom claims', () => c.post(`/persons/${adaId}/mint-token`, { custom_claims: { plan: 'pro' } }), mintedEvent);
  await emits('POST /persons/{id}/mint-token with a reserved claim (400)', () => c.post(`/persons/${adaId}/mint-token`, { custom_claims: { sub: 'x' } }), (r) => (assert.equal(r.status, 400), []));

  await emits('DELETE /groups/{name}', () => c.delete('/groups/staff'), (r) => (assert.equal(r.status, 200), []));
  await emits('DELETE /persons/{id}', () => c.delete(`/persons/${adaId}`), (r) => {
    assert.equal(r.status, 204);
    return [{
      name: 'PersonDeleted_v1',
      body: {
        person_id: adaId,
        region: 'europe-belgium',
        handles: [{ type: 'EmailAddress', value: 'Ada@Example.com' }, { type: 'Username', value: 'ada_l' }, { type: 'PhoneNumber', value: '+15555550101' }],
        groups: ['admins'],
      },
    }];
  });
  await emits('DELETE /persons/{id} again (404)', () => c.delete(`/persons/${adaId}`), (r) => (assert.equal(r.status, 404), []));

  const child = await emits('POST /organizations/suborganizations', () => c.post('/organizations/suborganizations', { sub_org_name: 'emission child' }), (r) => {
    assert.equal(r.status, 200);
    const body = { suborganization_id: r.body.result.id, org_name: 'emission child', parent_organization_id: ROOT_ORG };
    // One region: every region has the change as soon as it commits here, so the plain twin follows at once.
    return [
      { name: 'SuborganizationCreated_InRegion_v1', body: { ...body, region: 'europe-belgium' } },
      { name: 'SuborganizationCreated_v1', body },
    ];
  });
  // The new organization's own log starts empty: its first event is offset 1.
  const childClient = c.as(child.body.result.id, child.body.result.api_key);
  assert.equal((await childClient.post('/test-events', [{ event_name: MARKER }])).body.result[0].offset, 1);

  // Reads emit nothing.
  await emits('reads', async () => {
    for (const path of ['/persons', `/persons/${bobId}`, '/groups', '/groups/admins', '/organizations', '/organizations/suborganizations', `/persons/${bobId}/consent/gdpr`]) {
      assert.equal((await c.get(path)).status, 200, path);
    }
  }, none);

  // Rotating the API key emits nothing, and ends the subscription made with the old key, saying where to resume.
  const lastBefore = sub.frames.at(-1)?.offset as number;
  const rotated = await c.put('/organizations/api-keys');
  assert.equal(rotated.status, 200);
  const closed = await sub.closed;
  assert.equal(closed.code, 4001);
  assert.equal(closed.reason, `API key rotated; resume with from=${lastBefore + 1}`);
  assert.equal((await refusal(server.base, {})).status, 401);
  earlier.push(...sub.frames);
  c = c.as(ROOT_ORG, rotated.body.result.api_key);
  sub = await Subscriber.open(server.base, { key: rotated.body.result.api_key, query: { from: String(lastBefore + 1) } });
  seen = 0;
  await emits('PUT /organizations/api-keys', async () => undefined, none);

  // Across everything: consecutive offsets, valid events, complete metadata, unique ids.
  const all = [...earlier, ...sub.frames];
  assert.deepEqual(all.map((f) => f.offset), range(1, all.length));
  const ids = new Set<string>();
  for (const { offset, event } of all) {
    const m = event.event_metadata;
    const name = m.event_name as string;
    assert.equal(validateEvent(name, event), null, `offset ${offset}`);
    assert.match(m.event_id, UUID, `offset ${offset}`);
    assert.ok(!ids.has(m.event_id), `event_id of offset ${offset} is unique`);
    ids.add(m.event_id);
    assert.match(m.timestamp, NANOS);
    assert.equal(m.event_type, name.replace(/_v1$/, ''));
    assert.equal(m.event_version, '1');
    assert.equal(m.organization_id, ROOT_ORG);
    assert.equal(m.root_organization_id, ROOT_ORG);
    if (name === MARKER) {
      assert.equal(m.is_test_event, true);
      assert.equal(m.source, 'SDK');
    } else {
      assert.equal(m.is_test_event, false);
      assert.equal(m.source, 'Cloud');
    }
  }
  const emitted = all.filter((f) => f.event.event_metadata.event_name !== MARKER).map((f) => f.event.event_metadata.event_name);
  assert.deepEqual(emitted, [
    'PersonCreated_v1',
    'PersonCreated_v1',
    'GdprConsentsChanged_v1',
    'GdprConsentsChanged_v1',
    'GdprConsentsChanged_v1',
    'TokenMinted_v1',
    'TokenMinted_v1',
    'PersonDeleted_v1',
    'SuborganizationCreated_InRegion_v1',
    'SuborganizationCreated_v1',
  ]);

  // Read back from the log, every event is the JSON text it was emitted as, key order included: those kept as the
  // protobuf bytes they are chained by (KEPT_AS_PROTOBUF, each driven here) as much as those kept as msgpack. The
  // browser's anonymous person and its token join them here.
  const anonymous = await c.as(ROOT_ORG, '').post('/persons/anonymous');
  assert.equal(anonymous.status, 201, anonymous.text);
  await sub.waitUntil(() => sub.frames.some((f) => f.event.event_metadata.event_name === 'AnonymousTokenMinted_v1'), 30_000, 'the anonymous token');
  const logged = [...earlier, ...sub.frames];
  const names = logged.map((f) => f.event.event_metadata.event_name as string);
  for (const name of KEPT_AS_PROTOBUF) assert.ok(names.includes(name), `${name} is kept as protobuf, so this test must emit it`);
  const replay = await Subscriber.open(server.base, { key: c.apiKey, query: { from: '1' } });
  try {
    await replay.waitForCount(logged.length);
    assert.deepEqual(
      replay.frames.slice(0, logged.length).map((f) => JSON.stringify(f.event)),
      logged.map((f) => JSON.stringify(f.event)),
    );
  } finally {
    await replay.close();
  }
});
