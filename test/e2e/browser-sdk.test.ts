import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { startTestServer, type Client, type TestServer } from '../support/server.js';
import { emailHandle, newOrg, personWithPassword, signIn, type Org } from '../support/auth.js';
import { Subscriber } from '../support/ws.js';

const PASSWORD = 'correct horse battery';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/156.0.0.0';
const LOCATION = 'https://shop.example/cart?step=2';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /actions/sdk', () => {
  let server: TestServer;
  let org: Org;
  let other: Org;
  let personId: string;
  let token: string;
  let json: Subscriber;
  let binary: Subscriber;
  let browser: Client;
  const correlation = randomUUID();

  before(async () => {
    server = await startTestServer({ SERVICE_SDK_RATE_PER_ORG: '30', SERVICE_SDK_RATE_PER_IP: '100000', SERVICE_BROWSER_RATE_WINDOW: '3600' });
    org = await newOrg(server, 'shop');
    other = await newOrg(server, 'other');
    personId = await personWithPassword(org, 'ada@example.com', PASSWORD);
    token = (await signIn(org, 'ada@example.com', PASSWORD)).body.result.token;
    const types = 'ServiceSDKLoaded_v1,PersonIdentified_v1,PersonLoggedOut_v1,VirtualPageLoaded_v1,AuthenticationSucceeded_v1,AuthenticationFailed_v1';
    json = await Subscriber.open(server.base, { org: org.id, key: org.admin.apiKey, query: { types } });
    binary = await Subscriber.open(server.base, { org: org.id, key: org.admin.apiKey, query: { types, format: 'protobuf' } });
    browser = server.client.as('', '');
  });
  after(async () => {
    await json.close();
    await binary.close();
    await server.stop();
  });

  const body = (event_data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    organization_id: org.id,
    analytics_correlation_id: correlation,
    window_location: LOCATION,
    user_agent: UA,
    event_data,
    ...extra,
  });
  const send = (b: unknown, headers: Record<string, string> = {}) => browser.post('/actions/sdk', b, { 'Service-SdkVersion': '1.2.3', ...headers });

  /** The next SDK event on the JSON stream, checked for the metadata every SDK event shares. */
  let consumed = 0;
  async function next(name: string): Promise<any> {
    const at = consumed++;
    await json.waitForCount(at + 1);
    const event = (json.frames[at] as { event: any }).event;
    const m = event.event_metadata;
    assert.equal(m.event_name, name);
    assert.equal(m.source, 'SDK');
    assert.equal(m.organization_id, org.id);
    assert.equal(m.is_test_event, false);
    assert.match(m.event_id, UUID);
    assert.ok(Math.abs(Date.parse(m.timestamp) - Date.now()) < 600_000);
    assert.deepEqual(event.analytics_metadata, { analytics_correlation_id: correlation, client_ip_address: '127.0.0.1' });
    assert.deepEqual(event.browser_metadata, { user_agent: UA, window_location: LOCATION, service_sdk_version: '1.2.3' });
    return event;
  }
  const rest = (event: any) => {
    const { event_metadata, analytics_metadata, browser_metadata, ...fields } = event;
    return fields;
  };

  test('ServiceSDKLoaded_v1: metadata only', async () => {
    assert.equal((await send(body({ event_name: 'ServiceSDKLoaded_v1' }))).status, 204);
    assert.deepEqual(rest(await next('ServiceSDKLoaded_v1')), {});
  });

  test('PersonIdentified_v1 and PersonLoggedOut_v1: the person and the region looked up', async () => {
    assert.equal((await send(body({ event_name: 'PersonIdentified_v1', person_id: personId }))).status, 204);
    assert.deepEqual(rest(await next('PersonIdentified_v1')), { person_id: personId, region: 'europe-belgium' });
    assert.equal((await send(body({ event_name: 'PersonLoggedOut_v1', person_id: personId }), { Authorization: `Bearer ${token}` })).status, 204);
    assert.deepEqual(rest(await next('PersonLoggedOut_v1')), { person_id: personId, region: 'europe-belgium' });
  });

  test('VirtualPageLoaded_v1: with or without a person', async () => {
    assert.equal((await send(body({ event_name: 'VirtualPageLoaded_v1' }))).status, 204);
    assert.deepEqual(rest(await next('VirtualPageLoaded_v1')), {});
    assert.equal((await send(body({ event_name: 'VirtualPageLoaded_v1', person_id: personId }))).status, 204);
    assert.deepEqual(rest(await next('VirtualPageLoaded_v1')), { person_id: personId, region: 'europe-belgium' });
  });

  test('AuthenticationSucceeded_v1: methods and the handle as the enum names it', async () => {
    const r = await send(body({ event_name: 'AuthenticationSucceeded_v1', person_id: personId, success_authn_method: 'password', authenticated_methods: ['password'], handle: emailHandle('ada@example.com') }));
    assert.equal(r.status, 204);
    assert.deepEqual(rest(await next('AuthenticationSucceeded_v1')), {
      person_id: personId,
      region: 'europe-belgium',
      success_authn_method: 'password',
      authenticated_methods: ['password'],
      handle: { type: 'EmailAddress', value: 'ada@example.com' },
    });
  });

  test('AuthenticationFailed_v1: every field, challenge_id dropped; without a person no region', async () => {
    const r = await send(
      body({
        event_name: 'AuthenticationFailed_v1',
        person_id: personId,
        failed_authn_method: 'password',
        failure_reason: 'incorrect_password',
        failure_detail: 'wrong twice',
        authenticated_methods: ['password'],
        handle: emailHandle('ada@example.com'),
        challenge_id: 'c-1',
      }),
    );
    assert.equal(r.status, 204);
    assert.deepEqual(rest(await next('AuthenticationFailed_v1')), {
      person_id: personId,
      region: 'europe-belgium',
      authenticated_methods: ['password'],
      failed_authn_method: 'password',
      failure_reason: 'incorrect_password',
      failure_detail: 'wrong twice',
      handle: { type: 'EmailAddress', value: 'ada@example.com' },
    });
    assert.equal((await send(body({ event_name: 'AuthenticationFailed_v1', failed_authn_method: 'password', failure_reason: 'invalid_password' }))).status, 204);
    assert.deepEqual(rest(await next('AuthenticationFailed_v1')), { failed_authn_method: 'password', failure_reason: 'invalid_password' });
  });

  test('the user agent falls back to the header, the SDK version is empty without its header', async () => {
    const seen = consumed++;
    const r = await browser.post('/actions/sdk', body({ event_name: 'ServiceSDKLoaded_v1' }, { user_agent: undefined }), { 'User-Agent': 'agent/1' });
    assert.equal(r.status, 204);
    await json.waitForCount(seen + 1);
    assert.deepEqual((json.frames[seen] as any).event.browser_metadata, { user_agent: 'agent/1', window_location: LOCATION, service_sdk_version: '' });
  });

  test('the protobuf stream carries the same events, field for field', async () => {
    await binary.waitForCount(json.frames.length);
    const root = new protobuf.Root().loadSync(fileURLToPath(new URL('../../src/events/events.proto', import.meta.url)), { keepCase: true });
    const StreamFrame = root.lookupType('events.StreamFrame');
    assert.ok(json.frames.length >= 9);
    binary.binary.forEach((bytes, i) => {
      const expected = (json.frames[i] as any).event;
      const frame = StreamFrame.toObject(StreamFrame.decode(bytes), { longs: Number }) as { event_name: string; event: Uint8Array };
      assert.equal(frame.event_name, expected.event_metadata.event_name);
      const Message = root.lookupType(`events.${frame.event_name}`);
      const event = Message.toObject(Message.decode(frame.event), { longs: String, enums: String, defaults: false }) as any;
      assert.deepEqual({ is_test_event: false, ...event.event_metadata }, expected.event_metadata);
      const { event_metadata, ...fields } = expected;
      const { event_metadata: _m, ...decoded } = event;
      // proto3 leaves empty strings off the wire.
      if (fields.browser_metadata.service_sdk_version === '') decoded.browser_metadata.service_sdk_version = '';
      assert.deepEqual(decoded, fields);
    });
  });

  test('refusals record nothing: unknown organization 404, unknown name or bad field 400, foreign person 400, bearer mismatch 401, oversize 413', async () => {
    const cases: Array<[unknown, Record<string, string>, number, RegExp]> = [
      [body({ event_name: 'ServiceSDKLoaded_v1' }, { organization_id: 'no-such-org' }), {}, 404, /organization_id/],
      [body({ event_name: 'SlashIDSDKLoaded_v1' }), {}, 400, /event_data.event_name/],
      [body({ event_name: 'PersonIdentified_v1' }), {}, 400, /event_data.person_id: is required/],
      [body({ event_name: 'PersonIdentified_v1', person_id: personId, extra: 1 }), {}, 400, /event_data.extra: unknown field/],
      [body({ event_name: 'ServiceSDKLoaded_v1' }, { analytics_correlation_id: 'not-a-uuid' }), {}, 400, /analytics_correlation_id/],
      [body({ event_name: 'PersonIdentified_v1', person_id: 'nobody' }), {}, 400, /person_id: nobody is not a person of this organization/],
      [{ ...body({ event_name: 'PersonIdentified_v1', person_id: personId }), organization_id: other.id }, {}, 400, /not a person of this organization/],
      [body({ event_name: 'PersonIdentified_v1', person_id: personId }), { Authorization: 'Bearer not-a-token' }, 401, /Authorization/],
      [body({ event_name: 'ServiceSDKLoaded_v1' }, { organization_id: other.id }), { Authorization: `Bearer ${token}` }, 401, /of this organization/],
      [body({ event_name: 'ServiceSDKLoaded_v1' }, { window_location: 'x'.repeat(17_000) }), {}, 413, /16384 bytes/],
    ];
    for (const [b, headers, status, message] of cases) {
      const r = await send(b, headers);
      assert.equal(r.status, status, JSON.stringify(r.body));
      assert.match(r.body.errors[0].message, message);
    }
    // The next event on the stream is a marker sent after the refusals: none of them was recorded.
    assert.equal((await send(body({ event_name: 'VirtualPageLoaded_v1' }, { window_location: 'https://shop.example/marker' }))).status, 204);
    const seen = consumed++;
    await json.waitForCount(seen + 1);
    assert.equal((json.frames[seen] as any).event.browser_metadata.window_location, 'https://shop.example/marker');
    const marker = await send({ ...body({ event_name: 'VirtualPageLoaded_v1' }), organization_id: other.id, window_location: 'https://other.example/marker' });
    assert.equal(marker.status, 204);
    const otherEvents = await Subscriber.open(server.base, { org: other.id, key: other.admin.apiKey, query: { from: '1' } });
    await otherEvents.waitUntil(() => otherEvents.frames.some((f) => f.event.browser_metadata?.window_location === 'https://other.example/marker'));
    assert.deepEqual(otherEvents.frames.filter((f) => f.event.event_metadata.source === 'SDK').length, 1, 'nothing else recorded in the other organization');
    await otherEvents.close();
  });

  test("Service-Analytics-Correlation-ID on a sign-in: the service's own events carry it; a malformed one is a 400", async () => {
    const id = randomUUID();
    const r = await signIn(org, 'ada@example.com', PASSWORD, { 'Service-Analytics-Correlation-ID': id });
    assert.equal(r.status, 200);
    const wrong = await signIn(org, 'ada@example.com', 'wrong password', { 'Service-Analytics-Correlation-ID': id });
    assert.equal(wrong.status, 401);
    const sub = await Subscriber.open(server.base, { org: org.id, key: org.admin.apiKey, query: { from: '1', types: 'AuthenticationSucceeded_v1,TokenMinted_v1,AuthenticationFailed_v1' } });
    await sub.waitUntil(() => sub.frames.filter((f) => f.event.analytics_metadata?.analytics_correlation_id === id).length === 3);
    assert.deepEqual(
      sub.frames.filter((f) => f.event.analytics_metadata?.analytics_correlation_id === id).map((f) => [f.event.event_metadata.event_name, f.event.event_metadata.source]),
      [['AuthenticationSucceeded_v1', 'Cloud'], ['TokenMinted_v1', 'Cloud'], ['AuthenticationFailed_v1', 'Cloud']],
    );
    await sub.close();
    const bad = await signIn(org, 'ada@example.com', PASSWORD, { 'Service-Analytics-Correlation-ID': 'nope' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.errors[0].message, /Service-Analytics-Correlation-ID/);
  });

  test('a flood is answered 429 with Retry-After while other organizations keep working', async () => {
    let limited: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 0; i < 40 && !limited; i++) {
      const r = await send(body({ event_name: 'ServiceSDKLoaded_v1' }));
      if (r.status === 429) limited = r;
      else assert.equal(r.status, 204);
    }
    assert.ok(limited, 'the flood was limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.match(limited.body.errors[0].message, /too many SDK events for this organization/);
    const elsewhere = await send({ ...body({ event_name: 'ServiceSDKLoaded_v1' }), organization_id: other.id });
    assert.equal(elsewhere.status, 204);
  });
});
