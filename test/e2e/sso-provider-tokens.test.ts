// The tokens a person's SSO provider issued, kept per person and credential and served to the organization's
// backend: retrieved by the sign-in's identity token, queried, refreshed once expired, revoked at the provider
// (RFC 7009) and here, never in an event or a log line, sealed at rest, and forgotten with the person. Against
// the loopback OpenID provider of the SSO tests, whose own endpoints tell whether a token still works.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fetch } from 'undici';
import { recordEvents, sameOrgOn, verifyIdentityToken } from '../support/auth.js';
import { movableClock } from '../support/clock.js';
import { assertOriginalShape } from '../support/original.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { ssoSetup, type SsoSetup } from '../support/sso.js';
import { openStore } from '../../src/wal/store.js';

const APP = 'http://127.0.0.1:9/signed-in';
const clock = movableClock();
const dir = tempDir();
const logged: string[] = [];
let server: TestServer;
let events: ReturnType<typeof recordEvents>;
let s: SsoSetup;

before(async () => {
  server = await startTestServer(
    { SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_SECRETS_KEY: '5a'.repeat(32) },
    { clock, log: (m) => logged.push(String(m)), warn: (m) => logged.push(String(m)) },
    dir,
  );
  events = recordEvents(server);
  s = await ssoSetup(server, 'provider-tokens', APP);
});
after(async () => {
  await s.close();
  await server.stop();
  removeDir(dir);
});

type Detail = { token: string; token_type: string; expiry: string; provider: string; client_id: string; authentication_id: string; person_id: string; organization_id: string };

/** An SSO sign-in walked to its end: the identity token, its person and jti. */
async function signIn(): Promise<{ token: string; person_id: string; jti: string }> {
  const walk = await s.browser.walk(s.startUrl(), { stop: (u) => u.startsWith(APP) });
  const token = new URLSearchParams(new URL(walk.stoppedAt as string).hash.slice(1)).get('token') as string;
  assert.ok(token, walk.last.body);
  const claims = await verifyIdentityToken(server, token);
  return { token, person_id: claims.sub as string, jti: claims.jti as string };
}

/** Whether the provider still takes an access token: its userinfo endpoint answers 200 or 401. */
async function providerTakes(accessToken: string): Promise<boolean> {
  const res = await fetch(`${s.idp.issuer}/me`, { headers: { authorization: `Bearer ${accessToken}` } });
  await res.arrayBuffer();
  return res.status === 200;
}

/** The generic OpenID provider `service` is this service's own: the original's provider enum lacks it. */
const asOriginal = (body: { result: Detail[] }) => ({ ...body, result: body.result.map((d) => ({ ...d, provider: 'okta' })) });

const byType = (list: Detail[]) => Object.fromEntries(list.map((d) => [d.token_type, d]));

