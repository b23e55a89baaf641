// The hosted sign-in page's session ends when the person's password changes or is reset: a browser signed in
// with the old password is asked to sign in again (prompt=none answers login_required). Re-hashing an
// imported password at the sign-in is no change, and keeps the session.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { expectResult } from '../support/expect.js';
import { foreignHashes } from '../support/foreign-hashes.js';
import { emailHandle, newOrg, personWithPassword, type Org } from '../support/auth.js';
import { Browser } from '../support/oauth-browser.js';
import { resetLink, startSmtpReceiver, type SmtpReceiver } from '../support/smtp.js';
import { startTestServer, type TestServer } from '../support/server.js';

const REDIRECT = 'https://app.example/cb';
const PASSWORD = 'correct horse battery staple';

describe('hosted-page sessions and password changes', () => {
  let server: TestServer;
  let smtp: SmtpReceiver;
  let org: Org;
  let config: oidc.Configuration;
  const browsers: Browser[] = [];

  before(async () => {
    smtp = await startSmtpReceiver();
    server = await startTestServer({ SERVICE_SMTP_URL: smtp.url, SERVICE_SMTP_FROM: 'accounts@id.example' });
    org = await newOrg(server, 'sessions');
    const client = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'Web app', scopes: ['openid'], grant_types: ['authorization_code'], redirect_uris: [REDIRECT], public: true }), 201);
    config = await oidc.discovery(new URL(server.service.issuer), client.client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
  });
  after(async () => {
    await Promise.all(browsers.map((b) => b.close()));
    await server.stop();
    await smtp.close();
  });

  async function authorizeUrl(extra: Record<string, string> = {}): Promise<URL> {
    const challenge = await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier());
    return oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', state: oidc.randomState(), code_challenge: challenge, code_challenge_method: 'S256', ...extra });
  }

  /** A browser signed in at the hosted page as email. */
  async function signedIn(email: string, password: string): Promise<Browser> {
    const browser = new Browser();
    browsers.push(browser);
    const done = await browser.signIn(await browser.get(await authorizeUrl()), server.base, email, password);
    assert.equal(done.status, 302, done.html);
    assert.ok(browser.cookies.has('oauth_session'));
    return browser;
  }

  /** What prompt=none answers the browser: a code while its session stands, else the error. */
  async function silently(browser: Browser): Promise<string> {
    const answer = await browser.get(await authorizeUrl({ prompt: 'none' }));
    const back = new URL(answer.location as string);
    return back.searchParams.get('code') !== null ? 'code' : (back.searchParams.get('error') as string);
  }

  test('a password set through the API ends the session', async () => {
    const id = await personWithPassword(org, 'changed@example.com', PASSWORD);
    const browser = await signedIn('changed@example.com', PASSWORD);
    assert.equal(await silently(browser), 'code');
    assert.equal((await org.admin.put(`/persons/${id}/credentials/password`, { password: 'another password 2' })).status, 204);
    assert.equal(await silently(browser), 'login_required');
  });

  test('a password rotated or removed ends the session', async () => {
    const id = await personWithPassword(org, 'rotated@example.com', PASSWORD);
    const rotated = await signedIn('rotated@example.com', PASSWORD);
    const fresh = expectResult(await org.admin.post(`/persons/${id}/credentials/password-rotate`), 200).new_password as string;
    assert.equal(await silently(rotated), 'login_required');
    const removed = await signedIn('rotated@example.com', fresh);
    assert.equal(await silently(removed), 'code');
    assert.equal((await org.admin.delete(`/persons/${id}/credentials`)).status, 204);
    assert.equal(await silently(removed), 'login_required');
  });

  test('a password reset through the mailed link ends the session', async () => {
    const id = await personWithPassword(org, 'reset@example.com', PASSWORD);
    const browser = await signedIn('reset@example.com', PASSWORD);
    const before = smtp.received.length;
    assert.equal((await org.admin.post(`/persons/${id}/credentials/password-reset`, {})).status, 202);
    const token = resetLink(smtp.received[before]!).searchParams.get('token') as string;
    assert.equal((await server.client.as('', '').post('/password-reset', { token, password: 'after the reset 3' })).status, 204);
    assert.equal(await silently(browser), 'login_required');
  });

  test('an imported hash re-hashed at the hosted sign-in keeps its session', async () => {
    const created = await org.admin.post('/persons', { handles: [emailHandle('imported@example.com')] });
    const id = created.body.result.person_id as string;
    const imported = expectResult(await org.admin.post(`/persons/${id}/credentials`, { type: 'password', params: { password_hash: foreignHashes(PASSWORD)['bcrypt-2b'] } }), 201);
    const browser = await signedIn('imported@example.com', PASSWORD);
    assert.deepEqual(expectResult<any[]>(await org.admin.get(`/persons/${id}/credentials`), 200), [{ ...imported, params: { algorithm: 'scrypt' } }]);
    assert.equal(await silently(browser), 'code');
  });
});
