// Pushed authorization requests (RFC 9126) on the real server: openid-client pushes (with a secret, with
// private_key_jwt, as a public client) and completes the code flow through the hosted page; a client that
// requires PAR is refused a plain request; and the negatives: a request_uri used twice, after expiry (the
// manual clock), by another client, pushed requests that the authorization endpoint would refuse, bad
// credentials at the push endpoint, and parameters beside request_uri ignored. Pushed requests outlive a
// restart, and one used is refused again after another.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import * as oidc from 'openid-client';
import { expectError, expectResult } from '../support/expect.js';
import { newOrg, personWithPassword, sameOrgOn, type Org } from '../support/auth.js';
import { movableClock } from '../support/clock.js';
import { Browser } from '../support/oauth-browser.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';

const REDIRECT = 'https://app.example/cb';
const EMAIL = 'grace@example.com';
const PASSWORD = 'correct horse battery staple';
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

describe('Pushed authorization requests (RFC 9126)', () => {
  const clock = movableClock();
  let server: TestServer;
  let org: Org;
  let confidential: { client_id: string; client_secret: string };
  let publicClient: { client_id: string };
  let signed: { client_id: string };
  let signingKey: CryptoKey;

  const rp = (clientId: string, auth: oidc.ClientAuth) => oidc.discovery(new URL(server.base), clientId, undefined, auth, { execute: [oidc.allowInsecureRequests] });
  const push = async (form: Record<string, string>, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.base}/oauth2/par`, { method: 'POST', headers: { ...FORM, ...headers }, body: new URLSearchParams(form).toString() });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text), headers: res.headers };
  };
  const pkce = async () => {
    const verifier = oidc.randomPKCECodeVerifier();
    return { verifier, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' };
  };
  /** What the authorization endpoint answers a browser: the sign-in page, a redirect, or an error page. */
  const authorize = async (query: Record<string, string>) => {
    const browser = new Browser();
    const step = await browser.get(`${server.base}/oauth2/authorize?${new URLSearchParams(query)}`);
    await browser.close();
    return step;
  };

  before(async () => {
    server = await startTestServer({}, { clock });
    org = await newOrg(server);
    await personWithPassword(org, EMAIL, PASSWORD);
    const web = { client_name: 'Web app', scopes: ['openid', 'email'], grant_types: ['authorization_code'], redirect_uris: [REDIRECT] };
    confidential = expectResult(await org.admin.post('/oauth2/clients', web), 201);
    publicClient = expectResult(await org.admin.post('/oauth2/clients', { ...web, client_name: 'SPA', public: true }), 201);
    const pair = await generateKeyPair('ES256', { extractable: true });
    signingKey = pair.privateKey;
    signed = expectResult(
      await org.admin.post('/oauth2/clients', {
        ...web,
        client_name: 'Bank',
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'bank-1', alg: 'ES256' }] },
        require_pushed_authorization_requests: true,
      }),
      201,
    );
  });
  after(() => server.stop());

  test('discovery names the endpoint, and openid-client reads it', async () => {
    const meta = (await rp(confidential.client_id, oidc.ClientSecretBasic(confidential.client_secret))).serverMetadata();
    assert.equal(meta.pushed_authorization_request_endpoint, `${server.base}/oauth2/par`);
    assert.equal(meta.require_pushed_authorization_requests, false, 'offered to all, required per client');
    const client = expectResult(await org.admin.get(`/oauth2/clients/${signed.client_id}`), 200);
    assert.equal(client.require_pushed_authorization_requests, true);
    assert.equal(expectResult(await org.admin.get(`/oauth2/clients/${confidential.client_id}`), 200).require_pushed_authorization_requests, false);
  });

  for (const kind of ['client_secret_basic', 'private_key_jwt (PAR required)', 'public client'] as const) {
    test(`openid-client pushes, the browser signs in with the request_uri, the code is redeemed: ${kind}`, async () => {
      const config =
        kind === 'client_secret_basic'
          ? await rp(confidential.client_id, oidc.ClientSecretBasic(confidential.client_secret))
          : kind === 'public client'
            ? await rp(publicClient.client_id, oidc.None())
            : await rp(signed.client_id, oidc.PrivateKeyJwt({ key: signingKey, kid: 'bank-1' }));
      const { verifier, ...challenge } = await pkce();
      const state = oidc.randomState();
      const url = await oidc.buildAuthorizationUrlWithPAR(config, { redirect_uri: REDIRECT, scope: 'openid email', state, ...challenge });
      assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri']);
      assert.match(url.searchParams.get('request_uri') ?? '', /^urn:ietf:params:oauth:request_uri:/);
      const browser = new Browser();
      const page = await browser.get(url);
      assert.equal(page.status, 200, page.html);
      const done = await browser.signIn(page, server.base, EMAIL, PASSWORD);
      assert.equal(done.status, 302, done.html);
      await browser.close();
      const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location as string), { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
      assert.equal(tokens.claims()?.['email'], EMAIL);
    });
  }

  test('a client that requires PAR is refused a plain authorization request, back at its redirect_uri', async () => {
    const step = await authorize({ response_type: 'code', client_id: signed.client_id, redirect_uri: REDIRECT, scope: 'openid', state: 's1', ...(await pkce()) });
    assert.equal(step.status, 302);
    const back = new URL(step.location as string);
    assert.equal(back.searchParams.get('error'), 'invalid_request');
    assert.match(back.searchParams.get('error_description') ?? '', /must push its authorization requests/);
    assert.equal(back.searchParams.get('state'), 's1');
  });

  test('a request_uri is single-use, expires after 60 seconds, and is only for the client that pushed it', async () => {
    const form = { client_id: publicClient.client_id, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', ...(await pkce()) };
    const first = await push(form);
    assert.equal(first.status, 201, first.text);
    assert.equal(first.body.expires_in, 60);
    assert.equal(first.headers.get('cache-control'), 'no-store');
    const uri = first.body.request_uri as string;
    // another client naming it neither uses it nor uses it up
    const stranger = await authorize({ client_id: confidential.client_id, request_uri: uri });
    assert.equal(stranger.status, 400);
    assert.match(stranger.html, /invalid_request_uri/);
    assert.equal((await authorize({ client_id: publicClient.client_id, request_uri: uri })).status, 200, 'the sign-in page');
    const twice = await authorize({ client_id: publicClient.client_id, request_uri: uri });
    assert.equal(twice.status, 400, 'used twice');
    assert.match(twice.html, /invalid_request_uri/);
    assert.match(twice.html, /used already/);

    const late = await push(form);
    clock.advance(61_000);
    const expired = await authorize({ client_id: publicClient.client_id, request_uri: late.body.request_uri });
    assert.equal(expired.status, 400, 'after its lifetime');
    assert.match(expired.html, /expired/);
    const missingClient = await authorize({ request_uri: (await push(form)).body.request_uri });
    assert.equal(missingClient.status, 400);
    assert.match(missingClient.html, /client_id is required/);
    const unknown = await authorize({ client_id: publicClient.client_id, request_uri: 'urn:ietf:params:oauth:request_uri:nope' });
    assert.equal(unknown.status, 400);
  });

  test('only the pushed parameters count: others beside request_uri are ignored', async () => {
    const form = { client_id: publicClient.client_id, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', state: 'pushed-state', prompt: 'none', ...(await pkce()) };
    const { request_uri } = (await push(form)).body;
    const step = await authorize({ client_id: publicClient.client_id, request_uri, state: 'forged', redirect_uri: 'https://evil.example/cb' });
    assert.equal(step.status, 302);
    const back = new URL(step.location as string);
    assert.equal(back.origin + back.pathname, REDIRECT);
    assert.equal(back.searchParams.get('state'), 'pushed-state');
    assert.equal(back.searchParams.get('error'), 'login_required', 'the pushed prompt=none, nobody signed in');
  });

  test('the push endpoint checks the request and the client as the authorization and token endpoints do, in RFC 6749 5.2 form', async () => {
    const good = { response_type: 'code', redirect_uri: REDIRECT, scope: 'openid' };
    const auth = { Authorization: basic(confidential.client_id, confidential.client_secret) };
    const wrongSecret = await push(good, { Authorization: basic(confidential.client_id, 'wrong') });
    assert.deepEqual([wrongSecret.status, wrongSecret.body.error], [401, 'invalid_client']);
    const noAuth = await push(good);
    assert.deepEqual([noAuth.status, noAuth.body.error], [401, 'invalid_client']);
    const redirect = await push({ ...good, redirect_uri: 'https://evil.example/cb' }, auth);
    assert.deepEqual([redirect.status, redirect.body.error], [400, 'invalid_request']);
    assert.match(redirect.body.error_description, /redirect_uri/);
    const nested = await push({ ...good, request_uri: 'urn:ietf:params:oauth:request_uri:x' }, auth);
    assert.deepEqual([nested.status, nested.body.error], [400, 'invalid_request']);
    const scope = await push({ ...good, scope: 'openid payroll.admin' }, auth);
    assert.deepEqual([scope.status, scope.body.error], [400, 'invalid_scope']);
    const type = await push({ ...good, response_type: 'token' }, auth);
    assert.deepEqual([type.status, type.body.error], [400, 'unsupported_response_type']);
    const other = await push({ ...good, client_id: publicClient.client_id }, auth);
    assert.deepEqual([other.status, other.body.error], [400, 'invalid_request']);
    const noPkce = await push({ ...good, client_id: publicClient.client_id });
    assert.deepEqual([noPkce.status, noPkce.body.error], [400, 'invalid_request']);
    assert.match(noPkce.body.error_description, /PKCE/);
    const ok = await push(good, auth);
    assert.equal(ok.status, 201, ok.text);
  });

  test('a pushed request\'s sign-in page sends an SSO sign-in back through a fresh request_uri', async () => {
    const form = { client_id: publicClient.client_id, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', state: 'via-sso', ...(await pkce()) };
    const links = (html: string) => [...html.matchAll(/<a class="sso" href="([^"]+)">/g)].map((m) => new URL((m[1] as string).replace(/&amp;/g, '&'), server.base));
    const plain = await authorize({ client_id: publicClient.client_id, request_uri: (await push(form)).body.request_uri });
    assert.equal(plain.status, 200);
    assert.deepEqual(links(plain.html), [], 'no SSO button');
    const sso = '/organizations/sso/oidc/provider-credentials';
    assert.equal((await org.admin.post(sso, { client_id: 'par-google', client_secret: 'a-secret-value', provider: 'google', label: 'Google', enable_in_slashid_oidc_authz_server: true })).status, 201);
    const page = await authorize({ client_id: publicClient.client_id, request_uri: (await push(form)).body.request_uri });
    assert.equal(page.status, 200);
    const back = new URL(links(page.html)[0]?.searchParams.get('redirect_uri') as string);
    assert.deepEqual([...back.searchParams.keys()].sort(), ['client_id', 'request_uri']);
    // the fresh reference stands for the same request: with nobody signed in, the sign-in page again
    const again = await authorize(Object.fromEntries(back.searchParams));
    assert.equal(again.status, 200, again.html);
    assert.match(again.html, /Sign in/);
    assert.ok([200, 204].includes((await org.admin.delete(`${sso}/par-google`)).status));
  });

  test('require_pushed_authorization_requests is set and cleared with PATCH', async () => {
    expectError(await org.admin.patch(`/oauth2/clients/${confidential.client_id}`, { require_pushed_authorization_requests: 'yes' }), 400, 'require_pushed_authorization_requests');
    assert.equal(expectResult(await org.admin.patch(`/oauth2/clients/${confidential.client_id}`, { require_pushed_authorization_requests: true }), 200).require_pushed_authorization_requests, true);
    const refused = await authorize({ response_type: 'code', client_id: confidential.client_id, redirect_uri: REDIRECT, scope: 'openid' });
    assert.equal(new URL(refused.location as string).searchParams.get('error'), 'invalid_request');
    assert.equal(expectResult(await org.admin.patch(`/oauth2/clients/${confidential.client_id}`, { require_pushed_authorization_requests: false }), 200).require_pushed_authorization_requests, false);
    assert.equal((await authorize({ response_type: 'code', client_id: confidential.client_id, redirect_uri: REDIRECT, scope: 'openid' })).status, 200);
  });
});

describe('Pushed authorization requests across restarts', () => {
  const dir = tempDir();
  let server: TestServer | undefined;
  const base = () => (server as TestServer).base;
  after(async () => {
    await server?.stop();
    removeDir(dir);
  });

  test('a request_uri pushed before a restart signs in after it, once: used, it is refused after another restart', async () => {
    server = await startTestServer({}, {}, dir);
    const org = await newOrg(server);
    await personWithPassword(org, EMAIL, PASSWORD);
    const client = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'Web app', scopes: ['openid', 'email'], grant_types: ['authorization_code'], redirect_uris: [REDIRECT] }), 201);
    const pushed = await fetch(`${server.base}/oauth2/par`, {
      method: 'POST',
      headers: { ...FORM, Authorization: basic(client.client_id, client.client_secret) },
      body: new URLSearchParams({ response_type: 'code', redirect_uri: REDIRECT, scope: 'openid email', state: 'kept' }).toString(),
    });
    assert.equal(pushed.status, 201);
    const { request_uri } = (await pushed.json()) as { request_uri: string };
    const url = () => `${base()}/oauth2/authorize?${new URLSearchParams({ client_id: client.client_id, request_uri })}`;

    await server.stop();
    server = await startTestServer({}, {}, dir);
    const browser = new Browser();
    const page = await browser.get(url());
    assert.equal(page.status, 200, page.html);
    const done = await browser.signIn(page, server.base, EMAIL, PASSWORD);
    assert.equal(done.status, 302, done.html);
    assert.equal(new URL(done.location as string).searchParams.get('state'), 'kept');
    await browser.close();
    const config = await oidc.discovery(new URL(server.base), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), { execute: [oidc.allowInsecureRequests] });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location as string), { expectedState: 'kept', idTokenExpected: true });
    assert.equal(tokens.claims()?.['email'], EMAIL);

    await server.stop();
    server = await startTestServer({}, {}, dir);
    assert.equal(expectResult(await sameOrgOn(server, org).admin.get(`/oauth2/clients/${client.client_id}`), 200).client_id, client.client_id);
    const late = new Browser();
    const again = await late.get(url());
    await late.close();
    assert.equal(again.status, 400, 'used before the restart');
    assert.match(again.html, /invalid_request_uri/);
  });
});
