// The console in Debian's chromium: the first-administrator link, the sign-in through the hosted page, the main
// tasks done by clicking (a person put in a group, a role given, a client's secret copied once, a session ended,
// a dead letter retried, the API key rotated among them), each one's result read back through the API, an event
// arriving live, a reader refused a write in the page and by the API; every page checked with axe-core (no
// WCAG 2.x level A or AA violation) and photographed at 1440 px, one at 360 px. Every wait is for a condition
// (an element, an API answer), never a fixed time: the machine may be busy.
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { launchBrowser, screenshot, until } from '../support/browser.js';
import { expectResult } from '../support/expect.js';
import { Browser } from '../support/oauth-browser.js';
import { removeDir, ROOT_ORG, startTestServer, tempDir, type Client, type TestServer } from '../support/server.js';

const ADMIN = 'ada@example.com';
const READER = 'rita@example.com';
const PASSWORD = 'correct horse battery staple';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PAGES = [
  ['persons', 'Persons'],
  ['groups', 'Groups'],
  ['roles', 'Roles and permissions'],
  ['clients', 'OAuth clients'],
  ['sso', 'SSO providers'],
  ['webhooks', 'Webhooks'],
  ['events', 'Live events'],
  ['config', 'Configuration'],
  ['domains', 'Domains'],
  ['suborganizations', 'Suborganizations'],
  ['keys', 'API key'],
  ['signing-keys', 'Signing keys'],
  ['regions', 'Regions'],
] as const;

