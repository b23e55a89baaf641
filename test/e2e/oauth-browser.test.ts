// The authorization code flow in a real browser: Debian's chromium, driven by playwright-core, goes from the
// sample relying party of scripts/oauth-sample.ts to the service's hosted sign-in page and back, for a
// confidential and a public client, and photographs the signed-in page.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { BrowserContext } from 'playwright-core';
import { startOAuthSample, type OAuthSample } from '../../scripts/oauth-sample.js';
import { newOrg, personWithPassword, type Org } from '../support/auth.js';
import { expectResult } from '../support/expect.js';
import { launchBrowser, screenshot } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery staple';

describe('OAuth sample relying party in chromium', () => {
  let dir: string;
  let server: TestServer;
  let org: Org;
  let personId: string;
  let browser: BrowserContext;
  const samples: OAuthSample[] = [];

  /** A client of the organization and the sample page signing in with it; the client's redirect URI is the page's. */
  async function sampleFor(kind: 'confidential' | 'public'): Promise<{ sample: OAuthSample; clientId: string }> {
    const created = expectResult<{ client_id: string; client_secret?: string }>(
      await org.admin.post('/oauth2/clients', {
        client_name: `Sample (${kind})`,
        scopes: ['openid', 'email'],
        grant_types: ['authorization_code'],
        // The sample's port is known once it listens; the redirect URI follows below.
        redirect_uris: ['http://127.0.0.1/callback'],
        ...(kind === 'public' && { public: true }),
      }),
      201,
    );
    assert.equal(created.client_secret === undefined, kind === 'public');
    const sample = await startOAuthSample({ serviceUrl: server.base, clientId: created.client_id, ...(created.client_secret !== undefined && { clientSecret: created.client_secret }) });
    samples.push(sample);
    expectResult(await org.admin.patch(`/oauth2/clients/${created.client_id}`, { redirect_uris: [sample.callbackUrl] }), 200);
    return { sample, clientId: created.client_id };
  }

  before(async () => {
    // Set KEEP_SCREENSHOTS=1 to keep the folder (and its screenshots) after the run.
    dir = mkdtempSync(join(tmpdir(), 'oauth-browser-'));
    server = await startTestServer();
    org = await newOrg(server, 'Sample Org');
    personId = await personWithPassword(org, EMAIL, PASSWORD);
    browser = await launchBrowser(dir);
  });
  after(async () => {
    await browser?.close();
    for (const s of samples) await s.close();
    await server?.stop();
    if (process.env['KEEP_SCREENSHOTS'] !== '1') rmSync(dir, { recursive: true, force: true });
  });

  for (const kind of ['confidential', 'public'] as const) {
    test(`${kind} client: "Sign in", the hosted page, back signed in as the person with an ID token the published keys verify`, async (t) => {
      const { sample, clientId } = await sampleFor(kind);
      // Each client signs in afresh, not with the hosted page's session of the test before.
      await browser.clearCookies();
      const page = await browser.newPage();
      page.on('console', (m) => t.diagnostic(`console ${m.type()}: ${m.text()}`));
      await page.goto(sample.url);
      assert.equal(await page.textContent('#sign-in'), 'Sign in');
      await page.click('#sign-in');

      // The sample sent the browser to the authorization endpoint, which shows the organization's sign-in form.
      await page.waitForSelector('input#password');
      const at = new URL(page.url());
      assert.equal(at.origin, server.base, `expected the hosted sign-in page, got ${at.href}`);
      assert.equal(at.pathname, '/oauth2/authorize');
      assert.equal(at.searchParams.get('code_challenge_method'), 'S256');
      assert.equal(at.searchParams.get('redirect_uri'), sample.callbackUrl);
      assert.ok(at.searchParams.get('state') && at.searchParams.get('nonce'));
      assert.equal(at.searchParams.get('client_id'), clientId);
      assert.equal(await page.textContent('h1'), 'Sign in to Sample Org');
      await page.fill('#handle', EMAIL);
      await page.fill('#password', PASSWORD);
      await page.click('button[type="submit"]');

      await page.waitForURL((u) => u.href.startsWith(sample.callbackUrl), { waitUntil: 'load' });
      const state = await page.getAttribute('body', 'data-state');
      assert.equal(state, 'signed-in', `the sample says: ${await page.textContent('#status')}`);
      assert.equal(await page.textContent('#status'), `Signed in as ${personId}`);
      assert.equal(await page.textContent('#person'), personId);
      const shown = JSON.parse((await page.textContent('#claims')) ?? '');
      assert.equal(shown.sub, personId);
      assert.equal(shown.email, EMAIL);

      // The ID token as any relying party would check it, independently of the sample's library.
      const idToken = await page.inputValue('#token');
      const jwks = createLocalJWKSet((await server.client.get('/.well-known/jwks.json')).body);
      const { payload, protectedHeader } = await jwtVerify(idToken, jwks, { issuer: server.base, audience: clientId, algorithms: ['ES256'] });
      assert.equal(protectedHeader.alg, 'ES256');
      assert.equal(payload.sub, personId);
      assert.equal(payload['email'], EMAIL);
      assert.equal(typeof payload['nonce'], 'string');
      assert.equal(typeof payload['auth_time'], 'number');
      assert.deepEqual(shown, payload, 'the page shows the claims of the token it was given');

      await screenshot(t, page, join(dir, `signed-in-${kind}.png`));

      // The callback again (a reload, the back button): the code is spent and the sample's login is over.
      const callback = page.url();
      await page.goto(callback);
      assert.equal(await page.getAttribute('body', 'data-state'), 'failed');
      await page.close();
    });
  }

  test('a callback this browser did not start is a failed sign-in', async () => {
    const { sample } = await sampleFor('confidential');
    const page = await browser.newPage();
    await page.goto(`${sample.callbackUrl}?code=forged&state=forged`);
    assert.equal(await page.getAttribute('body', 'data-state'), 'failed');
    assert.match((await page.textContent('#status')) ?? '', /no sign-in started in this browser/);
    await page.close();
  });
});
