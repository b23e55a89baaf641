// The account-linking rule against pre-account takeover: an SSO sign-in with a provider-verified address joins
// the person holding it only if that person's handle was verified (by the organization, a provider or a link
// mailed to it); a self-registered, never verified address is refused, and stays the registrant's alone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startTestServer, type TestServer } from '../support/server.js';
import { emailHandle, recordEvents, signIn, verifyIdentityToken } from '../support/auth.js';
import { resetLink, startSmtpReceiver, type SmtpReceiver } from '../support/smtp.js';
import { ssoSetup, type SsoSetup } from '../support/sso.js';

const APP = 'http://127.0.0.1:9/signed-in';
const VICTIM = 'ada@example.com';
const PASSWORD = 'attacker password 1234';

let smtp: SmtpReceiver;
let server: TestServer;
let events: ReturnType<typeof recordEvents>;

before(async () => {
  smtp = await startSmtpReceiver();
  server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_SMTP_URL: smtp.url, SERVICE_SMTP_FROM: 'accounts@id.example' });
  events = recordEvents(server);
});
after(async () => {
  await server.stop();
  await smtp.close();
  removeDir(server.dataDir);
});

const fragment = (url: string) => new URLSearchParams(new URL(url).hash.slice(1));

/** The SSO sign-in walked to its end: the fragment the browser is sent to APP with. */
async function ssoSignIn(s: SsoSetup): Promise<URLSearchParams> {
  const walk = await s.browser.walk(s.startUrl(), { stop: (u) => u.startsWith(APP) });
  assert.ok(walk.stoppedAt, `ended at ${walk.last.status} ${walk.last.url}: ${walk.last.body.slice(0, 300)}`);
  return fragment(walk.stoppedAt);
}

describe('SSO account linking', () => {
  test('a self-registered, unverified address is not joined: refused (handle_not_verified), the person untouched, no token', async () => {
    const s = await ssoSetup(server, 'linking', APP);
    try {
      // The attacker registers the victim's address first, with a password of their own.
      const registered = await s.org.user.post('/register/password', { handle: emailHandle(VICTIM), password: PASSWORD });
      assert.equal(registered.status, 201, registered.text);
      const registrant = (await verifyIdentityToken(server, registered.body.result.token)).sub;

      // The victim signs in with the provider, which vouches for the address.
      const f = await ssoSignIn(s);
      assert.equal(f.get('token'), null, 'no token for the pre-claimed person');
      assert.equal(f.get('error'), 'access_denied');
      assert.match(f.get('error_description') ?? '', /^email_address: the person holding this address registered it without verifying it/);
      const failed = events(s.org.id, 'AuthenticationFailed_v1').at(-1);
      assert.equal(failed?.['failure_reason'], 'handle_not_verified');
      assert.equal(failed?.['failed_authn_method'], 'oidc');
      assert.equal(failed?.['person_id'], registrant);
      assert.equal(events(s.org.id, 'AuthenticationSucceeded_v1').filter((e) => e['success_authn_method'] === 'oidc').length, 0);
      assert.equal(events(s.org.id, 'PersonCreated_v1').length, 1);

      // A JSON client is told the same with 403.
      const start = await s.browser.request(s.startUrl());
      const at = await s.browser.walk(start.location as string, { stop: (u) => u.startsWith(`${server.base}/authenticate/oidc/callback`) });
      const json = await s.browser.request(at.stoppedAt as string, { headers: { accept: 'application/json' } });
      assert.equal(json.status, 403, json.body);
      assert.match(JSON.parse(json.body).errors[0].message, /without verifying it/);
    } finally {
      await s.close();
    }
  });

  test('once a password reset mailed to the address is completed, the address is verified and SSO joins that person', async () => {
    const s = await ssoSetup(server, 'linking-reset', APP);
    try {
      const registered = await s.org.user.post('/register/password', { handle: emailHandle(VICTIM), password: PASSWORD });
      assert.equal(registered.status, 201, registered.text);
      const id = (await verifyIdentityToken(server, registered.body.result.token)).sub as string;
      assert.equal((await ssoSignIn(s)).get('error'), 'access_denied');

      const before = smtp.received.length;
      const asked = await s.org.admin.post(`/persons/${id}/credentials/password-reset`, {});
      assert.equal(asked.status, 202, asked.text);
      const link = resetLink(smtp.received[before]!);
      const done = await server.client.as('', '').post('/password-reset', { token: link.searchParams.get('token'), password: 'owner password 5678' });
      assert.equal(done.status, 204, done.text);
      // The reset ended the registrant's password too.
      assert.equal((await signIn(s.org, VICTIM, PASSWORD)).status, 401);

      const token = (await ssoSignIn(s)).get('token');
      assert.ok(token, 'the verified person is joined');
      assert.equal((await verifyIdentityToken(server, token)).sub, id);
    } finally {
      await s.close();
    }
  });

  test("a person the organization created is joined: the organization's API key vouches for the address", async () => {
    const s = await ssoSetup(server, 'linking-admin', APP);
    try {
      const created = await s.org.admin.post('/persons', { handles: [emailHandle(VICTIM)] });
      assert.equal(created.status, 201, created.text);
      const token = (await ssoSignIn(s)).get('token');
      assert.ok(token);
      assert.equal((await verifyIdentityToken(server, token)).sub, created.body.result.person_id);
    } finally {
      await s.close();
    }
  });

  test('a person the provider registered signs in again: the address was verified by the provider', async () => {
    const s = await ssoSetup(server, 'linking-sso', APP);
    try {
      const first = (await ssoSignIn(s)).get('token');
      assert.ok(first);
      const again = (await ssoSignIn(s)).get('token');
      assert.ok(again);
      assert.equal((await verifyIdentityToken(server, again)).sub, (await verifyIdentityToken(server, first)).sub);
    } finally {
      await s.close();
    }
  });
});