/** axe-core in the page (evaluated over the DevTools protocol, which the page's CSP does not govern). */
async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(c: unknown, o: unknown): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> } }).axe;
    const r = await axe.run((globalThis as unknown as { document: unknown }).document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } });
    return r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => JSON.stringify(n.target)).join(' ')}`);
  });
  return violations;
}

describe('the console in chromium', () => {
  let dir: string;
  const dataDir = tempDir();
  let server: TestServer;
  /** the root organization's API: its key changes when the console rotates it */
  let client: Client;
  let browser: BrowserContext;
  let page: Page;
  /** the person created and put in a group by clicking, then given a role */
  let graceId: string;
  /** The console's access token, from the page's session storage. */
  const sessionToken = async () => (JSON.parse(String(await page.evaluate("sessionStorage.getItem('console.session')"))) as { token: string }).token;
  /** The API as the signed-in administrator: the token the page holds. */
  const asConsole = async () => {
    const token = await sessionToken();
    const api = client.as(ROOT_ORG, '');
    const bearer = { Authorization: `Bearer ${token}` };
    return { get: (path: string) => api.get(path, bearer), post: (path: string, body: unknown) => api.post(path, body, bearer) };
  };

  /** The hosted sign-in page, filled in as a person would. */
  async function hostedSignIn(email: string): Promise<void> {
    await page.waitForSelector('input#password');
    assert.equal(new URL(page.url()).pathname, '/oauth2/authorize');
    await page.fill('#handle', email);
    await page.fill('#password', PASSWORD);
    await page.click('button[type="submit"]');
    await page.waitForSelector('nav[aria-label="Areas"]', { timeout: 30_000 }).catch(async (e: Error) => {
      throw new Error(`${e.message}\nat ${page.url()}: ${(await page.textContent('body'))?.slice(0, 500)}`);
    });
  }

  async function open(t: TestContext, area: string, heading: string): Promise<void> {
    await page.click(`nav >> text="${heading}"`);
    await page.waitForSelector(`h1:text-is("${heading}")`);
    assert.equal(new URL(page.url()).hash, `#/${area}`);
    void t;
  }

  before(async () => {
    // Set KEEP_SCREENSHOTS=1 to keep the folder (and its screenshots) after the run.
    dir = mkdtempSync(join(tmpdir(), 'console-browser-'));
    // Fast webhook retries: a dead letter within a second, for the page that retries it.
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_WEBHOOK_RETRY_BASE_MS: '5', SERVICE_WEBHOOK_RETRY_MAX_MS: '20' }, {}, dataDir);
    client = server.client;
    browser = await launchBrowser(dir);
    // The Copy buttons write to the clipboard; the test reads it back.
    await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.base });
    page = await browser.newPage();
    await page.setViewportSize({ width: 1440, height: 900 });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    removeDir(dataDir);
    if (process.env['KEEP_SCREENSHOTS'] !== '1') rmSync(dir, { recursive: true, force: true });
  });

  test('the first-administrator link, then the sign-in through the hosted page', async (t) => {
    const link = server.service.root?.console_link as string;
    await page.goto(link);
    await page.waitForSelector('h1:text-is("Become the first administrator")');
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshot(t, page, join(dir, 'first-administrator-1440.png'));
    await page.fill('#f-email', ADMIN);
    await page.fill('#f-password', PASSWORD);
    await page.click('button:text-is("Create administrator")');
    await hostedSignIn(ADMIN);
    await page.waitForSelector('h1:text-is("Persons")');
    // Through the API: the person exists, holds the console permissions, and the page's token is theirs.
    const [admin] = expectResult(await client.get(`/persons?paging=cursor&handle=email_address:${ADMIN}`), 200) as Array<{ person_id: string }>;
    assert.ok(admin, `${ADMIN} exists`);
    const permissions = expectResult(await client.get(`/persons/${admin.person_id}/permissions`), 200) as string[];
    for (const p of ['console.read', 'console.write', 'console.keys']) assert.ok(permissions.includes(p), `${p} in ${permissions.join(', ')}`);
    expectResult(await (await asConsole()).get('/persons'), 200);
    // The one-time link is spent: opening it again and submitting is refused in the page and by the API.
    const again = await browser.newPage();
    await again.goto(link);
    await again.fill('#f-email', 'eve@example.com');
    await again.fill('#f-password', PASSWORD);
    await again.click('button:text-is("Create administrator")');
    assert.match((await again.textContent('[role="alert"]')) ?? '', /already used/);
    await again.close();
    assert.deepEqual(expectResult(await client.get('/persons?paging=cursor&handle=email_address:eve@example.com'), 200), []);
  });

  test('every page passes axe-core and is photographed at 1440 px', async (t) => {
    for (const [area, heading] of PAGES) {
      await open(t, area, heading);
      await page.waitForLoadState('networkidle');
      assert.deepEqual(await accessibilityViolations(page), [], `${area}: accessibility violations`);
      await screenshot(t, page, join(dir, `${area}-1440.png`));
    }
  });

  test('create a group, create a person and put them in it, all by clicking', async (t) => {
    await open(t, 'groups', 'Groups');
    await page.fill('#f-name', 'staff');
    await page.click('button:text-is("Create group")');
    await page.waitForSelector('a:text-is("staff")');
    assert.ok((expectResult(await client.get('/groups'), 200) as string[]).includes('staff'), 'the API lists the group');
    await open(t, 'persons', 'Persons');
    await page.fill('#f-new_value', 'grace@example.com');
    await page.click('button:text-is("Create person")');
    await page.waitForSelector('h1:text-is("Person")');
    const personId = decodeURIComponent(new URL(page.url()).hash.replace('#/persons/', ''));
    graceId = personId;
    const created = expectResult(await client.get(`/persons/${personId}`), 200) as { handles: Array<{ value: string }> };
    assert.deepEqual(created.handles.map((h) => h.value), ['grace@example.com']);
    await page.selectOption('#f-group', 'staff');
    await page.click('button:text-is("Add to group")');
    await page.waitForSelector('[data-testid="person-groups"] li:text-is("staff")');
    assert.deepEqual(expectResult(await client.get(`/persons/${personId}/groups`), 200), ['staff']);
    // Search by handle finds them; the page, opened from the keyboard, shows their details.
    await open(t, 'persons', 'Persons');
    await page.fill('#f-search_value', 'grace@example.com');
    await page.keyboard.press('Enter');
    await page.waitForSelector(`a:text-is("${personId}")`);
    await page.focus(`a:text-is("${personId}")`);
    await page.keyboard.press('Enter');
    await page.waitForSelector('h1:text-is("Person")');
    assert.deepEqual(await accessibilityViolations(page), [], 'person page');
    await screenshot(t, page, join(dir, 'person-1440.png'));
    // The group's page lists them as a member.
    await open(t, 'groups', 'Groups');
    await page.click('a:text-is("staff")');
    await page.waitForSelector('h1:text-is("Group staff")');
    await page.waitForSelector(`text="${personId}"`);
    assert.deepEqual(expectResult(await client.get('/groups/staff/persons'), 200), [personId]);
    assert.deepEqual(await accessibilityViolations(page), [], 'group page');
    await screenshot(t, page, join(dir, 'group-1440.png'));
  });

  test('create a permission and a role, then give the role to a person, all by clicking', async (t) => {
    await open(t, 'roles', 'Roles and permissions');
    await page.fill('#f-permission_name', 'documents:read');
    await page.click('button:text-is("Create permission")');
    await page.waitForSelector('li:text-is("documents:read")');
    await page.fill('#f-role', 'support');
    await page.check('input[name="permission"][value="documents:read"]');
    await page.click('button:text-is("Create role")');
    await page.waitForSelector('td:text-is("support")');
    const role = expectResult(await client.get('/rbac/roles/support'), 200) as { permissions: string[] };
    assert.deepEqual(role.permissions, ['documents:read']);
    await page.goto(`${server.base}/console#/persons/${encodeURIComponent(graceId)}`);
    await page.waitForSelector('h1:text-is("Person")');
    await page.selectOption('#f-role', 'support');
    await page.click('button:text-is("Give role")');
    await page.waitForSelector('p:text-is("Roles: support")');
    await page.waitForSelector('p:text-is("Permissions: documents:read")');
    assert.deepEqual(expectResult(await client.get(`/persons/${graceId}/roles`), 200), ['support']);
    assert.deepEqual(expectResult(await client.get(`/persons/${graceId}/permissions`), 200), ['documents:read']);
    assert.deepEqual(expectResult(await client.post('/rbac/check', { person_id: graceId, permission_name: 'documents:read' }), 200), { granted: true });
    await screenshot(t, page, join(dir, 'person-role-1440.png'));
  });

  test('register an OAuth client, copy its secret, and see it once', async (t) => {
    await open(t, 'clients', 'OAuth clients');
    await page.fill('#f-client_name', 'Web app');
    await page.fill('#f-redirect_uri', 'https://app.example/cb');
    await page.click('button:text-is("Register client")');
    const secret = ((await page.textContent('[data-testid="shown-once"]')) ?? '').trim();
    assert.ok(secret.length >= 20, `a secret is shown: ${secret}`);
    await page.click('.once button:text-is("Copy")');
    await page.waitForSelector('.once button:text-is("Copied")');
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret, 'the clipboard holds the secret');
    await screenshot(t, page, join(dir, 'client-secret-1440.png'));
    // Through the API: the client is registered, and the copied secret is its secret (the token endpoint's
    // revocation authenticates the client, and answers 200 for any token once it has).
    const [registered] = (expectResult(await client.get('/oauth2/clients'), 200) as Array<{ client_id: string; client_name: string }>).filter((c) => c.client_name === 'Web app');
    assert.ok(registered, 'the API lists the client');
    const revoke = (password: string) => fetch(`${server.base}/oauth2/tokens/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${encodeURIComponent(registered.client_id)}:${encodeURIComponent(password)}`).toString('base64')}` },
      body: new URLSearchParams({ token: 'not-a-token' }),
    });
    assert.equal((await revoke(secret)).status, 200, 'the copied secret authenticates the client');
    assert.equal((await revoke(`${secret}x`)).status, 401, 'another secret does not');
    await page.reload();
    await page.waitForSelector('td:text-is("Web app")');
    assert.equal(await page.$('[data-testid="shown-once"]'), null, 'the secret is not shown again');
    assert.ok(!(await page.content()).includes(secret));
    assert.ok(!(await client.get('/oauth2/clients')).text.includes(secret));
  });

  test('an event arrives live on the events page', async (t) => {
    await open(t, 'events', 'Live events');
    await page.fill('#f-types', 'PersonCreated_v1');
    await page.click('button:text-is("Connect")');
    await page.waitForSelector('[role="status"]:has-text("connected: new events")');
    const created = expectResult(await client.post('/persons', { handles: [{ type: 'email_address', value: 'live@example.com' }] }), 201) as { person_id: string };
    await page.waitForSelector(`[data-testid="events"] li:has-text("${created.person_id}")`);
    await screenshot(t, page, join(dir, 'events-live-1440.png'));
  });

  test("end a person's session by clicking: its sessions, recent events and token revocation on the page", async (t) => {
    const person = expectResult(await client.post('/persons', { handles: [{ type: 'email_address', value: 'sam@example.com' }] }), 201) as { person_id: string };
    assert.equal((await client.put(`/persons/${person.person_id}/credentials/password`, { password: PASSWORD })).status, 204);
    const app = expectResult(await client.post('/oauth2/clients', { client_name: 'App', scopes: ['openid'], grant_types: ['authorization_code'], redirect_uris: ['https://app.example/cb'] }), 201) as { client_id: string };
    // Sam signs in on the hosted page elsewhere (a plain HTTP client): a session of theirs is open.
    const elsewhere = new Browser();
    const authorize = new URL('/oauth2/authorize', server.base);
    const q = { response_type: 'code', client_id: app.client_id, redirect_uri: 'https://app.example/cb', scope: 'openid', state: 'st', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };
    for (const [k, v] of Object.entries(q)) authorize.searchParams.set(k, v);
    const signedIn = await elsewhere.signIn(await elsewhere.get(authorize), server.base, 'sam@example.com', PASSWORD);
    await elsewhere.close();
    assert.equal(signedIn.status, 302, signedIn.html);
    const [open1] = expectResult(await client.get(`/persons/${person.person_id}/sessions`), 200) as Array<{ session_id: string }>;
    assert.ok(open1, 'a session is open');
    await page.goto(`${server.base}/console#/persons/${encodeURIComponent(person.person_id)}`);
    await page.waitForSelector(`[data-testid="sessions"] td:text-is("${open1.session_id}")`);
    await page.waitForSelector('[data-testid="person-events"] li:has-text("PersonCreated_v1")');
    await page.waitForLoadState('networkidle');
    assert.deepEqual(await accessibilityViolations(page), [], 'person page with a session');
    await screenshot(t, page, join(dir, 'person-sessions-1440.png'));
    page.once('dialog', (d) => void d.accept());
    await page.click(`button:text-is("End session ${open1.session_id}")`);
    await page.waitForSelector('p:text-is("No open sessions.")');
    assert.deepEqual(expectResult(await client.get(`/persons/${person.person_id}/sessions`), 200), []);
  });

  test('retry a dead letter by clicking', async (t) => {
    // A receiver that refuses every connection: the event becomes a dead letter after its attempts.
    const hook = expectResult(await client.post('/organizations/webhooks', { name: 'down', target_url: 'http://127.0.0.1:9/hook' }), 201) as { id: string };
    assert.equal((await client.post(`/organizations/webhooks/${hook.id}/triggers`, { trigger_type: 'event', trigger_name: 'PersonCreated_v1' })).status, 201);
    expectResult(await client.post('/persons', { handles: [{ type: 'email_address', value: 'dead@example.com' }] }), 201);
    const letters = `/organizations/webhooks/${hook.id}/dead-letters`;
    type Letter = { offset: number; state: string; attempts: number };
    const deadLetter = async () => {
      const [l] = expectResult(await client.get(letters), 200) as Letter[];
      return l?.state === 'dead' ? l : undefined;
    };
    const letter = await until('a dead letter', deadLetter);
    await open(t, 'webhooks', 'Webhooks');
    await page.click('a:text-is("down")');
    const row = (attempts: number) => `tr:has(td:text-is("${letter.offset}")):has(td:text-is("${attempts}")):has(td:text-is("dead"))`;
    await page.waitForSelector(row(letter.attempts));
    await page.click(`button:text-is("Retry ${letter.offset}")`);
    // The retry is another round of attempts (the receiver still refuses): the letter comes back with more.
    const again = await until('the retried letter dead again after more attempts', async () => {
      const l = await deadLetter();
      return l && l.attempts > letter.attempts ? l : undefined;
    });
    await page.reload();
    await page.waitForSelector(row(again.attempts));
    assert.deepEqual(await accessibilityViolations(page), [], 'webhook page');
    await screenshot(t, page, join(dir, 'webhook-dead-letters-1440.png'));
  });

  test('add an SSO provider credential: its secret is sent, never shown', async (t) => {
    await open(t, 'sso', 'SSO providers');
    await page.selectOption('#f-provider', 'github');
    await page.fill('#f-client_id', 'gh-client');
    await page.fill('#f-client_secret', 'gh-secret-0123456789');
    await page.click('button:text-is("Add credential")');
    await page.waitForSelector('td:text-is("gh-client")');
    await page.reload();
    await page.waitForSelector('td:text-is("gh-client")');
    assert.ok(!(await page.content()).includes('gh-secret-0123456789'), 'the secret is not in the page');
    const [stored] = expectResult(await client.get('/organizations/sso/oidc/provider-credentials'), 200) as Array<{ client_id: string; provider: string }>;
    assert.deepEqual([stored?.client_id, stored?.provider], ['gh-client', 'github']);
    assert.deepEqual(await accessibilityViolations(page), [], 'SSO page with a credential');
    await screenshot(t, page, join(dir, 'sso-credential-1440.png'));
  });

  test('rotate the API key by clicking: the new key shown once, the old one refused', async (t) => {
    await open(t, 'keys', 'API key');
    page.once('dialog', (d) => void d.accept());
    await page.click('button:text-is("Rotate API key")');
    const key = ((await page.textContent('[data-testid="shown-once"]')) ?? '').trim();
    assert.ok(key.length >= 20, `a key is shown: ${key}`);
    assert.equal((await client.get('/groups')).status, 401, 'the old key is refused');
    client = client.as(ROOT_ORG, key);
    assert.equal((await client.get('/groups')).status, 200, 'the new key works');
  });

  test('a person without console.write is refused in the page and by the API; the page reads at 360 px', async (t) => {
    const reader = expectResult(await client.post('/persons', { handles: [{ type: 'email_address', value: READER }] }), 201) as { person_id: string };
    assert.equal((await client.put(`/persons/${reader.person_id}/credentials/password`, { password: PASSWORD })).status, 204);
    assert.equal((await client.post('/rbac/roles', { name: 'console-reader', permissions: ['console.read'] })).status, 204);
    assert.ok((await client.put(`/persons/${reader.person_id}/roles`, { roles: ['console-reader'] })).status < 300);
    const adminToken = await sessionToken();
    await page.click('button:text-is("Sign out")');
    await browser.clearCookies();
    await page.waitForSelector('h1:text-is("Sign in to the console")');
    const signedOut = await client.as(ROOT_ORG, '').get('/persons', { Authorization: `Bearer ${adminToken}` });
    assert.equal(signedOut.status, 401, 'signing out revoked the token');
    assert.equal(await page.inputValue('#f-org'), ROOT_ORG, 'the organization is remembered');
    await page.click('button:text-is("Sign in")');
    await hostedSignIn(READER);
    await open(t, 'groups', 'Groups');
    await page.fill('#f-name', 'readers');
    await page.click('button:text-is("Create group")');
    assert.match((await page.textContent('[role="alert"]')) ?? '', /lacks the permission console\.write/);
    assert.equal((await client.get('/groups/readers')).status, 404);
    // The API refuses the reader's own token just the same.
    const token = await sessionToken();
    const direct = await client.as(ROOT_ORG, '').post('/groups', { name: 'readers' }, { Authorization: `Bearer ${token}` });
    assert.equal(direct.status, 403, direct.text);
    await page.setViewportSize({ width: 360, height: 740 });
    await open(t, 'persons', 'Persons');
    assert.deepEqual(await accessibilityViolations(page), [], 'persons at 360 px');
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
    assert.ok(overflow <= 0, `the page is ${overflow} px wider than a 360 px screen`);
    await screenshot(t, page, join(dir, 'persons-360.png'));
  });
});
