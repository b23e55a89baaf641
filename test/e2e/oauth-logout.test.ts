// Sessions and logout end to end, with openid-client as the relying parties and a form-walking browser: a
// sign-in at the hosted page opens a session that lists the clients that received tokens in it, survives a
// restart, and ends by RP-initiated logout (its refresh token refused, its access token inactive, the browser
// signed out), with a second client's receiver getting a logout token it verifies with jose, after a retry;
// the confirmation asked without an id_token_hint; the organization's and the person's own list and revoke;
// and the negatives: an unregistered post_logout_redirect_uri, a bad id_token_hint, a client_id not the hint's.
// An SSO sign-in (a loopback oidc-provider) opens a session too, holding the identity token it hands out; and
// a session and its end reach the replicas of the other regions.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { expectResult } from '../support/expect.js';
import { newOrg, personWithPassword, sameOrgOn, signIn, verifyIdentityToken, type Org } from '../support/auth.js';
import { ALL_REGIONS, caughtUp, startRegionServer, waitFor } from '../support/regions.js';
import { ssoSetup } from '../support/sso.js';
import { Browser } from '../support/oauth-browser.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';

const REDIRECT = 'https://app.example/cb';
const BYE = 'https://app.example/bye';
const EMAIL = 'grace@example.com';
const PASSWORD = 'correct horse battery staple';
const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

interface RegisteredClient {
  client_id: string;
  client_secret: string;
}

