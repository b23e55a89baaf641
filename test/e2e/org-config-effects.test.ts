// What each field of the organization's configuration does to issued tokens, password sign-in and
// registration, through the real server; and what existing tokens and persons keep when it changes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt, decodeProtectedHeader, type JWK, type JWTPayload } from 'jose';
import { startReceiver, type Receiver } from '../../scripts/webhook-receiver.js';
import { movableClock } from '../support/clock.js';
import { emailHandle, newOrg, personWithPassword, recordEvents, signIn, verifyIdentityToken, type Org } from '../support/auth.js';
import { removeDir, startTestServer, type TestServer } from '../support/server.js';

const PASSWORD = 'correct horse battery';
const TTL = 600;
const OPERATOR_KEY = 'operator-key-for-tests-0123456789';

async function configure(org: Org, patch: Record<string, unknown>): Promise<void> {
  const r = await org.admin.patch('/organizations/config', patch);
  assert.equal(r.status, 200, r.text);
}

async function mint(org: Org, personId: string, body: unknown = {}): Promise<string> {
  const r = await org.admin.post(`/persons/${personId}/mint-token`, body);
  assert.equal(r.status, 201, r.text);
  return r.body.result as string;
}

function register(org: Org, email: string) {
  return org.user.post('/register/password', { handle: emailHandle(email), password: PASSWORD });
}

async function tokenOf(reply: { status: number; text: string; body: any }, status = 200): Promise<string> {
  assert.equal(reply.status, status, reply.text);
  return reply.body.result.token as string;
}

const lifetime = (token: string) => {
  const c = decodeJwt(token);
  return (c.exp as number) - (c.iat as number);
};

async function validate(server: TestServer, token: string) {
  const r = await server.client.as('', '').post('/token/validate', { token });
  assert.equal(r.status, 200, r.text);
  return r.body.result as { valid: boolean; invalidity_reason?: string; expires_in_seconds?: number };
}

/** A token_minted hook on the organization, answering what `answer` says (and may act meanwhile). */
async function hook(server: TestServer, org: Org, answer: (payload: JWTPayload) => Record<string, unknown> | Promise<Record<string, unknown>>): Promise<Receiver> {
  const receiver = await startReceiver({ serviceUrl: server.base, orgId: org.id, claims: answer });
  const w = await org.admin.post('/organizations/webhooks', { name: 'token hook', target_url: receiver.url });
  assert.equal(w.status, 201, w.text);
  const t = await org.admin.post(`/organizations/webhooks/${w.body.result.id}/triggers`, { trigger_type: 'sync_hook', trigger_name: 'token_minted' });
  assert.equal(t.status, 201, t.text);
  return receiver;
}

