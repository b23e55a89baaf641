import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock, type Clock } from '../../src/lib/clock.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { emailHandle, newOrg, sameOrgOn, personWithPassword, recordEvents, signIn, verifyIdentityToken } from '../support/auth.js';

const PASSWORD = 'correct horse battery';
const PER_HANDLE = 3;
const PER_IP = 6;
const WINDOW_S = 300;

/** The system clock, moved forward by `skipMs` so throttling windows can pass without waiting. */
function skippingClock(): Clock & { skipMs: number } {
  const clock = {
    ...systemClock,
    skipMs: 0,
    nowMs: () => systemClock.nowMs() + clock.skipMs,
    nowNs: () => systemClock.nowNs() + BigInt(clock.skipMs) * 1_000_000n,
  };
  return clock;
}

describe('passwords', () => {
  let server: TestServer;
  let events: ReturnType<typeof recordEvents>;
  const clock = skippingClock();
  before(async () => {
    server = await startTestServer(
      { SERVICE_AUTH_THROTTLE_PER_HANDLE: String(PER_HANDLE), SERVICE_AUTH_THROTTLE_PER_IP: String(PER_IP), SERVICE_AUTH_THROTTLE_WINDOW: String(WINDOW_S) },
      { clock },
    );
    events = recordEvents(server);
  });
  after(() => server.stop());

  test('the API key sets a password: 8 to 256 characters, 204, PasswordChanged initiated by AdminAPI', async () => {
    const org = await newOrg(server);
    const created = await org.admin.post('/persons', { handles: [{ type: 'username', value: 'ada' }, emailHandle('ada@example.com')] });
    const id = created.body.result.person_id as string;
    const path = `/persons/${id}/credentials/password`;
    for (const password of ['1234567', 'x'.repeat(257), '']) {
      const r = await org.admin.put(path, { password });
      assert.equal(r.status, 400, `${password.length} characters`);
      assert.match(r.body.errors[0].message, /^password: must be 8 to 256 characters/);
    }
    assert.equal((await org.admin.put(path, {})).status, 400);
    assert.equal((await org.admin.put(path, { password: PASSWORD, extra: 1 })).status, 400);
    assert.equal(events(org.id, 'PasswordChanged_v1').length, 0, 'refused requests change nothing');
    assert.equal((await org.user.put(path, { password: PASSWORD })).status, 401, 'the API key is required');
    assert.equal((await org.admin.put('/persons/no-such-person/credentials/password', { password: PASSWORD })).status, 404);

    assert.equal((await org.admin.put(path, { password: '12345678' })).status, 204);
    assert.equal((await org.admin.put(path, { password: 'é'.repeat(256) })).status, 204, '256 characters, more bytes');
    const r = await org.admin.put(path, { password: PASSWORD });
    assert.equal(r.status, 204);
    assert.equal(r.text, '');
    const changed = events(org.id, 'PasswordChanged_v1');
    assert.equal(changed.length, 3);
    const { event_metadata, ...body } = changed[2] as Record<string, unknown>;
    assert.deepEqual(body, { person_id: id, region: 'europe-belgium', handle: { type: 'EmailAddress', value: 'ada@example.com' }, initiated_by: 'AdminAPI' });
    assert.equal((event_metadata as { source: string }).source, 'Cloud');

    const person = await org.admin.get(`/persons/${id}`);
    assert.ok(!person.text.includes('scrypt'), 'the hash is never shown');
    assert.equal((await signIn(org, 'ada@example.com', PASSWORD)).status, 200);
    assert.equal((await signIn(org, 'ada@example.com', '12345678')).status, 401, 'the old password no longer works');
  });

  test('sign-in answers a token signed for the person; events record the attempt and the token', async () => {
    const org = await newOrg(server);
    const id = await personWithPassword(org, 'bo@example.com', PASSWORD);
    const r = await signIn(org, 'BO@example.com', PASSWORD);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body.result), ['token']);
    const claims = await verifyIdentityToken(server, r.body.result.token);
    assert.equal(claims.sub, id);
    assert.equal(claims.aud, org.id);
    assert.equal(claims.first_token, true);
    assert.deepEqual(claims.authenticated_methods, ['password']);
    assert.equal(claims.prev_token_id, undefined);

    const succeeded = events(org.id, 'AuthenticationSucceeded_v1');
    assert.equal(succeeded.length, 1);
    const { event_metadata: _m, analytics_metadata, ...s } = succeeded[0] as Record<string, any>;
    assert.equal(analytics_metadata.client_ip_address, '127.0.0.1');
    assert.match(analytics_metadata.analytics_correlation_id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(s, {
      person_id: id,
      region: 'europe-belgium',
      success_authn_method: 'password',
      authenticated_methods: ['password'],
      handle: { type: 'EmailAddress', value: 'BO@example.com' },
    });
    const minted = events(org.id, 'TokenMinted_v1')[0] as Record<string, any>;
    assert.equal(minted['token_id'], claims.jti);
    assert.equal(minted['person_id'], id);
    assert.equal(minted['mint_token_api'], false);
    assert.equal(minted['first_token'], true);
    assert.equal(Date.parse(minted['issued_at']), (claims.iat as number) * 1000);
    assert.equal(Date.parse(minted['expires_at']), (claims.exp as number) * 1000);
    assert.equal(minted['analytics_metadata'].analytics_correlation_id, analytics_metadata.analytics_correlation_id, 'one attempt, one correlation id');
    assert.equal(minted['authentications'].length, 1);
    assert.equal(minted['authentications'][0].method, 'password');
    assert.deepEqual(minted['authentications'][0].handle, { type: 'EmailAddress', value: 'BO@example.com' });
    assert.match(minted['authentications'][0].timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/);

    const again = await verifyIdentityToken(server, (await signIn(org, 'bo@example.com', PASSWORD)).body.result.token);
    assert.equal(again.first_token, false);
    assert.equal(again.prev_token_id, claims.jti);
  });

  test('an unknown handle and a wrong password get the same 401, in comparable time', async () => {
    const org = await newOrg(server);
    const id = await personWithPassword(org, 'cy@example.com', PASSWORD);
    await org.admin.post('/persons', { handles: [emailHandle('nopass@example.com')] });
    const unknown = await signIn(org, 'nobody@example.com', PASSWORD);
    const wrong = await signIn(org, 'cy@example.com', 'not the password');
    const noPassword = await signIn(org, 'nopass@example.com', PASSWORD);
    for (const r of [unknown, wrong, noPassword]) {
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, unknown.body);
    }
    assert.equal(unknown.body.errors[0].message, 'the handle or password is not correct');

    const failed = events(org.id, 'AuthenticationFailed_v1');
    assert.deepEqual(failed.map((e) => e['failure_detail']), ['unknown handle', 'wrong password', 'the person has no password']);
    for (const e of failed) {
      assert.equal(e['failed_authn_method'], 'password');
      assert.equal(e['failure_reason'], 'invalid_credentials');
      assert.equal(e['analytics_metadata'].client_ip_address, '127.0.0.1');
      assert.equal(e['person_id'], undefined, 'the person never authenticated');
    }
    assert.deepEqual(failed[1]?.['handle'], { type: 'EmailAddress', value: 'cy@example.com' });

    // An unknown handle costs a password hash too: without one it would answer many times faster. Measured in
    // this process's CPU time (the service and its hashing threads run in it), which a busy machine leaves alone.
    const median = async (fn: () => Promise<unknown>) => {
      const ms: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t = process.cpuUsage();
        await fn();
        const used = process.cpuUsage(t);
        ms.push((used.user + used.system) / 1000);
      }
      return ms.sort((a, b) => a - b)[1] as number;
    };
    const unknownMs = await median(() => signIn(org, `ghost${Math.random()}@example.com`, PASSWORD));
    const knownMs = await median(() => signIn(org, 'cy@example.com', PASSWORD));
    assert.ok(unknownMs > knownMs * 0.4, `unknown handle ${unknownMs.toFixed(1)} ms, known ${knownMs.toFixed(1)} ms`);
    assert.ok(id);
  });

  test('an inactive person cannot sign in', async () => {
    const org = await newOrg(server);
    const id = await personWithPassword(org, 'dee@example.com', PASSWORD);
    await org.admin.patch(`/persons/${id}`, { active: false });
    const r = await signIn(org, 'dee@example.com', PASSWORD);
    assert.equal(r.status, 401);
    assert.equal(r.body.errors[0].message, 'authentication was denied');
    const failed = events(org.id, 'AuthenticationFailed_v1');
    assert.equal(failed[0]?.['failure_reason'], 'person_not_active');
    assert.equal(failed[0]?.['person_id'], id);
  });

  test('repeated failures for one handle are throttled with 429 and Retry-After, until the window passes', async () => {
    const org = await newOrg(server);
    await personWithPassword(org, 'eve@example.com', PASSWORD);
    await personWithPassword(org, 'fay@example.com', PASSWORD);
    for (let i = 0; i < PER_HANDLE; i++) assert.equal((await signIn(org, 'eve@example.com', 'guess number ' + i)).status, 401);
    const throttled = await signIn(org, 'eve@example.com', PASSWORD);
    assert.equal(throttled.status, 429, 'even the right password waits');
    const retryAfter = Number(throttled.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= WINDOW_S, `Retry-After ${retryAfter}`);
    assert.equal(throttled.body.errors[0].httpcode, 429);
    assert.equal((await signIn(org, 'EVE@example.com', PASSWORD)).status, 429, 'email handles compare case-insensitively');
    assert.equal((await signIn(org, 'fay@example.com', PASSWORD)).status, 200, 'other handles are not affected');
    const other = await newOrg(server, 'other');
    await personWithPassword(other, 'eve@example.com', PASSWORD);
    assert.equal((await signIn(other, 'eve@example.com', PASSWORD)).status, 200, 'nor the same handle in another organization');

    clock.skipMs += WINDOW_S * 1000;
    assert.equal((await signIn(org, 'eve@example.com', PASSWORD)).status, 200);
  });

  test('repeated failures from one client IP are throttled across handles', async () => {
    const org = await newOrg(server);
    await personWithPassword(org, 'gus@example.com', PASSWORD);
    for (let i = 0; i < PER_IP; i++) assert.equal((await signIn(org, `probe${i}@example.com`, PASSWORD)).status, 401);
    const r = await signIn(org, 'gus@example.com', PASSWORD);
    assert.equal(r.status, 429);
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
    const registering = await org.user.post('/register/password', { handle: emailHandle('new@example.com'), password: PASSWORD });
    assert.equal(registering.status, 429, 'registration is throttled per IP too');
    assert.equal(events(org.id, 'AuthenticationFailed_v1').length, PER_IP, 'throttled requests are refused before any attempt');
    clock.skipMs += WINDOW_S * 1000;
    assert.equal((await signIn(org, 'gus@example.com', PASSWORD)).status, 200);
  });

  test('registration creates the person and answers a token; an existing handle is a 409', async () => {
    const org = await newOrg(server);
    const r = await org.user.post('/register/password', { handle: emailHandle('hal@example.com'), password: PASSWORD });
    assert.equal(r.status, 201, r.text);
    const claims = await verifyIdentityToken(server, r.body.result.token);
    assert.equal(claims.first_token, true);
    const found = await org.admin.get('/persons?handle=email_address:hal@example.com');
    assert.deepEqual(found.body.result.map((p: { person_id: string }) => p.person_id), [claims.sub]);

    const created = events(org.id, 'PersonCreated_v1');
    assert.equal(created.length, 1);
    assert.equal(created[0]?.['person_id'], claims.sub);
    assert.deepEqual(created[0]?.['handles'], [{ type: 'EmailAddress', value: 'hal@example.com' }]);
    assert.equal(created[0]?.['analytics_metadata'].client_ip_address, '127.0.0.1');
    assert.equal(events(org.id, 'AuthenticationSucceeded_v1').length, 1);
    assert.equal(events(org.id, 'TokenMinted_v1')[0]?.['first_token'], true);

    const signedIn = await signIn(org, 'hal@example.com', PASSWORD);
    assert.equal(signedIn.status, 200);
    assert.equal((await verifyIdentityToken(server, signedIn.body.result.token)).prev_token_id, claims.jti);

    const taken = await org.user.post('/register/password', { handle: emailHandle('HAL@example.com'), password: PASSWORD });
    assert.equal(taken.status, 409);
    assert.equal(events(org.id, 'AuthenticationFailed_v1').at(-1)?.['failure_reason'], 'handle_already_registered');
    assert.equal(events(org.id, 'PersonCreated_v1').length, 1);

    const refused: Array<[unknown, RegExp]> = [
      [{ handle: emailHandle('not-an-email'), password: PASSWORD }, /^handle\.value: /],
      [{ handle: emailHandle('ivy@example.com'), password: 'short' }, /^password: must be 8 to 256 characters/],
      [{ handle: { type: 'fax', value: '1' }, password: PASSWORD }, /^handle\.type: /],
      [{ password: PASSWORD }, /^handle: is required/],
    ];
    for (const [body, message] of refused) {
      const bad = await org.user.post('/register/password', body);
      assert.equal(bad.status, 400, JSON.stringify(body));
      assert.match(bad.body.errors[0].message, message);
    }
  });

  test('end-user routes need Service-OrgID of an existing organization, and no API key', async () => {
    const anonymous = server.client.as('', '');
    const body = { handle: emailHandle('x@example.com'), password: PASSWORD };
    assert.equal((await anonymous.post('/authenticate/password', body)).status, 400);
    assert.equal((await server.client.as('no-such-org', '').post('/authenticate/password', body)).status, 404);
    assert.equal((await server.client.as('no-such-org', '').post('/register/password', body)).status, 404);
    assert.equal((await server.client.as(server.client.orgId, '').post('/authenticate/password', { handle: emailHandle('x@example.com') })).status, 400);
  });

  test('passwords and tokens survive a restart', async () => {
    const org = await newOrg(server);
    await personWithPassword(org, 'jo@example.com', PASSWORD);
    const first = await verifyIdentityToken(server, (await signIn(org, 'jo@example.com', PASSWORD)).body.result.token);
    await server.stop();
    server = await startTestServer({}, { clock }, server.dataDir);
    const r = await signIn(sameOrgOn(server, org), 'jo@example.com', PASSWORD);
    assert.equal(r.status, 200);
    const claims = await verifyIdentityToken(server, r.body.result.token);
    assert.equal(claims.prev_token_id, first.jti);
  });
});