/** A client's back-channel logout receiver: refuses its first call (the service must retry), and while `down`; records the rest. */
async function startLogoutReceiver() {
  const bodies: string[] = [];
  let calls = 0;
  const state = { down: false };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += String(c)));
    req.on('end', () => {
      calls++;
      if (calls === 1 || state.down || req.headers['content-type'] !== 'application/x-www-form-urlencoded') return res.writeHead(503).end();
      bodies.push(body);
      res.writeHead(200, { 'cache-control': 'no-store' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/backchannel`,
    state,
    bodies,
    calls: () => calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Waits for something another process does on its own time (a delivery), without a fixed sleep. */
async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 3000; i++) {
    const v = probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('sessions and logout', () => {
  let server: TestServer;
  let org: Org;
  let personId: string;
  let app: RegisteredClient;
  let other: RegisteredClient;
  let receiver: Awaited<ReturnType<typeof startLogoutReceiver>>;
  const dataDir = tempDir();

  const rp = (c: RegisteredClient) => oidc.discovery(new URL(server.service.issuer), c.client_id, undefined, oidc.ClientSecretBasic(c.client_secret), { execute: [oidc.allowInsecureRequests] });

  /** The authorization code flow through the hosted page: the browser signs in unless its session is on. */
  async function codeFlow(config: oidc.Configuration, browser: Browser, email = EMAIL) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid email', state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    let step = await browser.get(url);
    if (step.status === 200) step = await browser.signIn(step, server.base, email, PASSWORD);
    assert.equal(step.status, 302, step.html);
    return oidc.authorizationCodeGrant(config, new URL(step.location as string), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  }

  const sessions = async (o: Org = org) => expectResult<Array<Record<string, any>>>(await o.admin.get(`/persons/${personId}/sessions`), 200);

  before(async () => {
    receiver = await startLogoutReceiver();
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_WEBHOOK_RETRY_BASE_MS: '5', SERVICE_WEBHOOK_RETRY_MAX_MS: '20' }, {}, dataDir);
    org = await newOrg(server);
    personId = await personWithPassword(org, EMAIL, PASSWORD);
    const web = { scopes: ['openid', 'email'], grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT] };
    app = expectResult(await org.admin.post('/oauth2/clients', { ...web, client_name: 'App', post_logout_redirect_uris: [BYE] }), 201);
    other = expectResult(await org.admin.post('/oauth2/clients', { ...web, client_name: 'Other', backchannel_logout_uri: receiver.url, backchannel_logout_session_required: true }), 201);
  });
  after(async () => {
    await server.stop();
    await receiver.close();
    removeDir(dataDir);
  });

  test('discovery lists the end-session endpoint and back-channel logout, as openid-client reads them', async () => {
    const meta = (await rp(app)).serverMetadata();
    assert.equal(meta.end_session_endpoint, `${server.service.issuer}/oauth2/logout`);
    assert.equal(meta['backchannel_logout_supported'], true);
    assert.equal(meta['backchannel_logout_session_supported'], true);
    const got = expectResult<Record<string, unknown>>(await org.admin.get(`/oauth2/clients/${other.client_id}`), 200);
    assert.equal(got['backchannel_logout_uri'], receiver.url);
    assert.equal(got['backchannel_logout_session_required'], true);
  });

  test('a sign-in opens a session of both clients; RP-initiated logout ends it, its tokens refused, the other client told', async () => {
    const appConfig = await rp(app);
    const otherConfig = await rp(other);
    const browser = new Browser();
    const appTokens = await codeFlow(appConfig, browser);
    const otherTokens = await codeFlow(otherConfig, browser);
    const appSid = appTokens.claims()?.['sid'];
    const otherSid = otherTokens.claims()?.['sid'];
    assert.equal(typeof appSid, 'string', 'ID tokens carry sid');
    assert.equal(typeof otherSid, 'string');

    const [session, ...more] = await sessions();
    assert.equal(more.length, 0, 'the second authorization used the same session');
    assert.ok(session);
    assert.deepEqual(session['clients'], [app.client_id, other.client_id]);
    assert.deepEqual(session['methods'], ['password']);
    assert.equal(session['person_id'], personId);
    assert.equal(session['ip_address'], '127.0.0.1');
    assert.equal(typeof session['user_agent'], 'string');
    assert.ok(Date.parse(session['last_used_at']) >= Date.parse(session['created_at']));

    // A session survives a restart: it is in the organization's state, through the WAL.
    await server.stop();
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_WEBHOOK_RETRY_BASE_MS: '5', SERVICE_WEBHOOK_RETRY_MAX_MS: '20' }, {}, dataDir);
    org = sameOrgOn(server, org);
    assert.deepEqual(await sessions(), [session]);
    const afterRestart = await rp(app);
    // The restarted server listens on another port, so another issuer: the refreshed ID token is of this one.
    const refreshed = await oidc.refreshTokenGrant(afterRestart, appTokens.refresh_token as string);
    assert.equal(refreshed.claims()?.['sid'], appSid, 'the grant keeps its sid');

    // The application logs the person out through the browser.
    const state = oidc.randomState();
    const logout = await browser.get(oidc.buildEndSessionUrl(afterRestart, { id_token_hint: refreshed.id_token as string, post_logout_redirect_uri: BYE, state }));
    assert.equal(logout.status, 302, logout.html);
    const back = new URL(logout.location as string);
    assert.equal(back.origin + back.pathname, BYE);
    assert.equal(back.searchParams.get('state'), state);
    assert.ok(!browser.cookies.has('oauth_session'), 'the browser is signed out at the hosted page');

    assert.deepEqual(await sessions(), [], 'the session is gone');
    await assert.rejects(oidc.refreshTokenGrant(afterRestart, refreshed.refresh_token as string), (e: any) => e.error === 'invalid_grant' && /session ended/.test(e.error_description));
    assert.equal((await oidc.tokenIntrospection(afterRestart, refreshed.access_token)).active, false, 'its access token is inactive');
    const userinfo = await fetch(`${server.base}/oauth2/userinfo`, { headers: { authorization: `Bearer ${otherTokens.access_token}` } });
    assert.equal(userinfo.status, 401, "the other client's access token of the session is refused too");
    await assert.rejects(oidc.refreshTokenGrant(await rp(other), otherTokens.refresh_token as string), (e: any) => e.error === 'invalid_grant');

    // The other client's receiver: refused once, so the logout token arrived on a retry, and verifies.
    const body = await until('the back-channel logout', () => receiver.bodies[0]);
    assert.ok(receiver.calls() >= 2, 'the first refusal was retried');
    const logoutToken = new URLSearchParams(body).get('logout_token') as string;
    assert.equal(decodeProtectedHeader(logoutToken).typ, 'logout+jwt');
    const jwks = createLocalJWKSet((await server.client.get('/.well-known/jwks.json')).body);
    const { payload } = await jwtVerify(logoutToken, jwks, { issuer: server.service.issuer, audience: other.client_id, typ: 'logout+jwt', requiredClaims: ['iat', 'exp', 'jti'] });
    assert.equal(payload.sub, personId);
    assert.equal(payload['sid'], otherSid, "the sid of the other client's ID token");
    assert.deepEqual((payload as JWTPayload & { events: unknown }).events, { [LOGOUT_EVENT]: {} });
    assert.equal(payload['nonce'], undefined, 'a logout token never carries a nonce');
    assert.equal(receiver.bodies.length, 1, 'the client that logged out is not told, and the other once');

    // Signing in again asks for the password.
    const page = await browser.get(oidc.buildAuthorizationUrl(afterRestart, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256' }));
    assert.equal(page.status, 200);
    await browser.close();
  });

  test('refused: an unregistered post_logout_redirect_uri, a bad id_token_hint, a client_id that is not the hint\'s; nothing ends', async () => {
    const config = await rp(app);
    const browser = new Browser();
    const tokens = await codeFlow(config, browser);
    const hint = tokens.id_token as string;
    const logoutUrl = (params: Record<string, string>) => {
      const url = new URL(`${server.base}/oauth2/logout`);
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      return url;
    };
    const [header, claims, signature] = hint.split('.') as [string, string, string];
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(claims, 'base64url').toString()), sub: 'someone-else' })).toString('base64url')}.${signature}`;
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['unregistered post_logout_redirect_uri', { id_token_hint: hint, post_logout_redirect_uri: 'https://evil.example/bye' }, /is not one of the client.*registered post_logout_redirect_uris/],
      ['a redirect URI of the client, not a post-logout one', { id_token_hint: hint, post_logout_redirect_uri: REDIRECT }, /post_logout_redirect_uris/],
      ['post_logout_redirect_uri without a client', { post_logout_redirect_uri: BYE }, /needs client_id or id_token_hint/],
      ['a garbage id_token_hint', { id_token_hint: 'not.a.token' }, /id_token_hint is not an ID token issued by this server/],
      ['an altered id_token_hint', { id_token_hint: forged, post_logout_redirect_uri: BYE }, /id_token_hint is not an ID token/],
      ['an access token as id_token_hint', { id_token_hint: tokens.access_token }, /id_token_hint is not an ID token/],
      ['a client_id that is not the hint\'s', { id_token_hint: hint, client_id: other.client_id }, /client_id is not the client the id_token_hint was issued to/],
      ['an unknown client', { client_id: 'no-such-client' }, /no such client/],
    ];
    for (const [name, params, message] of cases) {
      const refused = await browser.get(logoutUrl(params));
      assert.equal(refused.status, 400, name);
      assert.equal(refused.location, undefined, `${name}: no redirect`);
      assert.match(refused.html, message, name);
    }
    assert.equal((await sessions()).length, 1, 'the session is still on');
    assert.ok((await oidc.refreshTokenGrant(config, tokens.refresh_token as string)).access_token);
    assert.ok(browser.cookies.has('oauth_session'));
    await browser.close();
  });

  test('without an id_token_hint the person confirms; the form is bound to the browser', async () => {
    const config = await rp(app);
    const browser = new Browser();
    const tokens = await codeFlow(config, browser);
    const before = (await sessions()).length;
    // Nobody signed in in this browser: nothing to end, the signed-out page.
    const stranger = new Browser();
    const nothing = await stranger.get(`${server.base}/oauth2/logout`);
    assert.equal(nothing.status, 200);
    assert.match(nothing.html, /signed out/);
    await stranger.close();

    const ask = await browser.get(`${server.base}/oauth2/logout?client_id=${app.client_id}&post_logout_redirect_uri=${encodeURIComponent(BYE)}&state=s1`);
    assert.equal(ask.status, 200);
    assert.match(ask.html, /Sign out of/);
    const fields = Object.fromEntries([...ask.html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1] as string, m[2] as string]));
    // Another site's form post: the browser's check cookie is not the form's.
    const forged = await browser.postForm(`${server.base}/oauth2/logout/confirm`, { ...fields, csrf: 'x' });
    assert.equal(forged.status, 400);
    assert.equal((await sessions()).length, before);
    const done = await browser.postForm(`${server.base}/oauth2/logout/confirm`, fields);
    assert.equal(done.status, 302, done.html);
    assert.equal(done.location, `${BYE}?state=s1`);
    assert.equal((await sessions()).length, before - 1);
    await assert.rejects(oidc.refreshTokenGrant(config, tokens.refresh_token as string), (e: any) => e.error === 'invalid_grant');
    await browser.close();
  });

  test("the organization ends a person's session with its API key; the person lists and ends their own with their token", async () => {
    for (const s of await sessions()) assert.equal((await org.admin.delete(`/persons/${personId}/sessions/${s['session_id']}`)).status, 204);
    const config = await rp(app);
    const laptop = new Browser();
    const phone = new Browser();
    const lost = await codeFlow(config, laptop);
    const kept = await codeFlow(config, phone);
    const [newest, oldest] = await sessions();
    assert.ok(newest && oldest);

    const token = expectResult<{ token: string }>(await signIn(org, EMAIL, PASSWORD), 200).token;
    const bearer = { authorization: `Bearer ${token}` };
    const own = await fetch(`${server.base}/sessions`, { headers: bearer });
    assert.equal(own.status, 200);
    assert.deepEqual(((await own.json()) as { result: Array<{ session_id: string }> }).result.map((s: { session_id: string }) => s.session_id), [newest['session_id'], oldest['session_id']]);
    const ended = await fetch(`${server.base}/sessions/${oldest['session_id']}`, { method: 'DELETE', headers: bearer });
    assert.equal(ended.status, 204);
    await assert.rejects(oidc.refreshTokenGrant(config, lost.refresh_token as string), (e: any) => e.error === 'invalid_grant');
    assert.ok((await oidc.refreshTokenGrant(config, kept.refresh_token as string)).access_token, 'the other session goes on');
    assert.equal((await fetch(`${server.base}/sessions/${oldest['session_id']}`, { method: 'DELETE', headers: bearer })).status, 404);
    assert.equal((await fetch(`${server.base}/sessions`)).status, 401);

    // Another person's token cannot see or end this person's sessions.
    await personWithPassword(org, 'mallory@example.com', PASSWORD);
    const mallory = expectResult<{ token: string }>(await signIn(org, 'mallory@example.com', PASSWORD), 200).token;
    const theirs = await fetch(`${server.base}/sessions/${newest['session_id']}`, { method: 'DELETE', headers: { authorization: `Bearer ${mallory}` } });
    assert.equal(theirs.status, 404);

    assert.equal((await org.admin.delete(`/persons/${personId}/sessions/${newest['session_id']}`)).status, 204);
    assert.deepEqual(await sessions(), []);
    assert.equal((await org.admin.delete(`/persons/${personId}/sessions/${newest['session_id']}`)).status, 404);
    assert.equal((await org.admin.get('/persons/no-such-person/sessions')).status, 404);
    // The phone's browser signs in again.
    const page = await phone.get(oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256' }));
    assert.equal(page.status, 200);

    // DELETE /session: the SDK's sign-out revokes the token it holds.
    assert.equal((await fetch(`${server.base}/session`, { method: 'DELETE', headers: bearer })).status, 204);
    assert.equal((await fetch(`${server.base}/sessions`, { headers: bearer })).status, 401);
    await laptop.close();
    await phone.close();
  });

  test('deactivating a person signs them out everywhere: their sessions end and their clients are told', async () => {
    const linus = await personWithPassword(org, 'linus@example.com', PASSWORD);
    const browser = new Browser();
    const tokens = await codeFlow(await rp(other), browser, 'linus@example.com');
    const told = receiver.bodies.length;
    assert.equal(expectResult<unknown[]>(await org.admin.get(`/persons/${linus}/sessions`), 200).length, 1);
    expectResult(await org.admin.patch(`/persons/${linus}`, { active: false }), 200);
    assert.deepEqual(expectResult(await org.admin.get(`/persons/${linus}/sessions`), 200), []);
    const body = await until('the back-channel logout of the deactivated person', () => receiver.bodies[told]);
    const jwks = createLocalJWKSet((await server.client.get('/.well-known/jwks.json')).body);
    const { payload } = await jwtVerify(new URLSearchParams(body).get('logout_token') as string, jwks, { issuer: server.service.issuer, audience: other.client_id, typ: 'logout+jwt' });
    assert.equal(payload.sub, linus);
    assert.equal(payload['sid'], tokens.claims()?.['sid']);
    await browser.close();
  });
});