describe('the organization configuration applied', () => {
  let server: TestServer;
  let events: ReturnType<typeof recordEvents>;
  const receivers: Receiver[] = [];
  before(async () => {
    server = await startTestServer({ SERVICE_TOKEN_TTL: String(TTL), SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
    events = recordEvents(server);
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await server.stop();
    removeDir(server.dataDir);
  });

  const failures = (org: Org) => events(org.id, 'AuthenticationFailed_v1');

  test('groups_claim_name: every token carries the groups under it, the hooks are told it, and custom claims may not use it', async () => {
    const org = await newOrg(server);
    assert.equal((await org.admin.post('/groups', { name: 'staff' })).status, 201);
    const id = await personWithPassword(org, 'ada@example.com', PASSWORD);
    assert.equal((await org.admin.put(`/persons/${id}/groups`, { groups: ['staff'] })).status, 200);
    const before = await mint(org, id);
    assert.deepEqual(decodeJwt(before)['groups'], ['staff']);

    const name = 'https://example.com/teams';
    await configure(org, { groups_claim_name: name });
    const minted = decodeJwt(await mint(org, id));
    assert.deepEqual(minted[name], ['staff']);
    assert.equal('groups' in minted, false);
    for (const reserved of [name, 'groups']) {
      const refused = await org.admin.post(`/persons/${id}/mint-token`, { custom_claims: { plan: 'pro', [reserved]: ['forged'] } });
      assert.equal(refused.status, 400, refused.text);
      assert.ok(refused.body.errors[0].message.includes(`"${reserved}"`), refused.text);
    }

    const told: unknown[] = [];
    receivers.push(
      await hook(server, org, (payload) => {
        told.push((payload['trigger_content'] as Record<string, unknown>)['groups_claim_name']);
        return { [name]: ['forged'], tier: 'gold' };
      }),
    );
    const signedIn = await verifyIdentityToken(server, await tokenOf(await signIn(org, 'ada@example.com', PASSWORD)));
    assert.deepEqual(told, [name]);
    assert.deepEqual(signedIn[name], ['staff'], "the hook's claim of that name is dropped");
    assert.equal(signedIn['tier'], 'gold');
    assert.equal('groups' in signedIn, false);

    // A token issued before the change keeps the claims it was signed with, and stays valid.
    assert.deepEqual(decodeJwt(before)['groups'], ['staff']);
    assert.equal((await validate(server, before)).valid, true);
  });

  test('token_duration: tokens issued after the change live that long, 0 is SERVICE_TOKEN_TTL again, and earlier tokens keep their expiry', async () => {
    const org = await newOrg(server);
    const id = await personWithPassword(org, 'bo@example.com', PASSWORD);
    const before = await mint(org, id);
    assert.equal(lifetime(before), TTL);

    await configure(org, { token_duration: 120 });
    assert.equal(lifetime(await mint(org, id)), 120);
    const signedIn = await tokenOf(await signIn(org, 'bo@example.com', PASSWORD));
    assert.equal(lifetime(signedIn), 120);
    const registered = await tokenOf(await register(org, 'new@example.com'), 201);
    assert.equal(lifetime(registered), 120);
    const minted = events(org.id, 'TokenMinted_v1').find((e) => e['token_id'] === decodeJwt(signedIn).jti);
    assert.ok(minted);
    assert.equal((Date.parse(minted['expires_at']) - Date.parse(minted['issued_at'])) / 1000, 120, 'the event says what the token says');

    const verdict = await validate(server, before);
    assert.equal(verdict.valid, true);
    assert.ok((verdict.expires_in_seconds as number) > 120, 'the earlier token keeps its expiry');

    await configure(org, { token_duration: 0 });
    assert.equal(lifetime(await mint(org, id)), TTL);
    const other = await newOrg(server, 'other');
    const otherId = await personWithPassword(other, 'bo@example.com', PASSWORD);
    await configure(org, { token_duration: 3600 });
    assert.equal(lifetime(await mint(other, otherId)), TTL, "another organization's tokens keep its own lifetime");
  });

  test('allowed_factor_methods: password sign-in and registration are 403 naming the method, recorded; existing tokens stay valid', async () => {
    const org = await newOrg(server);
    const id = await personWithPassword(org, 'cy@example.com', PASSWORD);
    const earlier = await tokenOf(await signIn(org, 'cy@example.com', PASSWORD));

    await configure(org, { allowed_factor_methods: ['oidc'] });
    for (const reply of [await signIn(org, 'cy@example.com', PASSWORD), await signIn(org, 'cy@example.com', 'wrong password'), await register(org, 'dee@example.com')]) {
      assert.equal(reply.status, 403, reply.text);
      assert.match(reply.body.errors[0].message, /"password" is not allowed/);
    }
    const refused = failures(org).filter((e) => e['failure_reason'] === 'method_not_allowed');
    assert.equal(refused.length, 3);
    assert.equal(refused[0]?.['failed_authn_method'], 'password');
    assert.equal(refused[0]?.['person_id'], undefined, 'refused before the credentials are read: no person is named');
    assert.equal(events(org.id, 'PersonCreated_v1').length, 1, 'only the person created by the API');
    assert.equal((await validate(server, earlier)).valid, true, 'a token already issued stays valid');
    assert.equal(lifetime(await mint(org, id)), TTL, 'the mint-token API is not an end-user method');

    await configure(org, { allowed_factor_methods: ['oidc', 'password'] });
    await tokenOf(await signIn(org, 'cy@example.com', PASSWORD));
  });

  test('deny_self_registration: registration is 403 and creates nobody, whatever the handle; persons already there sign in', async () => {
    const org = await newOrg(server);
    await personWithPassword(org, 'eve@example.com', PASSWORD);
    await configure(org, { deny_self_registration: true });
    for (const email of ['fay@example.com', 'eve@example.com']) {
      const r = await register(org, email);
      assert.equal(r.status, 403, r.text);
      assert.match(r.body.errors[0].message, /self-registration is disabled/);
    }
    assert.deepEqual(failures(org).map((e) => e['failure_reason']), ['self_registration_denied', 'self_registration_denied']);
    assert.equal(events(org.id, 'PersonCreated_v1').length, 1);
    await tokenOf(await signIn(org, 'eve@example.com', PASSWORD));

    await configure(org, { deny_self_registration: false });
    await tokenOf(await register(org, 'fay@example.com'), 201);
  });

  test('new_person_handle_patterns: a handle off the patterns is 403 naming it; email addresses match whatever their case', async () => {
    const org = await newOrg(server);
    await personWithPassword(org, 'gil@elsewhere.org', PASSWORD);
    await configure(org, { new_person_handle_patterns: ['*@example.com'] });
    const r = await register(org, 'hal@elsewhere.org');
    assert.equal(r.status, 403, r.text);
    assert.match(r.body.errors[0].message, /"hal@elsewhere\.org" does not match the organization's new_person_handle_patterns/);
    assert.equal(failures(org).at(-1)?.['failure_reason'], 'handle_not_allowed');
    assert.equal(events(org.id, 'PersonCreated_v1').length, 1);
    await tokenOf(await register(org, 'Hal@EXAMPLE.com'), 201);
    await tokenOf(await signIn(org, 'gil@elsewhere.org', PASSWORD));
  });

  test('requires_manual_approval: a registration creates the person inactive and answers 202 without a token; once approved, they sign in', async () => {
    const org = await newOrg(server);
    await personWithPassword(org, 'ida@example.com', PASSWORD);
    await configure(org, { requires_manual_approval: true });

    const r = await register(org, 'jo@example.com');
    assert.equal(r.status, 202, r.text);
    const personId = r.body.result.person_id as string;
    assert.deepEqual(r.body.result, { awaiting_approval: true, person_id: personId });
    assert.equal((await org.admin.get(`/persons/${personId}`)).body.result.active, false);
    assert.equal(events(org.id, 'PersonCreated_v1').at(-1)?.['person_id'], personId);
    const failed = failures(org).at(-1);
    assert.equal(failed?.['failure_reason'], 'awaiting_approval');
    assert.equal(failed?.['person_id'], personId);
    assert.equal(events(org.id, 'TokenMinted_v1').some((e) => e['person_id'] === personId), false, 'no token was issued');
    assert.equal(events(org.id, 'AuthenticationSucceeded_v1').some((e) => e['person_id'] === personId), false);

    assert.equal((await signIn(org, 'jo@example.com', PASSWORD)).status, 401, 'not before approval');
    await tokenOf(await signIn(org, 'ida@example.com', PASSWORD));
    assert.equal((await org.admin.post('/persons', { handles: [emailHandle('kit@example.com')] })).body.result.active, true, 'persons the organization creates are active');

    assert.equal((await org.admin.patch(`/persons/${personId}`, { active: true })).status, 200);
    const claims = decodeJwt(await tokenOf(await signIn(org, 'jo@example.com', PASSWORD)));
    assert.equal(claims.sub, personId);
    assert.equal(claims['first_token'], true);
  });

  test('a configuration changed while the hooks run is what decides: the sign-in or registration is refused, recorded, and nothing is issued', async () => {
    const org = await newOrg(server);
    const id = await personWithPassword(org, 'lou@example.com', PASSWORD);
    let change: Record<string, unknown> | undefined;
    receivers.push(
      await hook(server, org, async () => {
        if (change !== undefined) await configure(org, change);
        return {};
      }),
    );

    change = { allowed_factor_methods: ['oidc'] };
    const r = await signIn(org, 'lou@example.com', PASSWORD);
    assert.equal(r.status, 403, r.text);
    assert.match(r.body.errors[0].message, /"password" is not allowed/);
    const failed = failures(org).at(-1);
    assert.equal(failed?.['failure_reason'], 'method_not_allowed');
    assert.equal(failed?.['person_id'], id, 'refused after the credentials were verified');
    assert.equal(events(org.id, 'TokenMinted_v1').length, 0);

    change = { allowed_factor_methods: [], deny_self_registration: true };
    await configure(org, { allowed_factor_methods: [] });
    const reg = await register(org, 'max@example.com');
    assert.equal(reg.status, 403, reg.text);
    assert.equal(failures(org).at(-1)?.['failure_reason'], 'self_registration_denied');
    assert.equal(events(org.id, 'PersonCreated_v1').length, 1, 'nobody was created');

    change = { requires_manual_approval: true };
    await configure(org, { deny_self_registration: false });
    const pending = await register(org, 'max@example.com');
    assert.equal(pending.status, 202, pending.text);
    assert.equal((await org.admin.get(`/persons/${pending.body.result.person_id}`)).body.result.active, false);
  });
});

test('token_duration longer than SERVICE_TOKEN_TTL: the key that signed such a token stays published until it expires', async () => {
  const clock = movableClock();
  // A fixed issuer: with port 0 the default one would change with the restart.
  const env = { SERVICE_TOKEN_TTL: '60', SERVICE_ISSUER: 'https://id.example' };
  let server = await startTestServer(env, { clock, operatorKey: OPERATOR_KEY });
  const dataDir = server.dataDir;
  try {
    const org = await newOrg(server);
    const id = await personWithPassword(org, 'ned@example.com', PASSWORD);
    await configure(org, { token_duration: 7200 });
    const long = await mint(org, id);
    const kid = decodeProtectedHeader(long).kid;
    assert.equal(lifetime(long), 7200);
    const rotated = await server.client.post('/ops/keys/rotate', undefined, { 'Service-Operator-Key': OPERATOR_KEY });
    assert.equal(rotated.status, 201, rotated.text);

    clock.advance(3600_000);
    await server.stop();
    server = await startTestServer(env, { clock, operatorKey: OPERATOR_KEY }, dataDir);
    const kids = (await server.client.get('/.well-known/jwks.json')).body.keys.map((k: JWK) => k.kid);
    assert.ok(kids.includes(kid), 'an hour after it retired, past SERVICE_TOKEN_TTL, across a restart');
    assert.equal((await validate(server, long)).valid, true);

    clock.advance(3601_000);
    const later = (await server.client.get('/.well-known/jwks.json')).body.keys.map((k: JWK) => k.kid);
    assert.deepEqual(later, [rotated.body.result.kid], 'gone once the token it signed has expired');
    assert.deepEqual(await validate(server, long), { valid: false, invalidity_reason: 'invalid_token_content' });
  } finally {
    await server.stop();
    removeDir(dataDir);
  }
});
