// SSO sign-in through azuread with a multi-tenant tenant (the ID token's issuer is the person's own tenant) and
// through apple (form_post callback, client-secret JWT), end to end against loopback stand-ins that run a real
// OpenID provider under the real issuers, the service's calls rerouted to them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { fetch } from 'undici';
import { removeDir, startTestServer, type TestServer } from '../support/server.js';
import { newOrg, recordEvents, verifyIdentityToken, type Org } from '../support/auth.js';
import { WalkingClient } from '../support/oidc-provider.js';
import { startAppleStandIn, startEntraStandIn, type StandIn } from '../support/provider-stand-ins.js';

const APP = 'http://127.0.0.1:9/signed-in';

let server: TestServer;
let events: ReturnType<typeof recordEvents>;
let callback: string;
/** filled in by each test with its stand-in's address: the service reads it at each call */
const reroute: Record<string, string> = {};

before(async () => {
  server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' }, { ssoReroute: reroute });
  events = recordEvents(server);
  callback = `${server.base}/authenticate/oidc/callback`;
});
after(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

const fragment = (url: string) => new URLSearchParams(new URL(url).hash.slice(1));
const lastFailure = (org: Org) => events(org.id, 'AuthenticationFailed_v1').at(-1);

async function orgWith(credential: Record<string, unknown>): Promise<Org> {
  const org = await newOrg(server, 'sso');
  assert.equal((await org.admin.patch('/organizations/config', { sso_allowed_redirect_uris: [APP] })).status, 200);
  const cred = await org.admin.post('/organizations/sso/oidc/provider-credentials', credential);
  assert.equal(cred.status, 201, cred.text);
  return org;
}

const startUrl = (org: Org, clientId: string) => `${server.base}/authenticate/oidc/${clientId}/start?org_id=${org.id}&redirect_uri=${encodeURIComponent(APP)}`;

describe('azuread with a multi-tenant endpoint', () => {
  async function entra(tenant: string, o: { issuerTenant?: string } = {}) {
    const tid = randomUUID();
    const idp = await startEntraStandIn({ redirectUris: [callback], tenantId: tid, ...o });
    Object.assign(reroute, idp.reroute);
    const org = await orgWith({ client_id: idp.clientId, client_secret: 'entra-secret-0123456789', provider: 'azuread', options: { azuread: { tenant } } });
    return { tid, idp, org, browser: new WalkingClient() };
  }

  async function walk(s: { idp: StandIn; org: Org; browser: WalkingClient }) {
    const w = await s.browser.walk(startUrl(s.org, s.idp.clientId), { stop: (u) => u.startsWith(APP), rewrite: (u) => s.idp.rewrite(u) });
    assert.ok(w.stoppedAt, `ended at ${w.last.status} ${w.last.url}: ${w.last.body.slice(0, 300)}`);
    return { f: fragment(w.stoppedAt), hops: w.hops };
  }

  for (const tenant of ['common', 'organizations', 'consumer'] as const) {
    test(`tenant ${tenant}: the ID token's issuer is checked against Microsoft's template with its tid, and the person signs in`, async () => {
      const s = await entra(tenant);
      try {
        const start = await s.browser.request(startUrl(s.org, s.idp.clientId));
        assert.equal(start.status, 302, start.body);
        // The seed's `consumer` is Microsoft's `consumers`.
        const path = `/${tenant === 'consumer' ? 'consumers' : tenant}/oauth2/v2.0/authorize`;
        assert.equal(new URL(start.location as string).href.split('?')[0], `https://login.microsoftonline.com${path}`);
        const { f } = await walk(s);
        const token = f.get('token');
        assert.ok(token, f.toString());
        const claims = await verifyIdentityToken(server, token);
        assert.deepEqual(claims['authenticated_methods'], ['oidc']);
        assert.deepEqual(events(s.org.id, 'PersonCreated_v1')[0]?.['handles'], [{ type: 'EmailAddress', value: 'grace@contoso.example' }]);
      } finally {
        await s.browser.close();
        await s.idp.stop();
      }
    });
  }

  test("an ID token whose issuer names another tenant than its tid is refused, recorded", async () => {
    const s = await entra('common', { issuerTenant: randomUUID() });
    try {
      const { f } = await walk(s);
      assert.equal(f.get('token'), null);
      assert.equal(f.get('error'), 'access_denied');
      assert.match(f.get('error_description') ?? '', /ID token was refused/);
      const failed = lastFailure(s.org);
      assert.equal(failed?.['failure_reason'], 'invalid_id_token');
      assert.match(failed?.['failure_detail'], /"iss" \(issuer\) claim value/);
      assert.equal(events(s.org.id, 'PersonCreated_v1').length, 0);
    } finally {
      await s.browser.close();
      await s.idp.stop();
    }
  });

  test('without xms_edov (or email_verified) the email is not trusted: email_not_verified', async () => {
    const s = await entra('organizations');
    try {
      delete s.idp.claims['xms_edov'];
      const { f } = await walk(s);
      assert.equal(f.get('error'), 'access_denied');
      assert.match(f.get('error_description') ?? '', /xms_edov/);
      assert.equal(lastFailure(s.org)?.['failure_reason'], 'email_not_verified');
    } finally {
      await s.browser.close();
      await s.idp.stop();
    }
  });
});

describe('apple: form_post callback', () => {
  async function apple() {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const clientId = 'com.example.web';
    const idp = await startAppleStandIn({ redirectUris: [callback], clientId, teamId: 'TEAM123456', keyId: 'KEY9876543', publicKeyPem: await exportSPKI(publicKey) });
    Object.assign(reroute, idp.reroute);
    const org = await orgWith({
      client_id: clientId,
      client_secret: 'unused',
      provider: 'apple',
      options: { apple: { private_key: await exportPKCS8(privateKey), team_id: 'TEAM123456', key_id: 'KEY9876543' } },
    });
    return { idp, org, browser: new WalkingClient() };
  }

  /** The provider's auto-submitting form_post page: its action and fields. */
  function formPost(html: string): { action: string; fields: URLSearchParams } {
    const action = /<form[^>]*action="([^"]+)"/i.exec(html)?.[1];
    assert.ok(action, html.slice(0, 500));
    const fields = new URLSearchParams();
    for (const m of html.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/gi)) fields.set(m[1] as string, (m[2] as string).replace(/&amp;/g, '&'));
    return { action: action.replace(/&amp;/g, '&'), fields };
  }

  test('the POSTed code and state, without the SameSite=Lax cookie, are passed to the GET callback, where the cookie binds them', async () => {
    const s = await apple();
    try {
      const start = await s.browser.request(startUrl(s.org, s.idp.clientId));
      assert.equal(start.status, 302, start.body);
      assert.equal(new URL(start.location as string).searchParams.get('response_mode'), 'form_post');
      const w = await s.browser.walk(s.idp.rewrite(start.location as string), { stop: (u) => u.startsWith(APP), rewrite: (u) => s.idp.rewrite(u) });
      assert.equal(w.last.status, 200, w.last.body.slice(0, 300));
      const post = formPost(w.last.body);
      assert.equal(post.action, callback);
      assert.ok(post.fields.get('code') && post.fields.get('state'), post.fields.toString());
      post.fields.set('user', JSON.stringify({ name: { firstName: 'Tim', lastName: 'A' }, email: 'tim@privaterelay.appleid.com' }));

      // A browser sends no SameSite=Lax cookie with a cross-site POST: neither does this one.
      const res = await fetch(post.action, { method: 'POST', body: post.fields.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' });
      assert.equal(res.status, 303, await res.text());
      const get = new URL(res.headers.get('location') as string, post.action);
      assert.equal(get.pathname, '/authenticate/oidc/callback');
      // code and state (and RFC 9207's iss, which this provider adds) go on; Apple's `user` stays behind.
      assert.equal(get.searchParams.get('code'), post.fields.get('code'));
      assert.equal(get.searchParams.get('state'), post.fields.get('state'));
      assert.equal(get.searchParams.get('user'), null);
      assert.equal(res.headers.get('set-cookie'), null);

      // The top-level GET it leads to carries the cookie.
      const done = await s.browser.request(get.href);
      assert.equal(done.status, 302, done.body);
      const token = fragment(done.location as string).get('token');
      assert.ok(token, done.location ?? '');
      const claims = await verifyIdentityToken(server, token);
      assert.deepEqual(claims['authenticated_methods'], ['oidc']);
      assert.deepEqual(events(s.org.id, 'PersonCreated_v1')[0]?.['handles'], [{ type: 'EmailAddress', value: 'tim@privaterelay.appleid.com' }]);
    } finally {
      await s.browser.close();
      await s.idp.stop();
    }
  });

  test('a POSTed state reaching the GET callback without the cookie is refused as not started by this browser', async () => {
    const s = await apple();
    try {
      const w = await s.browser.walk(startUrl(s.org, s.idp.clientId), { stop: (u) => u.startsWith(APP), rewrite: (u) => s.idp.rewrite(u) });
      const post = formPost(w.last.body);
      const res = await fetch(post.action, { method: 'POST', body: post.fields.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' });
      assert.equal(res.status, 303);
      const other = await fetch(new URL(res.headers.get('location') as string, post.action), { redirect: 'manual' });
      assert.equal(other.status, 400);
      assert.match(((await other.json()) as { errors: Array<{ message: string }> }).errors[0]?.message ?? '', /not started by this browser/);
      assert.equal(lastFailure(s.org)?.['failure_reason'], 'invalid_state');
    } finally {
      await s.browser.close();
      await s.idp.stop();
    }
  });
});