describe('sessions of SSO sign-ins', () => {
  const APP = 'http://127.0.0.1:9/signed-in';
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
  });
  after(async () => {
    await server.stop();
    removeDir(server.dataDir);
  });

  test('an SSO sign-in opens a session holding its token: ended by the organization, or by the token signing out (the SDK)', async () => {
    const s = await ssoSetup(server, 'sso-sessions', APP);
    try {
      const signInOnce = async () => {
        const walk = await s.browser.walk(s.startUrl(), { stop: (u) => u.startsWith(APP) });
        const token = new URLSearchParams(new URL(walk.stoppedAt as string).hash.slice(1)).get('token');
        assert.ok(token, `the walk ended at ${walk.last.status} ${walk.last.url}`);
        return token;
      };
      const valid = async (token: string) => (await server.client.post('/token/validate', { token }, { 'Service-OrgID': '', 'Service-API-Key': '' })).body.result.valid as boolean;
      const first = await signInOnce();
      const personId = (await verifyIdentityToken(server, first)).sub as string;
      const [session] = expectResult<Array<Record<string, any>>>(await s.org.admin.get(`/persons/${personId}/sessions`), 200);
      assert.ok(session);
      assert.deepEqual(session['methods'], ['oidc']);
      assert.deepEqual(session['clients'], []);
      assert.equal(session['expires_at'], new Date(((await verifyIdentityToken(server, first)).exp as number) * 1000).toISOString(), 'it lasts as long as its token');
      assert.equal(await valid(first), true);
      assert.equal((await s.org.admin.delete(`/persons/${personId}/sessions/${session['session_id']}`)).status, 204);
      assert.equal(await valid(first), false, "the session's token is revoked with it");

      // The SDK's sign-out with the token: its session ends too.
      const second = await signInOnce();
      assert.equal(expectResult<unknown[]>(await s.org.admin.get(`/persons/${personId}/sessions`), 200).length, 1);
      assert.equal((await fetch(`${server.base}/session`, { method: 'DELETE', headers: { authorization: `Bearer ${second}` } })).status, 204);
      assert.deepEqual(expectResult<unknown[]>(await s.org.admin.get(`/persons/${personId}/sessions`), 200), []);
      assert.equal(await valid(second), false);
    } finally {
      await s.close();
    }
  });
});