describe('SSO provider tokens', () => {
  test("GET /sso/oidc/tokens answers the provider's access, refresh and ID tokens of the sign-in behind Service-Token", async () => {
    const me = await signIn();
    const res = await s.org.admin.get('/sso/oidc/tokens', { 'Service-Token': me.token });
    assert.equal(res.status, 200, res.text);
    assertOriginalShape('GET /sso/oidc/tokens', 200, asOriginal(res.body));
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const got = byType(res.body.result);
    assert.deepEqual(Object.keys(got).sort(), ['access', 'id', 'refresh']);
    for (const d of res.body.result as Detail[]) {
      assert.deepEqual({ ...d, token: '', token_type: '', expiry: '' }, { token: '', token_type: '', expiry: '', provider: 'service', client_id: s.idp.clientId, authentication_id: me.jti, person_id: me.person_id, organization_id: s.org.id });
    }
    assert.ok(await providerTakes(got['access']!.token), 'a token the provider issued');
    assert.ok(Date.parse(got['access']!.expiry) > clock.nowMs());
    assert.equal(got['refresh']!.expiry, '0001-01-01T00:00:00Z');

    // Never in an event or a log line.
    const everything = JSON.stringify(events(s.org.id)) + logged.join('\n');
    for (const d of res.body.result as Detail[]) assert.equal(everything.includes(d.token), false, `${d.token_type} token leaked`);

    assert.equal((await s.org.admin.get('/sso/oidc/tokens')).status, 400, 'no Service-Token');
    for (const [method, path] of [['GET', '/sso/oidc/tokens'], ['POST', '/sso/oidc/tokens/query'], ['POST', '/sso/oidc/tokens/revoke/v2'], ['POST', '/sso/oidc/tokens/revoke']] as const) {
      const keyless = await s.org.admin.request(method, path, method === 'POST' ? { person_id: me.person_id } : undefined, { 'Service-API-Key': '', 'Service-Token': me.token });
      assert.equal(keyless.status, 401, `${method} ${path} without the API key`);
    }
    assert.equal((await s.org.admin.get('/sso/oidc/tokens', { 'Service-Token': 'not-a-token' })).status, 401);
    const minted = await s.org.admin.post(`/persons/${me.person_id}/mint-token`, {});
    assert.equal((await s.org.admin.get('/sso/oidc/tokens', { 'Service-Token': minted.body.result })).status, 404, 'a token no SSO sign-in issued');
  });

  test('query by person, authentication and type; an expired access token is refreshed with the refresh token first', async () => {
    const me = await signIn();
    const all = await s.org.admin.post('/sso/oidc/tokens/query', { person_id: me.person_id });
    assert.equal(all.status, 200, all.text);
    assertOriginalShape('POST /sso/oidc/tokens/query', 200, asOriginal(all.body));
    assert.equal(all.body.result.length, 3);
    const before = byType(all.body.result);
    const refreshOnly = await s.org.admin.post('/sso/oidc/tokens/query', { person_id: me.person_id, token_types: ['refresh'] });
    assert.deepEqual(refreshOnly.body.result, [before['refresh']]);
    assert.deepEqual((await s.org.admin.post('/sso/oidc/tokens/query', { person_id: me.person_id, authentication_ids: ['another'] })).body.result, []);
    assert.equal((await s.org.admin.post('/sso/oidc/tokens/query', { person_id: 'nobody' })).status, 404);
    assert.equal((await s.org.admin.post('/sso/oidc/tokens/query', { person_id: me.person_id, token_types: ['session'] })).status, 400);

    clock.advance(2 * 3600_000);
    const later = byType((await s.org.admin.post('/sso/oidc/tokens/query', { person_id: me.person_id, token_types: ['access'] })).body.result);
    assert.notEqual(later['access']!.token, before['access']!.token, 'refreshed');
    assert.ok(Date.parse(later['access']!.expiry) > clock.nowMs());
    assert.ok(await providerTakes(later['access']!.token));
  });

  test('revoke/v2 revokes at the provider and here; the deprecated revoke takes the token itself', async () => {
    const me = await signIn();
    const got = byType((await s.org.admin.get('/sso/oidc/tokens', { 'Service-Token': me.token })).body.result);
    const revoked = await s.org.admin.post('/sso/oidc/tokens/revoke/v2', { person_id: me.person_id, authentication_id: me.jti, token_types: ['access'] });
    assert.equal(revoked.status, 204, revoked.text);
    assert.equal(await providerTakes(got['access']!.token), false, 'revoked at the provider');
    assert.deepEqual(Object.keys(byType((await s.org.admin.post('/sso/oidc/tokens/query', { person_id: me.person_id })).body.result)).sort(), ['id', 'refresh']);
    assert.equal((await s.org.admin.post('/sso/oidc/tokens/revoke/v2', { person_id: me.person_id, authentication_id: 'never' })).status, 404);

    assert.equal((await s.org.admin.post('/sso/oidc/tokens/revoke', { client_id: s.idp.clientId, token: got['refresh']!.token, token_type: 'access' })).status, 400);
    const old = await s.org.admin.post('/sso/oidc/tokens/revoke', { client_id: s.idp.clientId, token: got['refresh']!.token, token_type: 'refresh_token' });
    assert.equal(old.status, 204, old.text);
    assert.deepEqual(Object.keys(byType((await s.org.admin.post('/sso/oidc/tokens/query', { person_id: me.person_id })).body.result)), ['id']);
    assert.equal((await s.org.admin.post('/sso/oidc/tokens/revoke', { client_id: s.idp.clientId, token: got['refresh']!.token, token_type: 'refresh_token' })).status, 404);
  });

  test('sealed at rest, and forgotten with the person', async () => {
    const me = await signIn();
    const got = byType((await s.org.admin.get('/sso/oidc/tokens', { 'Service-Token': me.token })).body.result);
    const deleted = await s.org.admin.delete(`/persons/${me.person_id}`);
    assert.equal(deleted.status, 204, deleted.text);
    const again = await signIn();
    assert.notEqual(again.person_id, me.person_id);
    await server.stop();
    const store = openStore(dir, 'local', true);
    try {
      const keys = [...store.ssoTokens.getKeys()].map(String);
      assert.equal(keys.some((k) => k.includes(me.person_id)), false, 'the deleted person has none');
      assert.equal(keys.some((k) => k.includes(again.person_id)), true);
      for (const { value } of store.ssoTokens.getRange()) {
        for (const d of Object.values(got)) assert.equal(Buffer.from(value).includes(d.token), false);
      }
    } finally {
      await store.close();
    }
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_SECRETS_KEY: '5a'.repeat(32) }, { clock }, dir);
    const kept = await sameOrgOn(server, s.org).admin.post('/sso/oidc/tokens/query', { person_id: again.person_id });
    assert.equal(kept.body.result.length, 3, 'kept across a restart');
  });
});
