// Passkeys in a real browser: Debian's chromium with the DevTools protocol's virtual authenticator (ctap2,
// resident keys, user verification). A page on the organization's allowed domain registers a passkey with the
// person's token, signs in with it and no handle, and uses it as the second factor after a password; another
// organization's page cannot use it; a cloned authenticator's counter going backwards is refused; an assertion
// is not taken twice. Each step's page is photographed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { expectNoContent, expectResult } from '../support/expect.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { newOrg, personWithPassword, signIn, verifyIdentityToken, type Org } from '../support/auth.js';
import { launchBrowser, screenshot } from '../support/browser.js';

const dir = tempDir();
let server: TestServer;
let pages: Server;
let browser: BrowserContext;
let pagePort: number;

/** The sample page: the ceremonies with navigator.credentials, JSON in and out as the service speaks it. */
const PAGE = `<!doctype html><meta charset="utf-8"><title>passkeys</title><h1>Passkeys</h1><p id="status">ready</p>
<script>
const b64u = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)), (c) => c.charCodeAt(0));
const say = (text) => { document.getElementById('status').textContent = text; };
async function call(api, org, path, body, token) {
  const headers = { 'content-type': 'application/json', 'service-orgid': org };
  if (token) headers.authorization = 'Bearer ' + token;
  const r = await fetch(api + path, { method: 'POST', headers, body: JSON.stringify(body ?? {}) });
  return { status: r.status, body: await r.json().catch(() => null) };
}
window.registerPasskey = async (api, org, token) => {
  const o = (await call(api, org, '/register/webauthn/options', {}, token)).body.result.options;
  const c = await navigator.credentials.create({ publicKey: { ...o, challenge: bytes(o.challenge), user: { ...o.user, id: bytes(o.user.id) },
    excludeCredentials: (o.excludeCredentials || []).map((x) => ({ ...x, id: bytes(x.id) })) } });
  const credential = { id: c.id, rawId: b64u(c.rawId), type: c.type, clientExtensionResults: {}, response: {
    clientDataJSON: b64u(c.response.clientDataJSON), attestationObject: b64u(c.response.attestationObject), transports: c.response.getTransports() } };
  const r = await call(api, org, '/register/webauthn', { credential, label: 'this browser' }, token);
  say('registered: ' + r.status);
  return r;
};
window.assertion = async (api, org, challenge) => {
  const o = (await call(api, org, '/authenticate/webauthn/options', challenge ? { challenge } : {})).body.result.options;
  const c = await navigator.credentials.get({ publicKey: { ...o, challenge: bytes(o.challenge), allowCredentials: (o.allowCredentials || []).map((x) => ({ ...x, id: bytes(x.id) })) } });
  return { id: c.id, rawId: b64u(c.rawId), type: c.type, clientExtensionResults: {}, response: {
    clientDataJSON: b64u(c.response.clientDataJSON), authenticatorData: b64u(c.response.authenticatorData), signature: b64u(c.response.signature),
    userHandle: c.response.userHandle ? b64u(c.response.userHandle) : undefined } };
};
window.signInWithPasskey = async (api, org, challenge, credential) => {
  try {
    const cred = credential ?? await window.assertion(api, org, challenge);
    const r = await call(api, org, '/authenticate/webauthn', challenge ? { credential: cred, challenge } : { credential: cred });
    say('signed in: ' + r.status);
    return { ...r, credential: cred };
  } catch (e) {
    say('refused by the browser: ' + e.name);
    return { status: 0, error: e.name };
  }
};
</script>`;

/** A page of the site `host` (one of an organization's allowed domains), with its virtual authenticator. */
async function openPage(host: string): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
  const page = await browser.newPage();
  const cdp = await browser.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  await page.goto(`http://${host}:${pagePort}/`);
  return { page, cdp, authenticatorId };
}

before(async () => {
  server = await startTestServer();
  pages = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE));
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pagePort = (pages.address() as AddressInfo).port;
  browser = await launchBrowser(dir, { hosts: ['shop-a.localhost', 'shop-b.localhost'] });
});
after(async () => {
  await browser?.close();
  pages?.close();
  await server.stop();
  removeDir(dir);
});