describe('sessions across regions', () => {
  let server: TestServer;
  before(async () => {
    server = await startRegionServer();
    await waitFor(() => caughtUp(server.base), 30_000, 'the links to stream');
  });
  after(async () => {
    await server.stop();
    removeDir(server.dataDir);
  });

  test("a session and its end reach every region's replica through the WAL", async () => {
    const org = await newOrg(server, 'regions');
    const personId = await personWithPassword(org, EMAIL, PASSWORD);
    const client = expectResult<RegisteredClient>(await org.admin.post('/oauth2/clients', { client_name: 'App', scopes: ['openid'], grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT] }), 201);
    const config = await oidc.discovery(new URL(server.service.issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), { execute: [oidc.allowInsecureRequests] });
    const browser = new Browser();
    const verifier = oidc.randomPKCECodeVerifier();
    const page = await browser.get(oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }));
    const back = await browser.signIn(page, server.base, EMAIL, PASSWORD);
    await oidc.authorizationCodeGrant(config, new URL(back.location as string), { pkceCodeVerifier: verifier });
    await browser.close();
    const [session] = expectResult<Array<{ session_id: string }>>(await org.admin.get(`/persons/${personId}/sessions`), 200);
    assert.ok(session);
    // An all_regions write after it: every replica has applied the entries before it too.
    assert.equal((await org.admin.post('/groups', { name: 'after-sign-in' }, ALL_REGIONS)).status, 201);
    for (const region of ['us-iowa', 'asia-japan']) assert.deepEqual(server.service.regions.replica(region)?.state(org.id)?.sessions.get(session.session_id)?.clients, [client.client_id], region);
    assert.equal((await org.admin.delete(`/persons/${personId}/sessions/${session.session_id}`, ALL_REGIONS)).status, 204);
    for (const region of ['us-iowa', 'asia-japan']) assert.equal(server.service.regions.replica(region)?.state(org.id)?.sessions.has(session.session_id), false, region);
  });
});

