// The authorization code flow end to end, with openid-client as the relying party and a form-walking browser
// on the hosted sign-in page: PKCE, the ID token and access token verified, userinfo, refresh rotation and
// reuse detection, the session cookie; and the security BCP's negatives: code replay, PKCE mismatch or missing,
// redirect_uri mismatch and open redirect attempts (no redirect), another client's refresh token.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { expectResult } from '../support/expect.js';
import { newOrg, personWithPassword, recordEvents, sameOrgOn, type Org } from '../support/auth.js';
import { Browser } from '../support/oauth-browser.js';
import { startFaultReceiver } from '../support/receivers.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';

const REDIRECT = 'https://app.example/cb';
const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery staple';

interface RegisteredClient {
  client_id: string;
  client_secret?: string;
}

describe('OAuth 2.0 authorization code flow', () => {
  let server: TestServer;
  let org: Org;
  let personId: string;
  let confidential: RegisteredClient;
  let publicClient: RegisteredClient;
  let events: ReturnType<typeof recordEvents>;
  const dataDir = tempDir();

  async function rp(c: RegisteredClient): Promise<oidc.Configuration> {
    const auth = c.client_secret === undefined ? oidc.None() : oidc.ClientSecretBasic(c.client_secret);
    return oidc.discovery(new URL(server.service.issuer), c.client_id, undefined, auth, { execute: [oidc.allowInsecureRequests] });
  }

  /** The authorization request of a relying party, and its checks for the callback. */
  function request(config: oidc.Configuration, extra: Record<string, string> = {}) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    return {
      verifier,
      state,
      nonce,
      url: async () => oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid email', state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...extra }),
    };
  }

  /** The browser goes through the hosted page and comes back to the client with a code. */
  async function signInThrough(browser: Browser, url: URL): Promise<URL> {
    const page = await browser.get(url);
    assert.equal(page.status, 200, page.html);
    const done = await browser.signIn(page, server.base, EMAIL, PASSWORD);
    assert.equal(done.status, 302, done.html);
    return new URL(done.location as string);
  }

  before(async () => {
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' }, {}, dataDir);
    events = recordEvents(server);
    org = await newOrg(server);
    personId = await personWithPassword(org, EMAIL, PASSWORD);
    assert.ok((await org.admin.post('/groups', { name: 'admins' })).status < 300);
    assert.equal((await org.admin.put(`/persons/${personId}/groups`, { groups: ['admins'] })).status, 200);
    const web = { client_name: 'Web app', scopes: ['openid', 'email', 'invoices.read'], grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT] };
    confidential = expectResult(await org.admin.post('/oauth2/clients', web), 201);
    publicClient = expectResult(await org.admin.post('/oauth2/clients', { ...web, client_name: 'SPA', public: true }), 201);
  });
  after(async () => {
    await server.stop();
    removeDir(dataDir);
  });

  test('code + PKCE through the hosted page: tokens verified by the library, userinfo, refresh rotation and reuse detection', async () => {
    const config = await rp(confidential);
    const browser = new Browser();
    const r = request(config);
    const callback = await signInThrough(browser, await r.url());
    assert.equal(callback.origin + callback.pathname, REDIRECT);
    assert.equal(callback.searchParams.get('state'), r.state);
    assert.ok(browser.cookies.has('oauth_session'), 'the browser is signed in at the hosted page');

    const minted = events(org.id, 'TokenMinted_v1').length;
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: r.verifier, expectedState: r.state, expectedNonce: r.nonce, idTokenExpected: true });
    const id = tokens.claims();
    assert.ok(id);
    assert.equal(id.sub, personId);
    assert.equal(id.aud, confidential.client_id);
    assert.equal(id.nonce, r.nonce);
    assert.equal(typeof id.auth_time, 'number');
    assert.equal(typeof id['at_hash'], 'string');
    assert.equal(id['email'], EMAIL);
    assert.deepEqual(id['groups'], ['admins']);
    assert.equal(events(org.id, 'TokenMinted_v1').length, minted + 2, 'the access token and the ID token each emit TokenMinted');

    // The access token as a resource server verifies it: RFC 9068, our published keys.
    const jwks = createLocalJWKSet((await server.client.get('/.well-known/jwks.json')).body);
    assert.equal(decodeProtectedHeader(tokens.access_token).typ, 'at+jwt');
    const { payload: at } = await jwtVerify(tokens.access_token, jwks, { issuer: server.service.issuer, typ: 'at+jwt' });
    assert.equal(at['client_id'], confidential.client_id);
    assert.equal(at['scope'], 'openid email');
    assert.equal(at.sub, personId);

    const info = await oidc.fetchUserInfo(config, tokens.access_token, personId);
    assert.deepEqual(info, { sub: personId, email: EMAIL, email_verified: false, groups: ['admins'] });

    assert.ok(tokens.refresh_token);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token);
    assert.ok(refreshed.refresh_token && refreshed.refresh_token !== tokens.refresh_token, 'a new refresh token on every use');
    assert.equal(refreshed.claims()?.sub, personId);
    // The rotated-away token again: the whole family is revoked, the newest refresh token and access tokens too.
    await assert.rejects(oidc.refreshTokenGrant(config, tokens.refresh_token), (e: any) => e.error === 'invalid_grant');
    await assert.rejects(oidc.refreshTokenGrant(config, refreshed.refresh_token), (e: any) => e.error === 'invalid_grant');
    const revoked = await fetch(`${server.base}/oauth2/userinfo`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    assert.equal(revoked.status, 401);
    assert.match(revoked.headers.get('www-authenticate') ?? '', /^Bearer .*error="invalid_token"/);

    // Signed in already: the next authorization needs no form, and prompt=none works; prompt=login asks again.
    const again = request(config);
    const direct = await browser.get(await again.url());
    assert.equal(direct.status, 302);
    assert.equal(new URL(direct.location as string).searchParams.get('state'), again.state);
    const silent = await browser.get(await request(config, { prompt: 'none' }).url());
    assert.ok(new URL(silent.location as string).searchParams.get('code'));
    const login = await browser.get(await request(config, { prompt: 'login' }).url());
    assert.equal(login.status, 200);
    await browser.close();
    // Nobody signed in: prompt=none goes back at once with login_required (OpenID Connect Core 3.1.2.6).
    const stranger = new Browser();
    const none = await stranger.get(await request(config, { prompt: 'none' }).url());
    assert.equal(new URL(none.location as string).searchParams.get('error'), 'login_required');
    await stranger.close();
  });

  test('a public client: PKCE required, a wrong verifier refused, and a replayed code revokes what it issued', async () => {
    const config = await rp(publicClient);
    const browser = new Browser();
    const r = request(config);
    const url = await r.url();

    const withoutPkce = new URL(url);
    withoutPkce.searchParams.delete('code_challenge');
    withoutPkce.searchParams.delete('code_challenge_method');
    const refused = await browser.get(withoutPkce);
    assert.equal(refused.status, 302);
    const back = new URL(refused.location as string);
    assert.equal(back.searchParams.get('error'), 'invalid_request');
    assert.equal(back.searchParams.get('state'), r.state);
    const plain = new URL(url);
    plain.searchParams.set('code_challenge_method', 'plain');
    assert.equal(new URL((await browser.get(plain)).location as string).searchParams.get('error'), 'invalid_request');

    const callback = await signInThrough(browser, url);
    await assert.rejects(
      oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: oidc.randomPKCECodeVerifier(), expectedState: r.state, expectedNonce: r.nonce }),
      (e: any) => e.error === 'invalid_grant',
    );
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: r.verifier, expectedState: r.state, expectedNonce: r.nonce });
    assert.equal((await oidc.fetchUserInfo(config, tokens.access_token, personId)).sub, personId);
    await assert.rejects(oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: r.verifier, expectedState: r.state, expectedNonce: r.nonce }), (e: any) => e.error === 'invalid_grant');
    const after = await fetch(`${server.base}/oauth2/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(after.status, 401, 'the replay revoked the access token the code issued');
    await assert.rejects(oidc.refreshTokenGrant(config, tokens.refresh_token as string), (e: any) => e.error === 'invalid_grant');
    await browser.close();
  });

  test('a redirect_uri not registered, or an unknown client, is refused on a page and never redirected', async () => {
    const config = await rp(confidential);
    const browser = new Browser();
    for (const target of ['https://evil.example/cb', `${REDIRECT}/../evil`, `${REDIRECT}?next=https://evil.example`, 'https://app.example/cb#x', 'https://app.example.evil.example/cb']) {
      const url = await request(config).url();
      url.searchParams.set('redirect_uri', target);
      const page = await browser.get(url);
      assert.equal(page.status, 400, target);
      assert.equal(page.location, undefined, `no redirect to ${target}`);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    }
    const unknown = await request(config).url();
    unknown.searchParams.set('client_id', 'no-such-client');
    const page = await browser.get(unknown);
    assert.equal(page.status, 400);
    assert.equal(page.location, undefined);
    await browser.close();
  });

  test('a refresh token of another client is refused and cannot be revoked by it; revoked by its own, its family is inactive', async () => {
    const config = await rp(confidential);
    const other = await rp(expectResult(await org.admin.post('/oauth2/clients', { client_name: 'Other', scopes: ['openid'], grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT] }), 201));
    const browser = new Browser();
    const r = request(config);
    const tokens = await oidc.authorizationCodeGrant(config, await signInThrough(browser, await r.url()), { pkceCodeVerifier: r.verifier, expectedState: r.state, expectedNonce: r.nonce });
    await assert.rejects(oidc.refreshTokenGrant(other, tokens.refresh_token as string), (e: any) => e.error === 'invalid_grant');
    const rotated = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    // RFC 7009: revoking the refresh token revokes its family, the access tokens included.
    await oidc.tokenRevocation(other, rotated.refresh_token as string);
    assert.ok((await oidc.tokenIntrospection(config, rotated.access_token)).active, 'another client cannot revoke it');
    await oidc.tokenRevocation(config, rotated.refresh_token as string);
    await assert.rejects(oidc.refreshTokenGrant(config, rotated.refresh_token as string), (e: any) => e.error === 'invalid_grant');
    assert.equal((await oidc.tokenIntrospection(config, rotated.access_token)).active, false);
    await browser.close();
  });

  test('the hosted page: a wrong password shows the form again and records AuthenticationFailed; the form is escaped', async () => {
    const config = await rp(confidential);
    const browser = new Browser();
    const url = await request(config, { login_hint: '"><script>alert(1)</script>' }).url();
    const page = await browser.get(url);
    assert.equal(page.status, 200);
    assert.equal(page.html.includes('<script>'), false);
    assert.match(page.html, /&quot;&gt;&lt;script&gt;/);
    const failed = events(org.id, 'AuthenticationFailed_v1').length;
    const wrong = await browser.signIn(page, server.base, EMAIL, 'not the password');
    assert.equal(wrong.status, 401);
    assert.match(wrong.html, /<form/);
    assert.equal(events(org.id, 'AuthenticationFailed_v1').length, failed + 1);
    // Without the browser's form cookie (another site posting the form), nothing is signed in.
    const stranger = new Browser();
    const forged = await stranger.signIn(page, server.base, EMAIL, PASSWORD);
    assert.equal(forged.status, 400);
    assert.equal(forged.location, undefined);
    await Promise.all([browser.close(), stranger.close()]);
  });

  test('the token_minted hooks run at the hosted sign-in: their claims reach the ID token, and a denial signs nobody in', async () => {
    const hooks = await startFaultReceiver();
    const own = await newOrg(server, 'hooked');
    const person = await personWithPassword(own, EMAIL, PASSWORD);
    const addHook = async (path: string) => {
      const w = await own.admin.post('/organizations/webhooks', { name: `hook ${path}`, target_url: hooks.url(path) });
      assert.equal((await own.admin.post(`/organizations/webhooks/${w.body.result.id}/triggers`, { trigger_type: 'sync_hook', trigger_name: 'token_minted' })).status, 201);
      return w.body.result.id as string;
    };
    const claims = await addHook('/claims/plan_pro');
    const app = expectResult(await own.admin.post('/oauth2/clients', { client_name: 'Hooked', scopes: ['openid'], grant_types: ['authorization_code'], redirect_uris: [REDIRECT] }), 201);
    const config = await rp(app);
    const browser = new Browser();
    const r = request(config, { scope: 'openid' });
    const page = await browser.get(await r.url());
    const done = await browser.signIn(page, server.base, EMAIL, PASSWORD);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location as string), { pkceCodeVerifier: r.verifier, expectedState: r.state, expectedNonce: r.nonce });
    assert.equal(tokens.claims()?.['plan_pro'], true);
    assert.equal(tokens.claims()?.sub, person);
    assert.equal(hooks.received.length, 1, 'the hooks ran once, at the sign-in');

    await own.admin.delete(`/organizations/webhooks/${claims}`);
    await addHook('/status/403');
    const denied = await browser.signIn(await browser.get(await request(config, { scope: 'openid', prompt: 'login' }).url()), server.base, EMAIL, PASSWORD);
    assert.equal(denied.status, 401);
    assert.equal(denied.location, undefined);
    assert.ok(events(own.id, 'AuthenticationFailed_v1').some((e) => e['failure_reason'] === 'hook_denied'));
    await browser.close();
    await hooks.close();
  });

  test('the hosted page links the SSO providers enabled for it, and only those', async () => {
    const sso = '/organizations/sso/oidc/provider-credentials';
    assert.equal((await org.admin.post(sso, { client_id: 'google-on', client_secret: 'a-secret-value', provider: 'google', label: 'Google', enable_in_slashid_oidc_authz_server: true })).status, 201);
    assert.equal((await org.admin.post(sso, { client_id: 'github-off', client_secret: 'a-secret-value', provider: 'github', label: 'GitHub' })).status, 201);
    const browser = new Browser();
    const page = await browser.get(await request(await rp(confidential)).url());
    const links = [...page.html.matchAll(/<a class="sso" href="([^"]+)">([^<]+)<\/a>/g)];
    assert.deepEqual(links.map((m) => m[2]), ['Sign in with Google']);
    const href = new URL((links[0]?.[1] as string).replace(/&amp;/g, '&'), server.base);
    assert.equal(href.pathname, '/authenticate/oidc/google-on/start');
    assert.equal(new URL(href.searchParams.get('redirect_uri') as string).pathname, '/oauth2/authorize', 'back to this authorization request');
    await browser.close();
  });

  test('grants survive a restart: the refresh token rotates afterwards, and a rotated one still revokes', async () => {
    const config = await rp(confidential);
    const browser = new Browser();
    const r = request(config);
    const tokens = await oidc.authorizationCodeGrant(config, await signInThrough(browser, await r.url()), { pkceCodeVerifier: r.verifier, expectedState: r.state, expectedNonce: r.nonce });
    await browser.close();
    await server.stop();
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' }, {}, dataDir);
    org = sameOrgOn(server, org);
    const again = await rp(confidential);
    const rotated = await oidc.refreshTokenGrant(again, tokens.refresh_token as string);
    assert.equal(rotated.claims()?.sub, personId);
    await assert.rejects(oidc.refreshTokenGrant(again, tokens.refresh_token as string), (e: any) => e.error === 'invalid_grant');
    await assert.rejects(oidc.refreshTokenGrant(again, rotated.refresh_token as string), (e: any) => e.error === 'invalid_grant');
  });

  test('userinfo: no token, a forged alg none token and an identity token are refused with WWW-Authenticate', async () => {
    const none = await fetch(`${server.base}/oauth2/userinfo`);
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="oauth2"');
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url');
    const body = Buffer.from(JSON.stringify({ iss: server.service.issuer, sub: personId, oid: org.id, scope: 'openid', client_id: confidential.client_id, exp: 9_999_999_999, iat: 1, jti: 'x', sid: 'x' })).toString('base64url');
    for (const token of [`${header}.${body}.`, (await org.admin.post(`/persons/${personId}/mint-token`, {})).body.result]) {
      const res = await fetch(`${server.base}/oauth2/userinfo`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.status, 401);
      assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    }
  });
});
