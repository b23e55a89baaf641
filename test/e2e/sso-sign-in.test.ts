// SSO sign-in end to end: a real OpenID provider (oidc-provider) on loopback configured as a `service`
// credential, walked through with an HTTP client that keeps cookies and submits the provider's forms.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { JWTPayload } from 'jose';
import { startReceiver } from '../../scripts/webhook-receiver.js';
import { removeDir, startTestServer, type TestServer } from '../support/server.js';
import { openStore } from '../../src/wal/store.js';
import { recordEvents, verifyIdentityToken, type Org } from '../support/auth.js';
import { ssoSetup, type SsoSetup } from '../support/sso.js';

/** The organization's page that receives the token; nothing listens there: the walk stops before it. */
const APP = 'http://127.0.0.1:9/signed-in';

let server: TestServer;
let events: ReturnType<typeof recordEvents>;
let callback: string;

before(async () => {
  server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
  events = recordEvents(server);
  callback = `${server.base}/authenticate/oidc/callback`;
});
after(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

/** A fresh organization with the provider as its `service` credential and APP on its redirect allow-list. */
const setup = (options: Record<string, unknown> = {}) => ssoSetup(server, 'sso', APP, options);

const fragment = (url: string) => new URLSearchParams(new URL(url).hash.slice(1));
const failures = (org: Org) => events(org.id, 'AuthenticationFailed_v1');

/** Walks from the start through the provider's forms up to (not into) the service's callback. */
async function toCallback(s: SsoSetup, rewrite?: (url: string) => string): Promise<string> {
  const walk = await s.browser.walk(s.startUrl(), { stop: (u) => u.startsWith(callback), ...(rewrite && { rewrite }) });
  assert.ok(walk.stoppedAt, `the walk ended at ${walk.last.status} ${walk.last.url}: ${walk.last.body.slice(0, 300)}`);
  return walk.stoppedAt;
}

/** The callback as the browser calls it; the redirect it answers. */
async function callBack(s: SsoSetup, url: string): Promise<{ status: number; location: string | null; body: string }> {
  return s.browser.request(url);
}

describe('SSO sign-in through a loopback OpenID provider', () => {
  test('signs a new person in by verified email: token in the fragment, hooks told method oidc, PersonCreated; the next sign-in finds them', async () => {
    const s = await setup();
    const seen: JWTPayload[] = [];
    const receiver = await startReceiver({ serviceUrl: server.base, orgId: s.org.id, claims: (p) => (seen.push(p), { plan: 'pro' }) });
    try {
      const w = await s.org.admin.post('/organizations/webhooks', { name: 'hook', target_url: receiver.url });
      assert.equal(w.status, 201, w.text);
      const t = await s.org.admin.post(`/organizations/webhooks/${w.body.result.id}/triggers`, { trigger_type: 'sync_hook', trigger_name: 'token_minted' });
      assert.equal(t.status, 201, t.text);

      const start = await s.browser.request(s.startUrl());
      assert.equal(start.status, 302);
      const authorize = new URL(start.location as string);
      assert.equal(authorize.origin, s.idp.issuer);
      assert.equal(authorize.searchParams.get('client_id'), s.idp.clientId);
      assert.equal(authorize.searchParams.get('redirect_uri'), callback);
      assert.deepEqual(authorize.searchParams.get('scope')?.split(' '), ['openid', 'email', 'profile']);
      assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
      for (const p of ['state', 'nonce', 'code_challenge']) assert.ok((authorize.searchParams.get(p) ?? '').length >= 32, p);

      const walk = await s.browser.walk(start.location as string, { stop: (u) => u.startsWith(APP) });
      assert.ok(walk.stoppedAt, `ended at ${walk.last.status} ${walk.last.url}: ${walk.last.body.slice(0, 300)}`);
      const token = fragment(walk.stoppedAt).get('token');
      assert.ok(token, walk.stoppedAt);
      const claims = await verifyIdentityToken(server, token);
      assert.deepEqual(claims['authenticated_methods'], ['oidc']);
      assert.equal(claims['plan'], 'pro');
      const created = events(s.org.id, 'PersonCreated_v1');
      assert.equal(created.length, 1);
      assert.equal(claims.sub, created[0]?.['person_id']);
      assert.equal(claims['person_id'], claims.sub);
      assert.deepEqual(created[0]?.['handles'], [{ type: 'EmailAddress', value: 'ada@example.com' }]);
      const succeeded = events(s.org.id, 'AuthenticationSucceeded_v1');
      assert.equal(succeeded.at(-1)?.['success_authn_method'], 'oidc');

      assert.equal(seen.length, 1);
      const content = seen[0]?.['trigger_content'] as Record<string, any>;
      assert.equal(content['authentications'][0].method, 'oidc');
      assert.deepEqual(content['authentications'][0].handle, { type: 'email_address', value: 'ada@example.com' });

      // Again: the same person, no second registration.
      const again = await s.browser.walk(s.startUrl(), { stop: (u) => u.startsWith(APP) });
      const second = await verifyIdentityToken(server, fragment(again.stoppedAt as string).get('token') as string);
      assert.equal(second.sub, claims.sub);
      assert.equal(events(s.org.id, 'PersonCreated_v1').length, 1);
      assert.equal(failures(s.org).length, 0);
    } finally {
      await receiver.close();
      await s.close();
    }
  });

  test('answers {token} to a client that asks for JSON, and the start takes Service-OrgID in place of org_id', async () => {
    const s = await setup();
    try {
      const start = await s.browser.request(s.startUrl().replace(`org_id=${s.org.id}&`, ''), { headers: { 'Service-OrgID': s.org.id } });
      assert.equal(start.status, 302, start.body);
      const at = await s.browser.walk(start.location as string, { stop: (u) => u.startsWith(callback) });
      const res = await s.browser.request(at.stoppedAt as string, { headers: { accept: 'application/json' } });
      assert.equal(res.status, 200, res.body);
      const claims = await verifyIdentityToken(server, JSON.parse(res.body).result.token);
      assert.deepEqual(claims['authenticated_methods'], ['oidc']);
    } finally {
      await s.close();
    }
  });

  test('a state this browser did not start is refused (400 naming the state) and recorded', async () => {
    const s = await setup();
    try {
      const at = new URL(await toCallback(s));
      at.searchParams.set('state', 'x'.repeat(43));
      const res = await callBack(s, at.href);
      assert.equal(res.status, 400);
      assert.match(JSON.parse(res.body).errors[0].message, /^state: not a sign-in this service started/);
      assert.equal(failures(s.org).at(-1)?.['failure_reason'], 'invalid_state');
      assert.equal(failures(s.org).at(-1)?.['failed_authn_method'], 'oidc');
    } finally {
      await s.close();
    }
  });

  test('a replayed state is refused as single use, and recorded', async () => {
    const s = await setup();
    try {
      const at = await toCallback(s);
      const first = await callBack(s, at);
      assert.equal(first.status, 302);
      assert.ok(fragment(first.location as string).get('token'));
      const replay = await callBack(s, at);
      assert.equal(replay.status, 400);
      assert.match(JSON.parse(replay.body).errors[0].message, /single use/);
      assert.equal(failures(s.org).at(-1)?.['failure_reason'], 'state_already_used');
    } finally {
      await s.close();
    }
  });

  test('an ID token with another nonce is refused: error redirect naming the nonce, recorded', async () => {
    const s = await setup();
    try {
      // The provider is asked for another nonce than the one the service keeps, so its ID token carries that one.
      const at = await toCallback(s, (u) => (u.startsWith(s.idp.issuer) && u.includes('nonce=') ? u.replace(/nonce=[^&]+/, 'nonce=forged-nonce-value') : u));
      const res = await callBack(s, at);
      assert.equal(res.status, 302);
      assert.ok(res.location?.startsWith(APP));
      const f = fragment(res.location as string);
      assert.equal(f.get('error'), 'access_denied');
      assert.match(f.get('error_description') ?? '', /nonce/);
      assert.equal(f.get('token'), null);
      const failed = failures(s.org).at(-1);
      assert.equal(failed?.['failure_reason'], 'invalid_id_token');
      assert.match(failed?.['failure_detail'], /nonce/);
    } finally {
      await s.close();
    }
  });

  test('a code already redeemed is refused by the provider: the error names invalid_grant, recorded', async () => {
    const s = await setup();
    try {
      const at = await toCallback(s);
      await s.idp.consumeCode(new URL(at).searchParams.get('code') as string);
      const res = await callBack(s, at);
      const f = fragment(res.location as string);
      assert.equal(f.get('error'), 'access_denied');
      assert.match(f.get('error_description') ?? '', /refused the code exchange: invalid_grant/);
      assert.equal(failures(s.org).at(-1)?.['failure_reason'], 'code_exchange_failed');
    } finally {
      await s.close();
    }
  });

  test('an ID token signed by a key the provider does not publish is refused, recorded', async () => {
    const s = await setup();
    try {
      const at = await toCallback(s);
      s.idp.publishKeys([await s.idp.otherKey()]);
      const res = await callBack(s, at);
      const f = fragment(res.location as string);
      assert.equal(f.get('error'), 'access_denied');
      assert.match(f.get('error_description') ?? '', /ID token was refused/);
      assert.equal(failures(s.org).at(-1)?.['failure_reason'], 'invalid_id_token');
      assert.equal(events(s.org.id, 'PersonCreated_v1').length, 0);
    } finally {
      await s.close();
    }
  });

  test('a redirect_uri off the allow-list is refused at the start (400 naming it), recorded', async () => {
    const s = await setup();
    try {
      const res = await s.browser.request(s.startUrl().replace(encodeURIComponent(APP), encodeURIComponent('https://evil.example/steal')));
      assert.equal(res.status, 400);
      assert.match(JSON.parse(res.body).errors[0].message, /^redirect_uri: "https:\/\/evil\.example\/steal" is not on the organization's sso_allowed_redirect_uris/);
      assert.equal(res.location, null);
      assert.equal(failures(s.org).at(-1)?.['failure_reason'], 'redirect_uri_not_allowed');
    } finally {
      await s.close();
    }
  });

  test('a provider that is down: the callback redirects with server_error (502 for JSON), recorded; the start answers 502', async () => {
    const s = await setup();
    try {
      const at = await toCallback(s);
      await s.idp.stop();
      const res = await callBack(s, at);
      const f = fragment(res.location as string);
      assert.equal(f.get('error'), 'server_error');
      assert.match(f.get('error_description') ?? '', /could not be reached/);
      assert.equal(failures(s.org).at(-1)?.['failure_reason'], 'provider_unreachable');
      // Discovery was forgotten on the failure, so the next start looks again and finds nobody.
      const start = await s.browser.request(s.startUrl());
      assert.equal(start.status, 502, start.body);
      assert.match(JSON.parse(start.body).errors[0].message, /could not be reached for OpenID discovery/);
    } finally {
      await s.close();
    }
  });

  test("the provider's access_denied ends the flow: a redirect carrying the error, recorded, never a 500", async () => {
    const s = await setup();
    try {
      const interaction = await s.browser.walk(s.startUrl(), { stop: (u) => u.includes('/interaction/') });
      const walk = await s.browser.walk(`${interaction.stoppedAt}/abort`, { stop: (u) => u.startsWith(APP) });
      const f = fragment(walk.stoppedAt as string);
      assert.equal(f.get('error'), 'access_denied');
      assert.match(f.get('error_description') ?? '', /the provider ended the sign-in: "access_denied"/);
      const failed = failures(s.org).at(-1);
      assert.equal(failed?.['failure_reason'], 'provider_error');
      assert.match(failed?.['failure_detail'], /access_denied/);
    } finally {
      await s.close();
    }
  });

  test("groups_claim: the person's groups follow the provider's claim at each sign-in, groups the organization lacks ignored", async () => {
    const s = await setup({ authorize_scopes: ['groups'], groups_claim: 'groups' });
    try {
      for (const name of ['admins', 'staff']) assert.equal((await s.org.admin.post('/groups', { name })).status, 201);
      (s.idp.accounts.get('ada') as { groups?: string[] }).groups = ['admins', 'not-here'];
      const first = await s.browser.walk(s.startUrl(), { stop: (u) => u.startsWith(APP) });
      const claims = await verifyIdentityToken(server, fragment(first.stoppedAt as string).get('token') as string);
      assert.deepEqual(claims['groups'], ['admins']);

      (s.idp.accounts.get('ada') as { groups?: string[] }).groups = ['staff'];
      const second = await s.browser.walk(s.startUrl(), { stop: (u) => u.startsWith(APP) });
      const again = await verifyIdentityToken(server, fragment(second.stoppedAt as string).get('token') as string);
      assert.deepEqual(again['groups'], ['staff']);
      const stored = await s.org.admin.get(`/persons/${claims.sub}/groups`);
      assert.deepEqual(stored.body.result, ['staff']);
    } finally {
      await s.close();
    }
  });

  test('an unknown person is not registered when the organization denies self-registration: 403 reason recorded', async () => {
    const s = await setup();
    try {
      assert.equal((await s.org.admin.patch('/organizations/config', { deny_self_registration: true })).status, 200);
      const walk = await s.browser.walk(s.startUrl(), { stop: (u) => u.startsWith(APP) });
      const f = fragment(walk.stoppedAt as string);
      assert.equal(f.get('error'), 'access_denied');
      assert.match(f.get('error_description') ?? '', /self-registration is disabled/);
      const failed = failures(s.org).at(-1);
      assert.equal(failed?.['failure_reason'], 'self_registration_denied');
      assert.deepEqual(failed?.['handle'], { type: 'EmailAddress', value: 'ada@example.com' });
      assert.equal(events(s.org.id, 'PersonCreated_v1').length, 0);
    } finally {
      await s.close();
    }
  });

  test('the start: an unknown credential is 404, an unknown organization 404, neither org_id nor Service-OrgID 400, a malformed org_id 400', async () => {
    const s = await setup();
    try {
      const unknown = await s.browser.request(s.startUrl().replace(`/oidc/${s.idp.clientId}/`, '/oidc/nobody/'));
      assert.equal(unknown.status, 404);
      assert.match(JSON.parse(unknown.body).errors[0].message, /credential "nobody" not found/);
      const noOrg = await s.browser.request(s.startUrl().replace(`org_id=${s.org.id}`, 'org_id=no-such-org'));
      assert.equal(noOrg.status, 404);
      const none = await s.browser.request(s.startUrl().replace(`org_id=${s.org.id}&`, ''));
      assert.equal(none.status, 400);
      assert.match(JSON.parse(none.body).errors[0].message, /org_id/);
      const malformed = await s.browser.request(s.startUrl().replace(`org_id=${s.org.id}`, 'org_id=bad%20id'));
      assert.equal(malformed.status, 400);
      assert.match(JSON.parse(malformed.body).errors[0].message, /^org_id: must be 1-64 characters/);
      // Service-OrgID wins over org_id when both are given.
      const both = await s.browser.request(s.startUrl().replace(`org_id=${s.org.id}`, 'org_id=no-such-org'), { headers: { 'Service-OrgID': s.org.id } });
      assert.equal(both.status, 302, both.body);
    } finally {
      await s.close();
    }
  });

  // Last: it restarts the shared server.
  test('a sign-in whose pending record lapsed (removed at its expiry) fails as expired, recorded through the still-valid cookie', async () => {
    const s = await setup();
    try {
      const at = new URL(await toCallback(s));
      const cookie = `sso_state=${s.browser.cookies(at.href).get('sso_state')}`;
      await server.stop();
      // What the expiry sweep does after 10 minutes, done while the service is down.
      const store = openStore(server.dataDir, 'local', true);
      await store.ssoPending.remove(at.searchParams.get('state') as string);
      await store.close();
      server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' }, {}, server.dataDir);
      events = recordEvents(server);
      const moved = new URL(`${server.base}${at.pathname}${at.search}`);
      const res = await s.browser.request(moved.href, { headers: { cookie } });
      assert.equal(res.status, 400, res.body);
      assert.match(JSON.parse(res.body).errors[0].message, /expired \(10 minutes\); start again/);
      assert.equal(failures(s.org).at(-1)?.['failure_reason'], 'state_expired');
    } finally {
      await s.close();
    }
  });
});
