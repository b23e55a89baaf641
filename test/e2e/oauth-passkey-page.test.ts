// The hosted OAuth sign-in page asks a passkey holder for the passkey as the second factor, in Debian's
// chromium with the DevTools protocol's virtual authenticator. The service's issuer is
// http://login.shop.localhost:<port>; the organization's site is shop.localhost, where the person registers a
// passkey (RP ID shop.localhost) with the browser client. The hosted page, on a subdomain of that RP ID, runs its
// one script (allowed by hash; any other refused by its policy) and ends with a code whose ID token says
// amr ["pwd", "hwk", "mfa"]. Each step's page is photographed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import type { BrowserContext } from 'playwright-core';
import { expectNoContent, expectResult } from '../support/expect.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { newOrg, personWithPassword, type Org } from '../support/auth.js';
import { launchBrowser, screenshot } from '../support/browser.js';

const PASSWORD = 'correct horse battery';
const dir = tempDir();
let server: TestServer;
let issuer: string;
let pages: Server;
let pagePort: number;
let browser: BrowserContext;
/** The client's redirect URI, on the organization's page server (which answers anything) */
let REDIRECT: string;

/** A loopback port free now, for the service to listen on under its issuer's host name. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

before(async () => {
  const port = await freePort();
  issuer = `http://login.shop.localhost:${port}`;
  server = await startTestServer({ SERVICE_PORT: String(port), SERVICE_ISSUER: issuer }, {}, dir);
  pages = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><meta charset="utf-8"><title>shop</title><h1>Shop</h1>'));
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pagePort = (pages.address() as AddressInfo).port;
  REDIRECT = `http://127.0.0.1:${pagePort}/callback`;
  browser = await launchBrowser(dir, { hosts: ['shop.localhost', 'login.shop.localhost'] });
});
after(async () => {
  await browser?.close();
  pages?.close();
  await server.stop();
  removeDir(dir);
});

describe('the hosted sign-in page with a passkey as second factor', () => {
  let org: Org;
  let clientId: string;

  test('password, then the passkey on the hosted page (its one script allowed by hash), then a code whose ID token says pwd, hwk and mfa', async (t) => {
    org = await newOrg(server, 'shop');
    expectNoContent(await org.admin.post('/organizations/config/domains', { domains: ['shop.localhost'] }));
    const person = await personWithPassword(org, 'ada@example.com', PASSWORD);
    const client = expectResult<{ client_id: string; client_secret: string }>(
      await org.admin.post('/oauth2/clients', { client_name: 'Shop', scopes: ['openid'], grant_types: ['authorization_code'], redirect_uris: [REDIRECT] }),
      201,
    );
    clientId = client.client_id;

    // The person registers a passkey on the organization's site with the browser client.
    const page = await browser.newPage();
    const cdp = await browser.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await page.goto(`http://shop.localhost:${pagePort}/`);
    const registered = await page.evaluate(
      async ([api, orgId, password]) => {
        const { ServiceSDK } = await import(`${api}/sdk/service-sdk.js`);
        const sdk = new ServiceSDK({ baseUrl: api, orgId });
        await sdk.signIn({ handle: { type: 'email_address', value: 'ada@example.com' }, password });
        const passkey = await sdk.registerPasskey({ label: 'laptop' });
        await sdk.logout();
        return passkey;
      },
      [issuer, org.id, PASSWORD] as const,
    );
    assert.equal(registered.type, 'public-key');
    await screenshot(t, page, join(dir, '1-passkey-registered.png'));

    // The application sends the browser to the hosted page; the password step asks for the passkey.
    const authorize = new URL(`${issuer}/oauth2/authorize`);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, scope: 'openid', state: 'st-1', nonce: 'n-1' })) authorize.searchParams.set(k, v);
    await page.goto(authorize.href);
    await page.fill('#handle', 'ada@example.com');
    await page.fill('#password', PASSWORD);
    const [second] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/oauth2/authorize/sign-in')), page.click('button[type=submit]')]);
    assert.equal(second.status(), 200);
    const csp = (await second.allHeaders())['content-security-policy'] ?? '';
    assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/]+=*'$/, csp);
    assert.match(csp, /default-src 'none'/);
    assert.doesNotMatch(csp, /script-src[^;]*unsafe/);
    await page.waitForSelector('#passkey');
    assert.equal(await page.locator('#code').count(), 0, 'no code form: the person holds no TOTP');
    await screenshot(t, page, join(dir, '2-asked-for-passkey.png'));
    // Any script but the page's own is refused by the policy.
    await assert.rejects(page.addScriptTag({ content: 'window.injected = true;' }));
    assert.equal(await page.evaluate(() => (globalThis as { injected?: boolean }).injected), undefined);

    // The passkey answers; the page posts the assertion and the browser goes back with a code.
    await Promise.all([page.waitForURL((u) => u.href.startsWith(REDIRECT)), page.click('#passkey')]);
    const back = new URL(page.url());
    assert.equal(back.searchParams.get('state'), 'st-1');
    const code = back.searchParams.get('code');
    assert.ok(code, back.href);
    await screenshot(t, page, join(dir, '3-back-with-code.png'));

    const res = await fetch(`${server.base}/oauth2/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }),
    });
    const body = (await res.json()) as { id_token?: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    const idToken = decodeJwt(body.id_token as string);
    assert.equal(idToken.sub, person);
    assert.deepEqual(idToken['amr'], ['pwd', 'hwk', 'mfa']);
    await page.close();
  });

  test('an assertion the page did not make is refused, and the page asks again', async (t) => {
    // The session of the sign-in before would answer at once: prompt=login asks again.
    const page = await browser.newPage();
    const authorize = new URL(`${issuer}/oauth2/authorize`);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, scope: 'openid', state: 'st-2', prompt: 'login' })) authorize.searchParams.set(k, v);
    await page.goto(authorize.href);
    await page.fill('#handle', 'ada@example.com');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForSelector('#passkey'), page.click('button[type=submit]')]);
    // A forged answer in place of the script's: not JSON of an assertion made here.
    await page.evaluate(() => {
      const form = (globalThis as any).document.getElementById('passkey-form');
      form.elements.webauthn.value = JSON.stringify({ id: 'AAAA', rawId: 'AAAA', type: 'public-key', clientExtensionResults: {}, response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' } });
      form.submit();
    });
    await page.waitForSelector('.error');
    assert.match((await page.textContent('.error')) ?? '', /passkey/i);
    assert.equal(await page.locator('#passkey').count(), 1, 'the passkey is offered again');
    await screenshot(t, page, join(dir, '4-forged-refused.png'));
    await page.close();
  });
});