describe('back-channel logouts owed across a restart', () => {
  const dataDir = tempDir();
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startLogoutReceiver>>;
  before(async () => {
    receiver = await startLogoutReceiver();
  });
  after(async () => {
    await server.stop();
    await receiver.close();
    removeDir(dataDir);
  });

  test('a logout the receiver refused is still owed after a restart, and delivered then', async () => {
    // A retry a minute away: the service stops while the delivery waits for it.
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_WEBHOOK_RETRY_BASE_MS: '60000', SERVICE_WEBHOOK_RETRY_MAX_MS: '60000' }, {}, dataDir);
    let org = await newOrg(server, 'restart');
    const personId = await personWithPassword(org, EMAIL, PASSWORD);
    const client = expectResult<RegisteredClient>(await org.admin.post('/oauth2/clients', { client_name: 'Listener', scopes: ['openid'], grant_types: ['authorization_code'], redirect_uris: [REDIRECT], backchannel_logout_uri: receiver.url }), 201);
    const config = await oidc.discovery(new URL(server.service.issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), { execute: [oidc.allowInsecureRequests] });
    const browser = new Browser();
    const verifier = oidc.randomPKCECodeVerifier();
    const page = await browser.get(oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }));
    const tokens = await oidc.authorizationCodeGrant(config, new URL((await browser.signIn(page, server.base, EMAIL, PASSWORD)).location as string), { pkceCodeVerifier: verifier });
    await browser.close();
    const [session] = expectResult<Array<{ session_id: string }>>(await org.admin.get(`/persons/${personId}/sessions`), 200);
    receiver.state.down = true;
    assert.equal((await org.admin.delete(`/persons/${personId}/sessions/${session?.session_id}`)).status, 204);
    await until('the refused attempt', () => (receiver.calls() >= 1 ? true : undefined));
    assert.equal(receiver.bodies.length, 0);
    await server.stop();

    receiver.state.down = false;
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' }, {}, dataDir);
    org = sameOrgOn(server, org);
    const body = await until('the owed logout after the restart', () => receiver.bodies[0]);
    const jwks = createLocalJWKSet((await server.client.get('/.well-known/jwks.json')).body);
    const { payload } = await jwtVerify(new URLSearchParams(body).get('logout_token') as string, jwks, { issuer: server.service.issuer, audience: client.client_id, typ: 'logout+jwt' });
    assert.equal(payload['sid'], tokens.claims()?.['sid']);
    await until('the logout recorded as done', () => (server.service.registry.get(org.id)?.state.backchannel_logouts.size === 0 ? true : undefined));
  });
});