describe('passkeys in chromium', () => {
  let org: Org;
  let other: Org;
  let person: string;

  test('register on the organization\'s page, sign in without a handle, as a second factor after a password; another organization\'s page cannot; a clone and a replay are refused', async (t) => {
    org = await newOrg(server, 'shop-a');
    other = await newOrg(server, 'shop-b');
    expectNoContent(await org.admin.post('/organizations/config/domains', { domains: ['shop-a.localhost'] }));
    expectNoContent(await other.admin.post('/organizations/config/domains', { domains: ['shop-b.localhost'] }));
    person = await personWithPassword(org, 'ada@example.com', 'correct horse battery');
    const { token } = expectResult<{ token: string }>(await signIn(org, 'ada@example.com', 'correct horse battery'), 200);
    const api = server.base;

    const a = await openPage('shop-a.localhost');
    const registered = await a.page.evaluate(([u, o, tk]) => (globalThis as any).registerPasskey(u, o, tk), [api, org.id, token] as const);
    assert.equal(registered.status, 201, JSON.stringify(registered.body));
    await screenshot(t, a.page, join(dir, '1-registered.png'));
    const listed = expectResult<Array<Record<string, any>>>(await org.admin.get(`/persons/${person}/credentials`), 200);
    const passkey = listed.find((c) => c['type'] === 'public-key') as Record<string, any>;
    assert.ok(passkey, JSON.stringify(listed));
    assert.equal(passkey['label'], 'this browser');
    assert.deepEqual(Object.keys(passkey['params']).sort(), ['attestation_type', 'authenticator', 'public_key', 'webauthn_credential_id']);
    assert.equal(typeof passkey['params']['authenticator']['aaguid'], 'string');

    // Signed out (no token held); signed in with the passkey alone, no handle typed.
    const first = await a.page.evaluate(([u, o]) => (globalThis as any).signInWithPasskey(u, o), [api, org.id] as const);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const claims = await verifyIdentityToken(server, first.body.result.token);
    assert.equal(claims.sub, person);
    assert.deepEqual(claims['authenticated_methods'], ['webauthn']);
    await screenshot(t, a.page, join(dir, '2-signed-in-with-passkey.png'));

    // The same assertion again: its challenge is used.
    const replay = await a.page.evaluate(([u, o, c]) => (globalThis as any).signInWithPasskey(u, o, undefined, c), [api, org.id, first.credential] as const);
    assert.equal(replay.status, 401, JSON.stringify(replay.body));

    // A password now asks for the passkey as a second factor.
    const { second_factor } = expectResult<{ second_factor: { challenge: string; methods: string[] } }>(await signIn(org, 'ada@example.com', 'correct horse battery'), 200);
    assert.deepEqual(second_factor.methods, ['webauthn']);
    const second = await a.page.evaluate(([u, o, ch]) => (globalThis as any).signInWithPasskey(u, o, ch), [api, org.id, second_factor.challenge] as const);
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.deepEqual((await verifyIdentityToken(server, second.body.result.token))['authenticated_methods'], ['password', 'webauthn']);
    await screenshot(t, a.page, join(dir, '3-second-factor.png'));

    // Another organization's page: the authenticator holds nothing for its RP ID.
    const b = await openPage('shop-b.localhost');
    await b.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: b.authenticatorId });
    await b.cdp.send('WebAuthn.addVirtualAuthenticator', { options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true } }).then(async ({ authenticatorId }) => {
      // The same authenticator's credentials, carried over: still bound to shop-a.localhost.
      const { credentials } = await a.cdp.send('WebAuthn.getCredentials', { authenticatorId: a.authenticatorId });
      for (const credential of credentials) await b.cdp.send('WebAuthn.addCredential', { authenticatorId, credential });
    });
    const elsewhere = await b.page.evaluate(([u, o]) => (globalThis as any).signInWithPasskey(u, o), [api, other.id] as const);
    assert.equal(elsewhere.status, 0, JSON.stringify(elsewhere));
    assert.equal(elsewhere.error, 'NotAllowedError');
    await screenshot(t, b.page, join(dir, '4-other-organization.png'));
    // Sent to the other organization anyway, an assertion made on the first one's page is refused.
    // (The browser would not even send it: the first site is not among the other's CORS origins.)
    const fresh = await a.page.evaluate(([u, o]) => (globalThis as any).assertion(u, o), [api, org.id] as const);
    const fromA = await other.user.post('/authenticate/webauthn', { credential: fresh }, { origin: `http://shop-a.localhost:${pagePort}` });
    assert.equal(fromA.status, 403, fromA.text);
    const fromB = await other.user.post('/authenticate/webauthn', { credential: fresh }, { origin: `http://shop-b.localhost:${pagePort}` });
    assert.equal(fromB.status, 401, fromB.text);

    // A clone: the credential as it was before the sign-ins above, counter and all.
    const { credentials } = await a.cdp.send('WebAuthn.getCredentials', { authenticatorId: a.authenticatorId });
    const original = credentials[0] as { signCount: number };
    assert.ok(original.signCount >= 2, `the virtual authenticator counted ${original.signCount} signatures`);
    await a.cdp.send('WebAuthn.clearCredentials', { authenticatorId: a.authenticatorId });
    await a.cdp.send('WebAuthn.addCredential', { authenticatorId: a.authenticatorId, credential: { ...credentials[0], signCount: 0 } as never });
    const cloned = await a.page.evaluate(([u, o]) => (globalThis as any).signInWithPasskey(u, o), [api, org.id] as const);
    assert.equal(cloned.status, 401, JSON.stringify(cloned.body));
    await screenshot(t, a.page, join(dir, '5-clone-refused.png'));

    // Deleted: listed no more, and the password signs in alone again.
    expectNoContent(await org.admin.delete(`/persons/${person}/credentials/${passkey['id']}`));
    expectResult<{ token: string }>(await signIn(org, 'ada@example.com', 'correct horse battery'), 200);
  });

  test('the browser client: registers a passkey for the person it holds, and signs in with it after logging out (@simplewebauthn/browser)', async (t) => {
    await personWithPassword(org, 'bo@example.com', 'correct horse battery');
    const a = await openPage('shop-a.localhost');
    const result = await a.page.evaluate(
      async ([api, orgId]) => {
        const { ServiceSDK } = await import(`${api}/sdk/service-sdk.js`);
        const sdk = new ServiceSDK({ baseUrl: api, orgId });
        await sdk.signIn({ handle: { type: 'email_address', value: 'bo@example.com' }, password: 'correct horse battery' });
        const registered = await sdk.registerPasskey({ label: 'sdk' });
        await sdk.logout();
        const held = await sdk.signInWithPasskey();
        (globalThis as any).document.getElementById('status').textContent = `signed in with the SDK: ${held.authenticated_methods.join(', ')}`;
        return { registered, person: held };
      },
      [server.base, org.id] as const,
    );
    assert.equal(result.registered.type, 'public-key');
    assert.equal(result.registered.label, 'sdk');
    assert.deepEqual(result.person.authenticated_methods, ['webauthn']);
    assert.deepEqual((await verifyIdentityToken(server, result.person.token))['authenticated_methods'], ['webauthn']);
    await screenshot(t, a.page, join(dir, '6-sdk.png'));
  });
});
