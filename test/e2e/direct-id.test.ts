// Direct-id: a one-time sign-in value issued with the API key, redeemed once for an identity token through the
// issuing pipeline (hooks, events); used, expired or unknown values refused, also after a restart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectResult, unchanged } from '../support/expect.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { movableClock } from '../support/clock.js';
import { newOrg, recordEvents, sameOrgOn, verifyIdentityToken, type Org } from '../support/auth.js';
import { assertOriginalRequest, assertOriginalShape } from '../support/original.js';
import { startFaultReceiver, type FaultReceiver } from '../support/receivers.js';
import { DIRECT_ID_REFUSED } from '../../src/domain/direct-id.js';

// a fixed issuer: a restart listens on another port, and tokens name the issuer
const ENV = { SERVICE_ISSUER: 'https://id.example', SERVICE_WEBHOOK_ALLOW_INSECURE: '1' };
const clock = movableClock();
const dir = tempDir();
let server: TestServer;
let events: ReturnType<typeof recordEvents>;
let org: Org;
let person: string;
let receiver: FaultReceiver;

const start = async () => {
  server = await startTestServer(ENV, { clock }, dir);
  events = recordEvents(server);
};

before(async () => {
  await start();
  receiver = await startFaultReceiver();
  org = await newOrg(server, 'direct');
  const r = await org.admin.post('/persons', { handles: [{ type: 'username', value: 'ada' }, { type: 'email_address', value: 'ada@example.com' }] });
  assert.equal(r.status, 201, r.text);
  person = r.body.result.person_id as string;
});
after(async () => {
  await server.stop();
  await receiver.close();
  removeDir(dir);
});

async function issue(o: Org, personId: string, duration_secs = 600): Promise<string> {
  const body = { duration_secs };
  assertOriginalRequest('POST /persons/{person_id}/direct-id', body);
  const r = await o.admin.post(`/persons/${personId}/direct-id`, body);
  assertOriginalShape('POST /persons/{person_id}/direct-id', r.status, r.body);
  return expectResult<string>(r, 201);
}

const redeem = (o: Org, direct_id: string) => o.user.post('/authenticate/direct-id', { direct_id });

