// max_age at the authorization endpoint (OpenID Connect Core 3.1.2.1) on the service's injected clock: a
// sign-in older than max_age shows the hosted form again, a younger one goes straight back with a code, and the
// ID token's auth_time is the time of the sign-in. The clock is moved, never waited for.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { newOrg, personWithPassword, type Org } from '../support/auth.js';
import { movableClock } from '../support/clock.js';
import { expectResult } from '../support/expect.js';
import { Browser, type Step } from '../support/oauth-browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

const REDIRECT = 'https://app.example/cb';
const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery staple';

describe('OAuth 2.0 authorization endpoint: max_age on the injected clock', () => {
  const clock = movableClock();
  let server: TestServer;
  let org: Org;
  let personId: string;
  let client: { client_id: string; client_secret: string };
  const verifier = randomBytes(32).toString('base64url');

  const authorizeUrl = (extra: Record<string, string> = {}) => {
    const url = new URL('/oauth2/authorize', server.base);
    const params = { response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, scope: 'openid', state: 'st', nonce: 'n', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', ...extra };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return url;
  };
  /** A redirect back to the client with a code, not the sign-in form. */
  const codeOf = (step: Step): string => {
    assert.equal(step.status, 302, `expected a redirect with a code, got ${step.status}: ${step.html.slice(0, 200)}`);
    const back = new URL(step.location as string);
    assert.equal(back.origin + back.pathname, REDIRECT);
    const code = back.searchParams.get('code');
    assert.ok(code, `no code in ${back.href}`);
    return code;
  };
  const isForm = (step: Step) => step.status === 200 && /<form method="post"/.test(step.html);
  /** The ID token's claims, verified against the published keys at the service's own time. */
  const exchange = async (code: string) => {
    const res = await fetch(`${server.base}/oauth2/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }).toString(),
    });
    const body = (await res.json()) as { id_token: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    const jwks = createLocalJWKSet((await server.client.get('/.well-known/jwks.json')).body);
    return (await jwtVerify(body.id_token, jwks, { issuer: server.base, audience: client.client_id, currentDate: new Date(clock.nowMs()) })).payload;
  };

  before(async () => {
    server = await startTestServer({}, { clock });
    org = await newOrg(server);
    personId = await personWithPassword(org, EMAIL, PASSWORD);
    client = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'Web', scopes: ['openid'], grant_types: ['authorization_code'], redirect_uris: [REDIRECT] }), 201);
  });
  after(() => server.stop());

  test('a sign-in older than max_age asks again; a younger one, or no max_age, goes straight back; auth_time is the sign-in', async () => {
    const browser = new Browser();
    const form = await browser.get(authorizeUrl({ max_age: '300' }));
    assert.ok(isForm(form), 'nobody signed in yet: the form');
    const signedInAt = Math.floor(clock.nowMs() / 1000);
    const first = await exchange(codeOf(await browser.signIn(form, server.base, EMAIL, PASSWORD)));
    assert.equal(first.sub, personId);
    const authTime = first['auth_time'] as number;
    assert.ok(authTime >= signedInAt && authTime <= Math.floor(clock.nowMs() / 1000), `auth_time ${authTime} is the sign-in's`);

    // Four minutes later: within max_age, no form; the session's auth_time, not the new request's time.
    clock.advance(240_000);
    const within = await exchange(codeOf(await browser.get(authorizeUrl({ max_age: '300' }))));
    assert.equal(within['auth_time'], authTime);

    // Over five minutes after the sign-in: max_age=300 shows the form again; without max_age the session holds.
    clock.advance(61_000);
    assert.ok(isForm(await browser.get(authorizeUrl({ max_age: '300' }))), 'older than max_age: the form again');
    assert.ok(isForm(await browser.get(authorizeUrl({ max_age: '0' }))), 'max_age=0: the form again');
    const without = await exchange(codeOf(await browser.get(authorizeUrl())));
    assert.equal(without['auth_time'], authTime, 'no max_age: the session is still good');
    codeOf(await browser.get(authorizeUrl({ max_age: '600' })));

    // Signing in again renews auth_time to the moved clock.
    const again = await browser.signIn(await browser.get(authorizeUrl({ max_age: '300' })), server.base, EMAIL, PASSWORD);
    const renewed = await exchange(codeOf(again));
    assert.ok((renewed['auth_time'] as number) >= authTime + 301, `auth_time ${renewed['auth_time']} after the move`);
    const fresh = await exchange(codeOf(await browser.get(authorizeUrl({ max_age: '300' }))));
    assert.equal(fresh['auth_time'], renewed['auth_time']);
    await browser.close();
  });

  test('a max_age that is not a non-negative integer goes back to the client as invalid_request', async () => {
    const browser = new Browser();
    for (const bad of ['-1', 'abc', '1.5', '1e3']) {
      const step = await browser.get(authorizeUrl({ max_age: bad }));
      assert.equal(step.status, 302, bad);
      const back = new URL(step.location as string);
      assert.equal(back.searchParams.get('error'), 'invalid_request', bad);
      assert.equal(back.searchParams.get('state'), 'st');
    }
    await browser.close();
  });
});
