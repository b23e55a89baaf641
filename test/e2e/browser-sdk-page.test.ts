// The browser client in Debian's chromium: the sample page of scripts/browser-sample.ts on one origin, the
// service on another (so CORS is real), and what the service records for each thing a visitor does.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { startBrowserSample, type BrowserSample } from '../../scripts/browser-sample.js';
import { newOrg, personWithPassword, recordEvents, type Org } from '../support/auth.js';
import { launchBrowser, screenshot, until } from '../support/browser.js';
import { freePort } from '../support/free-port.js';
import { startTestServer, type TestServer } from '../support/server.js';

const PASSWORD = 'correct horse battery';

describe('the browser client on a sample page in chromium', () => {
  let dir: string;
  let server: TestServer;
  let org: Org;
  let sample: BrowserSample;
  let browser: BrowserContext;
  let events: ReturnType<typeof recordEvents>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sdk-browser-'));
    const port = await freePort();
    server = await startTestServer({ SERVICE_CORS_ORIGINS: `http://127.0.0.1:${port}` });
    events = recordEvents(server);
    org = await newOrg(server, 'shop');
    await personWithPassword(org, 'ada@example.com', PASSWORD);
    sample = await startBrowserSample({ serviceUrl: server.base, orgId: org.id, port });
    assert.notEqual(new URL(sample.url).origin, new URL(server.base).origin);
    browser = await launchBrowser(dir);
  });
  after(async () => {
    await browser?.close();
    await sample?.close();
    await server?.stop();
    if (process.env['KEEP_SCREENSHOTS'] !== '1') rmSync(dir, { recursive: true, force: true });
  });

  const sdkEvents = (name?: string) => events(org.id, name).filter((e) => e['event_metadata'].source === 'SDK');
  async function settled(page: Page, state?: string): Promise<string> {
    await page.waitForFunction(state === undefined ? 'document.body.dataset.state !== undefined' : `document.body.dataset.state === ${JSON.stringify(state)}`);
    return (await page.getAttribute('body', 'data-state')) ?? '';
  }
  /** Forgets the page's last state, so that the next settled() waits for the next action's. */
  async function fresh(page: Page): Promise<void> {
    await page.evaluate('delete document.body.dataset.state');
  }

  test('a visit, a sign-in, a wrong password, a route change, a reload, a new tab and a logout, as the service records them', async (t) => {
    const page = await browser.newPage();
    await page.goto(`${sample.url}/`);
    assert.equal(await settled(page), 'ready');
    const correlation = (await page.textContent('#correlation')) ?? '';
    assert.match(correlation, /^[0-9a-f-]{36}$/);
    assert.equal(await page.evaluate("sessionStorage.getItem('service-sdk:analytics-correlation-id')"), correlation);
    const loaded = await until('ServiceSDKLoaded_v1', () => sdkEvents('ServiceSDKLoaded_v1')[0]);
    assert.match(loaded['browser_metadata'].user_agent, /HeadlessChrome\/\d+/);
    assert.equal(loaded['browser_metadata'].window_location, `${sample.url}/`);
    assert.equal(loaded['browser_metadata'].service_sdk_version, 'sample-1.0.0');
    assert.deepEqual(loaded['analytics_metadata'], { analytics_correlation_id: correlation, client_ip_address: '127.0.0.1' });

    // A wrong password: AuthenticationFailed as the SDK saw it, and the service's own.
    await page.fill('#email', 'ada@example.com');
    await page.fill('#password', 'wrong password!');
    await fresh(page);
    await page.click('#sign-in');
    assert.match(await settled(page), /^signed in failed/);
    const failed = await until('AuthenticationFailed_v1 (SDK)', () => sdkEvents('AuthenticationFailed_v1')[0]);
    assert.equal(failed['failure_reason'], 'incorrect_password');
    assert.deepEqual(failed['handle'], { type: 'EmailAddress', value: 'ada@example.com' });

    // Sign in: PersonIdentified then AuthenticationSucceeded from the SDK, and the service's AuthenticationSucceeded.
    await page.fill('#password', PASSWORD);
    await fresh(page);
    await page.click('#sign-in');
    assert.equal(await settled(page), 'signed in');
    const personId = (await page.textContent('#person')) ?? '';
    await until('AuthenticationSucceeded_v1 (SDK)', () => sdkEvents('AuthenticationSucceeded_v1')[0]);
    const order = sdkEvents().map((e) => e['event_metadata'].event_name);
    assert.deepEqual(order.slice(order.indexOf('PersonIdentified_v1')), ['PersonIdentified_v1', 'AuthenticationSucceeded_v1']);
    assert.equal(sdkEvents('PersonIdentified_v1')[0]?.['person_id'], personId);
    const cloud = events(org.id, 'AuthenticationSucceeded_v1').filter((e) => e['event_metadata'].source === 'Cloud');
    assert.equal(cloud.length, 1);
    assert.equal(cloud[0]?.['person_id'], personId);
    // The SDK sent its correlation id along: the service's own event carries it, tying the two together.
    assert.equal(cloud[0]?.['analytics_metadata'].analytics_correlation_id, correlation);

    // A client-side route change.
    await page.click('#go-products');
    const virtual = await until('VirtualPageLoaded_v1', () => sdkEvents('VirtualPageLoaded_v1')[0]);
    assert.equal(virtual['person_id'], personId);
    assert.equal(virtual['browser_metadata'].window_location, `${sample.url}/products`);
    await screenshot(t, page, join(dir, 'signed-in.png'));

    // A reload: the same tab keeps its correlation id; the SDK loads again and restores the person.
    await page.reload();
    assert.equal(await settled(page), 'restored');
    assert.equal(await page.textContent('#correlation'), correlation);
    await until('a second ServiceSDKLoaded_v1', () => (sdkEvents('ServiceSDKLoaded_v1').length === 2 ? true : undefined));
    await until('a second PersonIdentified_v1', () => (sdkEvents('PersonIdentified_v1').length === 2 ? true : undefined));
    assert.ok(sdkEvents().every((e) => e['analytics_metadata'].analytics_correlation_id === correlation));

    // A new tab: a new correlation id, the same person.
    const tab = await browser.newPage();
    await tab.goto(`${sample.url}/`);
    assert.equal(await settled(tab), 'restored');
    assert.notEqual(await tab.textContent('#correlation'), correlation);
    await tab.close();

    // Logout: PersonLoggedOut, the stored token gone, and revoked at the service (DELETE /session).
    const token = (await page.evaluate('window.sdk.person.token')) as string;
    await fresh(page);
    await page.click('#logout');
    assert.equal(await settled(page), 'logged out');
    const out = await until('PersonLoggedOut_v1', () => sdkEvents('PersonLoggedOut_v1')[0]);
    assert.equal(out['person_id'], personId);
    assert.equal(await page.evaluate("Object.keys(localStorage).filter((k) => k.endsWith(':token')).length"), 0);
    const verdict = await server.client.post('/token/validate', { token }, { 'Service-OrgID': '', 'Service-API-Key': '' });
    assert.equal(verdict.body.result.valid, false);

    // An event sent just before navigating away still arrives (keepalive).
    const before = sdkEvents('VirtualPageLoaded_v1').length;
    await page.evaluate("window.sdk.trackVirtualPageView({ url: '/leaving' }); location.href = 'about:blank';");
    const leaving = await until('the VirtualPageLoaded_v1 sent while leaving', () => sdkEvents('VirtualPageLoaded_v1')[before]);
    assert.equal(leaving['browser_metadata'].window_location, `${sample.url}/leaving`);
    await page.close();
  });

  test('an anonymous cart survives registration: the same person, PersonCreated with prev_person_type', async () => {
    const page = await browser.newPage();
    await page.goto(`${sample.url}/`);
    assert.equal(await settled(page), 'ready');
    await fresh(page);
    await page.click('#add-to-cart');
    assert.equal(await settled(page), 'cart updated');
    assert.equal(await page.textContent('#person-type'), 'anonymous');
    const anonymousId = (await page.textContent('#person')) ?? '';
    assert.equal(events(org.id, 'AnonymousPersonCreated_v1').filter((e) => e['person_id'] === anonymousId).length, 1);
    assert.equal(events(org.id, 'AnonymousTokenMinted_v1').filter((e) => e['person_id'] === anonymousId).length, 1);
    await until('PersonIdentified_v1 of the anonymous person', () => sdkEvents('PersonIdentified_v1').find((e) => e['person_id'] === anonymousId));

    // A reload keeps the anonymous person and its cart.
    await page.reload();
    assert.equal(await settled(page), 'restored');
    assert.equal(await page.textContent('#person'), anonymousId);
    await page.waitForFunction(`document.getElementById('cart').textContent === '["apple"]'`);
    assert.equal(events(org.id, 'AnonymousPersonCreated_v1').filter((e) => e['person_id'] === anonymousId).length, 1);

    await page.fill('#email', 'cart@example.com');
    await page.fill('#password', PASSWORD);
    await fresh(page);
    await page.click('#register');
    assert.equal(await settled(page), 'registered');
    assert.equal(await page.textContent('#person'), anonymousId);
    assert.equal(await page.textContent('#person-type'), 'regular');
    assert.equal(await page.textContent('#cart'), '["apple"]');
    const created = events(org.id, 'PersonCreated_v1').find((e) => e['person_id'] === anonymousId);
    assert.equal(created?.['prev_person_type'], 'anonymous');
    await page.close();
  });
});