describe('POST /persons/{person_id}/direct-id and POST /authenticate/direct-id', () => {
  test('201 a value; redeemed once for an identity token with authenticated_methods ["direct_id"]; AuthenticationSucceeded and TokenMinted', async () => {
    const value = await issue(org, person);
    assert.match(value, /^[A-Za-z0-9_-]{40,}$/);
    const r = await redeem(org, value);
    const { token } = expectResult<{ token: string }>(r, 200);
    const claims = await verifyIdentityToken(server, token);
    assert.equal(claims.sub, person);
    assert.equal(claims.aud, org.id);
    assert.deepEqual(claims.authenticated_methods, ['direct_id']);
    const [succeeded] = events(org.id, 'AuthenticationSucceeded_v1');
    assert.equal(succeeded?.['success_authn_method'], 'direct_id');
    assert.deepEqual(succeeded?.['authenticated_methods'], ['direct_id']);
    assert.deepEqual(succeeded?.['handle'], { type: 'EmailAddress', value: 'ada@example.com' });
    const [minted] = events(org.id, 'TokenMinted_v1');
    assert.equal(minted?.['token_id'], claims.jti);
    assert.equal(minted?.['mint_token_api'], false);
    assert.equal(minted?.['authentications'][0].method, 'direct_id');
    // the value is never stored: only its hash is in the state
    assert.ok(!JSON.stringify([...(server.service.registry.get(org.id)?.state.direct_ids.keys() ?? [])]).includes(value));
  });

  test('a value used once is refused the second time: 401, AuthenticationFailed, no token', async () => {
    const value = await issue(org, person);
    expectResult(await redeem(org, value), 200);
    const minted = events(org.id, 'TokenMinted_v1').length;
    expectError(await redeem(org, value), 401, DIRECT_ID_REFUSED);
    assert.equal(events(org.id, 'TokenMinted_v1').length, minted);
    const failed = events(org.id, 'AuthenticationFailed_v1').at(-1);
    assert.equal(failed?.['failed_authn_method'], 'direct_id');
    assert.equal(failed?.['failure_reason'], 'invalid_credentials');
  });

  test('two redemptions of one value at once: exactly one token', async () => {
    const value = await issue(org, person);
    const answers = await Promise.all([redeem(org, value), redeem(org, value), redeem(org, value)]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 401, 401]);
  });

  test('an expired value is refused; one still in its time works', async () => {
    const short = await issue(org, person, 60);
    const long = await issue(org, person, 3600);
    clock.advance(61_000);
    expectError(await redeem(org, short), 401, DIRECT_ID_REFUSED);
    expectResult(await redeem(org, long), 200);
  });

  test('the token_minted hooks run: their claims in the token; a denying hook refuses the sign-in and leaves the value unused', async () => {
    const hooked = await newOrg(server, 'hooked');
    const p = expectResult(await hooked.admin.post('/persons', { handles: [{ type: 'username', value: 'bo' }] }), 201).person_id as string;
    const w = await hooked.admin.post('/organizations/webhooks', { name: 'hook', target_url: receiver.url('/claims/from_hook'), timeout: '10s' });
    assert.equal(w.status, 201, w.text);
    const t = await hooked.admin.post(`/organizations/webhooks/${w.body.result.id}/triggers`, { trigger_type: 'sync_hook', trigger_name: 'token_minted' });
    assert.equal(t.status, 201, t.text);
    const claims = await verifyIdentityToken(server, expectResult(await redeem(hooked, await issue(hooked, p)), 200).token);
    assert.equal(claims['from_hook'], true);

    assert.equal((await hooked.admin.patch(`/organizations/webhooks/${w.body.result.id}`, { target_url: receiver.url('/status/403') })).status, 200);
    const denied = await issue(hooked, p);
    expectError(await redeem(hooked, denied), 401);
    assert.equal(events(hooked.id, 'AuthenticationFailed_v1').at(-1)?.['failure_reason'], 'hook_denied');
    assert.equal(server.service.registry.get(hooked.id)?.state.direct_ids.size, 1, 'the refused sign-in did not use the value');
  });

  test("allowed_factor_methods: a configuration without direct_id refuses the redemption (403, the value kept); with it, the value signs in", async () => {
    const strict = await newOrg(server, 'strict');
    const p = expectResult(await strict.admin.post('/persons', { handles: [{ type: 'username', value: 'cy' }] }), 201).person_id as string;
    assert.equal((await strict.admin.patch('/organizations/config', { allowed_factor_methods: ['password'] })).status, 200);
    const value = await issue(strict, p);
    expectError(await redeem(strict, value), 403, 'direct_id');
    assert.equal(events(strict.id, 'AuthenticationFailed_v1').at(-1)?.['failure_reason'], 'method_not_allowed');
    assert.equal((await strict.admin.patch('/organizations/config', { allowed_factor_methods: ['password', 'direct_id'] })).status, 200);
    expectResult(await redeem(strict, value), 200);
  });

  test('refusals: unknown person 404, bad duration 400, inactive person 400, no key 401, bad body 400; nothing changes', async () => {
    await unchanged(org.admin, async () => {
      expectError(await org.admin.post('/persons/no-such-person/direct-id', { duration_secs: 60 }), 404, 'no-such-person');
      for (const duration_secs of [0, -1, 86_401, 1.5]) expectError(await org.admin.post(`/persons/${person}/direct-id`, { duration_secs }), 400, 'duration_secs');
      expectError(await org.admin.post(`/persons/${person}/direct-id`, {}), 400, 'duration_secs');
      expectError(await org.admin.post(`/persons/${person}/direct-id`, { duration_secs: 60, extra: 1 }), 400, 'extra');
      expectError(await org.user.post(`/persons/${person}/direct-id`, { duration_secs: 60 }), 401);
    }, server);
    const inactive = expectResult(await org.admin.post('/persons', { handles: [{ type: 'username', value: 'idle' }], active: false }), 201).person_id as string;
    await unchanged(org.admin, async () => expectError(await org.admin.post(`/persons/${inactive}/direct-id`, { duration_secs: 60 }), 400, 'not active'), server);
  });

  test('redemption refusals: an unknown value 401, a bad body 400, a value of another organization 401', async () => {
    const other = await newOrg(server, 'other');
    const theirs = await issue(other, expectResult(await other.admin.post('/persons', { handles: [{ type: 'username', value: 'eve' }] }), 201).person_id as string);
    expectError(await redeem(org, 'not-a-value'), 401, DIRECT_ID_REFUSED);
    expectError(await redeem(org, theirs), 401, DIRECT_ID_REFUSED);
    expectError(await org.user.post('/authenticate/direct-id', {}), 400, 'direct_id');
    expectError(await org.user.post('/authenticate/direct-id', { direct_id: '' }), 400, 'direct_id');
    expectResult(await redeem(other, theirs), 200);
  });

  test('after a restart: a used value stays used, an unused one still signs in once', async () => {
    const used = await issue(org, person);
    const kept = await issue(org, person);
    expectResult(await redeem(org, used), 200);
    await server.stop();
    await start();
    org = sameOrgOn(server, org);
    expectError(await redeem(org, used), 401, DIRECT_ID_REFUSED);
    expectResult(await redeem(org, kept), 200);
    expectError(await redeem(org, kept), 401, DIRECT_ID_REFUSED);
  });
});
