// The device authorization grant (RFC 8628) on the real server: openid-client as the device (a public client
// and a confidential one), the user code entered in Debian's chromium on the hosted sign-in, and the refusals
// oidc-provider's tests make: a device code polled too fast (slow_down), pending, denied, expired, reused, of
// another client; a wrong user code on the page; and device codes kept across a restart. Time moves on the
// injected clock, never by sleeping, except openid-client's own polling interval.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { calculateJwkThumbprint, createLocalJWKSet, decodeJwt, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import type { BrowserContext } from 'playwright-core';
import { expectResult } from '../support/expect.js';
import { newOrg, personWithPassword, sameOrgOn, type Org } from '../support/auth.js';
import { launchBrowser, screenshot } from '../support/browser.js';
import { movableClock } from '../support/clock.js';
import { Browser, type Step } from '../support/oauth-browser.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery staple';

interface Registered {
  client_id: string;
  client_secret?: string;
}

interface DeviceCode {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

describe('device authorization grant (RFC 8628)', () => {
  const clock = movableClock();
  const dataDir = tempDir();
  let dir: string;
  let server: TestServer;
  let org: Org;
  let personId: string;
  /** a TV app: public, with refresh tokens */
  let tv: Registered;
  /** a CLI: confidential */
  let cli: Registered;
  let chromium: BrowserContext | undefined;

  const auth = (c: Registered): Record<string, string> =>
    c.client_secret === undefined ? {} : { Authorization: `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}` };
  const form = (c: Registered, fields: Record<string, string>) => new URLSearchParams({ ...(c.client_secret === undefined && { client_id: c.client_id }), ...fields }).toString();
  const post = async (path: string, c: Registered, fields: Record<string, string>) => {
    const res = await fetch(server.base + path, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...auth(c) }, body: form(c, fields) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: JSON.parse(text) as Record<string, any> };
  };
  const start = async (c: Registered, scope = 'openid') => {
    const r = await post('/oauth2/device_authorization', c, { scope });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body as DeviceCode;
  };
  const poll = (c: Registered, device_code: string) => post('/oauth2/tokens', c, { grant_type: GRANT, device_code });
  const pollError = async (c: Registered, device_code: string, error: string) => {
    const r = await poll(c, device_code);
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body['error'], error, r.body['error_description']);
    return r.body['error_description'] as string;
  };
  /** past the poll interval (and any slow_down's), so that the next poll is on time */
  const wait = (seconds = 30) => clock.advance(seconds * 1000);

