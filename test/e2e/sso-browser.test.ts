// SSO sign-in in a real browser: Debian's chromium, driven by playwright-core, clicks through the sample page of
// scripts/sso-sample.ts, the service and a loopback OpenID provider, and photographs the signed-in page.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { startSamplePage, type SamplePage } from '../../scripts/sso-sample.js';
import { emailHandle, newOrg, personWithPassword, verifyIdentityToken, type Org } from '../support/auth.js';
import { expectBare, expectResult } from '../support/expect.js';
import { DEFAULT_ACCOUNT, startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.js';
import { launchBrowser, screenshot } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** What the signed-in page shows once its script has read the fragment. */
async function signedInPage(page: Page): Promise<{ state: string; status: string; person: string; token: string }> {
  await page.waitForSelector('body[data-state]');
  return {
    state: (await page.getAttribute('body', 'data-state')) ?? '',
    status: (await page.textContent('#status')) ?? '',
    person: (await page.textContent('#person')) ?? '',
    token: await page.inputValue('#token'),
  };
}

describe('SSO sample page in chromium', () => {
  let dir: string;
  let server: TestServer;
  let org: Org;
  let sample: SamplePage;
  let browser: BrowserContext;

  before(async () => {
    // Set KEEP_SCREENSHOTS=1 to keep the folder (and its screenshots) after the run.
    dir = mkdtempSync(join(tmpdir(), 'sso-browser-'));
    server = await startTestServer();
    org = await newOrg(server, 'sample');
    sample = await startSamplePage({ serviceUrl: server.base, orgId: org.id, clientId: 'sample-client' });
    browser = await launchBrowser(dir);
  });
  after(async () => {
    await browser?.close();
    await sample?.close();
    await server?.stop();
    if (process.env['KEEP_SCREENSHOTS'] !== '1') rmSync(dir, { recursive: true, force: true });
  });

  test("the sign-in button links to the service's start URL with the organization and the page's redirect URI", async () => {
    const page = await browser.newPage();
    await page.goto(sample.url);
    const button = page.locator('#sign-in');
    assert.equal(await button.textContent(), 'Sign in with SSO');
    const href = new URL((await button.getAttribute('href')) ?? '');
    assert.equal(href.origin, server.base);
    assert.equal(href.pathname, '/authenticate/oidc/sample-client/start');
    assert.equal(href.searchParams.get('org_id'), org.id);
    assert.equal(href.searchParams.get('redirect_uri'), sample.signedInUrl);
    await page.close();
  });

  test('the signed-in page shows the person of the token in its fragment, and takes the token out of the address', async (t) => {
    const personId = await personWithPassword(org, 'grace@example.com', 'correct horse battery staple');
    const token = expectResult<string>(await org.admin.post(`/persons/${personId}/mint-token`, {}), 201);
    const page = await browser.newPage();
    await page.goto(`${sample.signedInUrl}#token=${token}`);
    const shown = await signedInPage(page);
    assert.deepEqual(shown, { state: 'signed-in', status: `Signed in as ${personId}`, person: personId, token });
    assert.equal(new URL(page.url()).hash, '', 'the token stays in the address bar');
    assert.equal((await verifyIdentityToken(server, shown.token))['person_id'], personId);
    const claims = JSON.parse((await page.textContent('#claims')) ?? '');
    assert.equal(claims.person_id, personId);
    await screenshot(t, page, join(dir, 'signed-in-minted.png'));
    await page.close();
  });

  test('an error in the fragment is shown as a failed sign-in', async () => {
    const page = await browser.newPage();
    await page.goto(`${sample.signedInUrl}#error=access_denied&error_description=the+person+declined`);
    const shown = await signedInPage(page);
    assert.equal(shown.state, 'failed');
    assert.equal(shown.status, 'Sign-in failed: access_denied (the person declined)');
    await page.close();
  });
});

describe('SSO sign-in in chromium, through a loopback OpenID provider', () => {
  let dir: string;
  let server: TestServer;
  let org: Org;
  let provider: TestOidcProvider;
  let sample: SamplePage;
  let browser: BrowserContext;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sso-browser-'));
    // The provider is plain http on loopback, which only this setting lets a `service` credential name.
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
    org = await newOrg(server, 'sso');
    provider = await startOidcProvider({ redirectUris: [`${server.base}/authenticate/oidc/callback`] });
    expectBare(
      await org.admin.post('/organizations/sso/oidc/provider-credentials', {
        client_id: provider.clientId,
        client_secret: provider.clientSecret,
        provider: 'service',
        options: { service: { organization_url: provider.issuer } },
      }),
      201,
    );
    sample = await startSamplePage({ serviceUrl: server.base, orgId: org.id, clientId: provider.clientId });
    expectResult(await org.admin.patch('/organizations/config', { sso_allowed_redirect_uris: [sample.signedInUrl] }), 200);
    browser = await launchBrowser(dir);
  });
  after(async () => {
    await browser?.close();
    await sample?.close();
    await provider?.stop();
    await server?.stop();
    if (process.env['KEEP_SCREENSHOTS'] !== '1') rmSync(dir, { recursive: true, force: true });
  });

  test('click "Sign in with SSO", log in and consent at the provider, land signed in as the person with that email', async (t) => {
    const personId = expectResult<{ person_id: string }>(await org.admin.post('/persons', { handles: [emailHandle(DEFAULT_ACCOUNT.email)] }), 201).person_id;
    const page = await browser.newPage();
    await page.goto(sample.url);
    await page.click('#sign-in');

    // The service sent the browser to the provider (redirects commit no URL of their own), which asks who is
    // signing in ...
    await page.waitForURL((u) => u.href !== sample.url, { waitUntil: 'domcontentloaded' });
    const at = new URL(page.url());
    assert.ok(at.origin === provider.issuer && at.pathname.startsWith('/interaction/'), `expected the provider's login form, got ${at.href}: ${(await page.textContent('body'))?.slice(0, 300)}`);
    await page.fill('input[name="login"]', DEFAULT_ACCOUNT.accountId);
    await page.fill('input[name="password"]', 'any password');
    await page.click('button[type="submit"]');
    // ... and whether the service may have the email address (the consent form has no login field).
    await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' });
    await page.click('button[type="submit"]');

    await page.waitForURL((u) => u.href.startsWith(sample.signedInUrl), { waitUntil: 'load' });
    const shown = await signedInPage(page);
    assert.equal(shown.state, 'signed-in', `the page says: ${shown.status}`);
    assert.equal(shown.person, personId);
    assert.equal(shown.status, `Signed in as ${personId}`);
    const claims = await verifyIdentityToken(server, shown.token);
    assert.equal(claims['person_id'], personId);
    assert.equal(claims['sub'], personId);
    assert.equal(claims['aud'], org.id);
    assert.deepEqual(claims['authenticated_methods'], ['oidc']);
    await screenshot(t, page, join(dir, 'signed-in.png'));
    await page.close();
  });
});