  /** The person answers the code in a plain HTTP browser: the code, the hosted sign-in, then allow or deny. */
  async function answer(userCode: string, decision: 'allow' | 'deny', browser = new Browser()): Promise<Step> {
    let step = await browser.get(`${server.base}/oauth2/device?user_code=${encodeURIComponent(userCode)}`);
    if (step.html.includes('id="password"')) {
      step = await browser.signIn(step, server.base, EMAIL, PASSWORD);
      assert.equal(step.status, 302, step.html.slice(0, 300));
      step = await browser.get(new URL(step.location as string, server.base));
    }
    assert.equal(step.status, 200, step.html.slice(0, 500));
    const confirm = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(step.html);
    assert.ok(confirm, step.html.slice(0, 500));
    const fields: Record<string, string> = {};
    for (const m of (confirm[2] as string).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1] as string] = m[2] as string;
    return browser.postForm(new URL(confirm[1] as string, server.base), { ...fields, decision });
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'oauth-device-'));
    server = await startTestServer({}, { clock }, dataDir);
    org = await newOrg(server, 'Device Org');
    personId = await personWithPassword(org, EMAIL, PASSWORD);
    tv = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'Living-room TV', scopes: ['tv.watch'], grant_types: [GRANT, 'refresh_token'], public: true }), 201);
    cli = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'CLI', scopes: [], grant_types: [GRANT] }), 201);
  });
  after(async () => {
    await chromium?.close();
    await server?.stop();
    removeDir(dataDir);
    if (process.env['KEEP_SCREENSHOTS'] !== '1') rmSync(dir, { recursive: true, force: true });
  });

  test('discovery lists the device authorization endpoint and the grant type', async () => {
    const config = await oidc.discovery(new URL(server.base), tv.client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const meta = config.serverMetadata();
    assert.equal(meta.device_authorization_endpoint, `${server.base}/oauth2/device_authorization`);
    assert.ok(meta.grant_types_supported?.includes(GRANT));
    assert.ok(meta.grant_types_supported?.includes('urn:ietf:params:oauth:grant-type:token-exchange'));
  });

  test('openid-client as the device; the person enters the user code in chromium, signs in and allows it; the device gets its tokens', async (t) => {
    const config = await oidc.discovery(new URL(server.base), tv.client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid email tv.watch' });
    assert.match(device.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(device.verification_uri, `${server.base}/oauth2/device`);
    assert.equal(device.verification_uri_complete, `${server.base}/oauth2/device?user_code=${device.user_code}`);
    assert.equal(device.expires_in, 600);
    assert.equal(device.interval, 5);
    // The device polls while the person goes to the page, as a TV would.
    const polled = oidc.pollDeviceAuthorizationGrant(config, device);

    chromium = await launchBrowser(dir);
    const page = await chromium.newPage();
    page.on('console', (m) => t.diagnostic(`console ${m.type()}: ${m.text()}`));
    await page.goto(device.verification_uri);
    // Typed as a person would: lower case, without the dash.
    await page.fill('#user_code', device.user_code.replace('-', '').toLowerCase());
    await page.click('button[type="submit"]');
    await page.waitForSelector('input#password');
    assert.equal(await page.textContent('h1'), 'Sign in to Device Org');
    assert.match((await page.textContent('body')) ?? '', /Living-room TV on your device/);
    await page.fill('#handle', EMAIL);
    await page.fill('#password', PASSWORD);
    await page.click('button[type="submit"]');
    await page.waitForSelector('#allow');
    assert.equal(await page.textContent('#user_code'), device.user_code);
    assert.equal(await page.textContent('h1'), 'Allow Living-room TV?');
    await screenshot(t, page, join(dir, 'device-confirm.png'));
    await page.click('#allow');
    await page.waitForSelector('#done');
    assert.equal(await page.textContent('#done'), 'Device connected');
    await page.close();

    const tokens = await polled;
    assert.equal(tokens.token_type.toLowerCase(), 'bearer');
    assert.equal(tokens.scope, 'openid email tv.watch');
    assert.ok(tokens.refresh_token, 'a client with the refresh_token grant gets a refresh token');
    const jwks = createLocalJWKSet((await server.client.get('/.well-known/jwks.json')).body);
    const id = await jwtVerify(tokens.id_token as string, jwks, { issuer: server.base, audience: tv.client_id });
    assert.equal(id.payload.sub, personId);
    assert.equal(id.payload['email'], EMAIL);
    assert.deepEqual(id.payload['amr'], ['pwd']);
    const access = await jwtVerify(tokens.access_token, jwks, { issuer: server.base, typ: 'at+jwt' });
    assert.equal(access.payload.sub, personId);
    assert.equal(access.payload['client_id'], tv.client_id);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, personId);
    assert.equal(info.sub, personId);
    // The grant refreshes like the authorization code's.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    assert.ok(refreshed.access_token);
  });

  test('a person holding TOTP: the password, then the second step asks for the code (oathtool\'s), then the confirmation; the ID token says otp and mfa', async (t) => {
    const email = 'grace@example.com';
    const person = await personWithPassword(org, email, PASSWORD);
    const headers = { authorization: `Bearer ${expectResult<string>(await org.admin.post(`/persons/${person}/mint-token`, {}), 201)}` };
    const enrollment = expectResult<{ credential_id: string; key_uri: string }>(await org.user.post('/register/totp', {}, headers), 201);
    const secret = new URL(enrollment.key_uri).searchParams.get('secret') as string;
    const oathtool = () => execFileSync('oathtool', ['--totp', '--base32', secret, '--now', `@${Math.floor(clock.nowMs() / 1000)}`], { encoding: 'utf8' }).trim();
    // 5 s into a time step, so that a code made now stays good while the test runs.
    const startOfStep = () => clock.advance(35_000 - (clock.nowMs() % 30_000));
    startOfStep();
    expectResult(await org.user.post('/register/totp/confirm', { credential_id: enrollment.credential_id, code: oathtool() }, headers), 200);
    clock.advance(30_000);

    const config = await oidc.discovery(new URL(server.base), tv.client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid email' });
    const polled = oidc.pollDeviceAuthorizationGrant(config, device);
    // Awaited below; a failure on the page must not leave it unhandled.
    polled.catch(() => undefined);
    // A browser of its own: no session of the first test's person.
    const context = await launchBrowser(dir);
    try {
      const page = await context.newPage();
      page.on('console', (m) => t.diagnostic(`console ${m.type()}: ${m.text()}`));
      await page.goto(device.verification_uri_complete as string);
      await page.waitForSelector('input#password');
      await page.fill('#handle', email);
      await page.fill('#password', PASSWORD);
      const [second] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/oauth2/device/sign-in')), page.click('button[type="submit"]')]);
      assert.equal(second.status(), 200);
      // The hosted page's second step: its policy allows the passkey script by hash, nothing else.
      assert.match((await second.headerValue('content-security-policy')) ?? '', /script-src 'sha256-[A-Za-z0-9+/=]+'$/);
      await page.waitForSelector('input#code');
      assert.match((await page.textContent('body')) ?? '', /Living-room TV on your device: enter the code your authenticator app shows/);
      assert.equal(await page.getAttribute('form:has(#code)', 'action'), '/oauth2/device/second-factor');
      await screenshot(t, page, join(dir, 'device-second-factor.png'));
      // A code two steps old: the step again, with the reason.
      startOfStep();
      await page.fill('#code', execFileSync('oathtool', ['--totp', '--base32', secret, '--now', `@${Math.floor(clock.nowMs() / 1000) - 90}`], { encoding: 'utf8' }).trim());
      await page.click('form:has(#code) button[type="submit"]');
      await page.waitForSelector('p.error');
      assert.ok(await page.isVisible('input#code'));
      await page.fill('#code', oathtool());
      await page.click('form:has(#code) button[type="submit"]');
      await page.waitForSelector('#allow');
      assert.equal(await page.textContent('#user_code'), device.user_code);
      await page.click('#allow');
      await page.waitForSelector('#done');
      assert.equal(await page.textContent('#done'), 'Device connected');
    } finally {
      await context.close();
    }

    const tokens = await polled;
    const jwks = createLocalJWKSet((await server.client.get('/.well-known/jwks.json')).body);
    const id = await jwtVerify(tokens.id_token as string, jwks, { issuer: server.base, audience: tv.client_id });
    assert.equal(id.payload.sub, person);
    assert.deepEqual(id.payload['amr'], ['pwd', 'otp', 'mfa']);
    const access = decodeJwt(tokens.access_token);
    assert.deepEqual(access['authenticated_methods'], ['password', 'totp']);
  });

  test('polled before the person answered: authorization_pending; too fast: slow_down, and the interval grows by 5 s', async () => {
    const device = await start(cli, '');
    await pollError(cli, device.device_code, 'authorization_pending');
    assert.match(await pollError(cli, device.device_code, 'slow_down'), /5 seconds longer/);
    // The interval is now 10 s: 6 s later is still too fast.
    clock.advance(6_000);
    await pollError(cli, device.device_code, 'slow_down');
    // 15 s after the last poll is on time (the interval is 15 s by now).
    clock.advance(15_000);
    await pollError(cli, device.device_code, 'authorization_pending');
  });

  test('denied by the person: access_denied; the code cannot be answered again', async () => {
    const device = await start(cli, '');
    const done = await answer(device.user_code, 'deny');
    assert.equal(done.status, 200);
    assert.match(done.html, /Device refused/);
    await pollError(cli, device.device_code, 'access_denied');
    const again = await new Browser().get(`${server.base}/oauth2/device?user_code=${device.user_code}`);
    assert.equal(again.status, 400);
    assert.match(again.html, /unknown, expired or already used/);
  });

  test('allowed, redeemed once; polled again: invalid_grant, and the tokens of the first redemption are revoked', async () => {
    const device = await start(cli, 'openid');
    const done = await answer(device.user_code, 'allow');
    assert.match(done.html, /Device connected/);
    wait();
    const first = await poll(cli, device.device_code);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const introspect = async () =>
      (await post('/oauth2/tokens/introspect', cli, { token: first.body['access_token'] })).body['active'];
    assert.equal(await introspect(), true);
    wait();
    assert.match(await pollError(cli, device.device_code, 'invalid_grant'), /already used/);
    assert.equal(await introspect(), false);
  });

  test('a poll with a DPoP proof gets an access token bound to the proof\'s key (RFC 9449 5)', async () => {
    const device = await start(cli, 'openid');
    assert.match((await answer(device.user_code, 'allow')).html, /Device connected/);
    wait();
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(publicKey);
    const url = `${server.base}/oauth2/tokens`;
    const proof = await new SignJWT({ jti: randomUUID(), htm: 'POST', htu: url, iat: Math.floor(clock.nowMs() / 1000) }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).sign(privateKey);
    const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...auth(cli), DPoP: proof }, body: form(cli, { grant_type: GRANT, device_code: device.device_code }) });
    const body = (await res.json()) as { access_token: string; token_type: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.token_type, 'DPoP');
    assert.deepEqual(decodeJwt(body.access_token)['cnf'], { jkt: await calculateJwkThumbprint(jwk) });
  });

  test('past its expiry the code is expired_token, and the page no longer takes it', async () => {
    const device = await start(cli, '');
    clock.advance(device.expires_in * 1000 + 1000);
    await pollError(cli, device.device_code, 'expired_token');
    const page = await new Browser().get(`${server.base}/oauth2/device?user_code=${device.user_code}`);
    assert.equal(page.status, 400);
  });

  test("another client's device code, an unknown one, none: invalid_grant / invalid_request", async () => {
    const device = await start(cli, '');
    wait();
    await pollError(tv, device.device_code, 'invalid_grant');
    await pollError(cli, 'no-such-code', 'invalid_grant');
    const none = await post('/oauth2/tokens', cli, { grant_type: GRANT });
    assert.equal(none.body['error'], 'invalid_request');
  });

  test('the device endpoint refuses a client not registered for the grant, an unknown scope, a wrong secret', async () => {
    const machine: Registered = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'machine', scopes: [], grant_types: ['client_credentials'] }), 201);
    const notRegistered = await post('/oauth2/device_authorization', machine, {});
    assert.equal(notRegistered.status, 400);
    assert.equal(notRegistered.body['error'], 'unauthorized_client');
    const scope = await post('/oauth2/device_authorization', tv, { scope: 'admin' });
    assert.equal(scope.body['error'], 'invalid_scope');
    const wrong = await post('/oauth2/device_authorization', { client_id: cli.client_id, client_secret: 'wrong' }, {});
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body['error'], 'invalid_client');
  });

  test('a wrong user code is told on the page; a form from another browser is refused', async () => {
    const browser = new Browser();
    const wrong = await browser.get(`${server.base}/oauth2/device?user_code=BBBB-BBBB`);
    assert.equal(wrong.status, 400);
    assert.match(wrong.html, /That code is unknown/);
    const device = await start(cli, '');
    const signInPage = await browser.get(`${server.base}/oauth2/device?user_code=${device.user_code}`);
    // The same form posted without this browser's cookie (another site submitting it) is refused.
    const stranger = new Browser();
    const forged = await stranger.signIn(signInPage, server.base, EMAIL, PASSWORD);
    assert.equal(forged.status, 400);
    assert.match(forged.html, /did not come from this browser/);
    await pollError(cli, device.device_code, 'authorization_pending');
  });

  test('an address that enters too many wrong codes waits (429 with Retry-After), even for a right one; the wait ends', async () => {
    const device = await start(cli, '');
    const browser = new Browser();
    let last: Step | undefined;
    for (let i = 0; i < 20; i++) last = await browser.get(`${server.base}/oauth2/device?user_code=XXXX-XXX${'BCDFGHJKLMNPQRSTVWXZ'[i]}`);
    assert.ok(last);
    const blocked = await browser.get(`${server.base}/oauth2/device?user_code=${device.user_code}`);
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    assert.match(blocked.html, /Too many wrong codes/);
    clock.advance(5 * 60_000);
    const again = await browser.get(`${server.base}/oauth2/device?user_code=${device.user_code}`);
    assert.equal(again.status, 200);
    assert.match(again.html, /id="password"/);
  });

  test("the device's grant belongs to the sign-in session of the page where it was allowed: ending that session revokes its tokens, and a code allowed in a session ended since is refused", async () => {
    const sessions = async () => expectResult<Array<Record<string, any>>>(await org.admin.get(`/persons/${personId}/sessions`), 200);
    const device = await start(cli, 'openid');
    const browser = new Browser();
    assert.match((await answer(device.user_code, 'allow', browser)).html, /Device connected/);
    // The sign-in on the device page opened a session of its own, newest first.
    const [session] = await sessions();
    assert.ok(session);
    assert.deepEqual(session['clients'], []);
    wait();
    const tokens = await poll(cli, device.device_code);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.deepEqual((await sessions()).find((s) => s['session_id'] === session['session_id'])?.['clients'], [cli.client_id]);
    const active = async () => (await post('/oauth2/tokens/introspect', cli, { token: tokens.body['access_token'] })).body['active'];
    assert.equal(await active(), true);
    assert.equal((await org.admin.delete(`/persons/${personId}/sessions/${session['session_id']}`)).status, 204);
    assert.equal(await active(), false);
    // The browser's cookie outlives its session, which no longer counts: the page asks for a sign-in again.
    const next = await start(cli, 'openid');
    assert.match((await browser.get(`${server.base}/oauth2/device?user_code=${encodeURIComponent(next.user_code)}`)).html, /id="password"/);

    // Allowed, then the session ended before the device polled: that sign-in no longer vouches for it.
    assert.match((await answer(next.user_code, 'allow', new Browser())).html, /Device connected/);
    const [allowedIn] = await sessions();
    assert.ok(allowedIn);
    assert.equal((await org.admin.delete(`/persons/${personId}/sessions/${allowedIn['session_id']}`)).status, 204);
    wait();
    assert.match(await pollError(cli, next.device_code, 'invalid_grant'), /sign-in session .* ended/);
  });

  test('device codes are durable: issued before a restart, answered and redeemed after it', async () => {
    const device = await start(cli, 'openid');
    await server.stop();
    server = await startTestServer({}, { clock }, dataDir);
    org = sameOrgOn(server, org);
    const done = await answer(device.user_code, 'allow');
    assert.match(done.html, /Device connected/);
    wait();
    const tokens = await poll(cli, device.device_code);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.ok(tokens.body['id_token']);
  });
});
