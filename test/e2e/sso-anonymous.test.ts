// SSO sign-in with an anonymous person's token sent at the start (anonymous_token or Authorization: Bearer):
// registration upgrades that person, a sign-in of an existing person deletes it, as with password sign-in.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { removeDir, startTestServer, type TestServer } from '../support/server.js';
import { newOrg, personWithPassword, recordEvents, verifyIdentityToken, type Org } from '../support/auth.js';
import { ssoSetup, type SsoSetup } from '../support/sso.js';

const APP = 'http://127.0.0.1:9/signed-in';

let server: TestServer;
let events: ReturnType<typeof recordEvents>;

before(async () => {
  server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
  events = recordEvents(server);
});
after(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

const setup = (options: Record<string, unknown> = {}) => ssoSetup(server, 'sso-anon', APP, options);

async function anonymous(org: Org): Promise<{ token: string; person_id: string }> {
  const r = await org.user.post('/persons/anonymous', undefined);
  assert.equal(r.status, 201, r.text);
  const token = r.body.result as string;
  return { token, person_id: decodeJwt(token).sub as string };
}

/** Walks a started sign-in (the start's 302) through the provider to the organization's page; the token there. */
async function finish(s: SsoSetup, start: { status: number; location: string | null; body: string }): Promise<string> {
  assert.equal(start.status, 302, start.body);
  const walk = await s.browser.walk(start.location as string, { stop: (u) => u.startsWith(APP) });
  assert.ok(walk.stoppedAt, `ended at ${walk.last.status} ${walk.last.url}: ${walk.last.body.slice(0, 300)}`);
  const token = new URLSearchParams(new URL(walk.stoppedAt).hash.slice(1)).get('token');
  assert.ok(token, walk.stoppedAt);
  return token;
}

describe('SSO sign-in with an anonymous person', () => {
  test('registration with anonymous_token upgrades that same person: prev_person_type, prev_anonymous_person_id, the old token invalid', async () => {
    const s = await setup();
    try {
      const anon = await anonymous(s.org);
      const token = await finish(s, await s.browser.request(s.startUrl(`&anonymous_token=${encodeURIComponent(anon.token)}`)));
      const claims = await verifyIdentityToken(server, token);
      assert.equal(claims.sub, anon.person_id);
      assert.deepEqual(claims['authenticated_methods'], ['oidc']);
      assert.equal(claims['prev_anonymous_person_id'], anon.person_id);
      assert.equal(claims['person_type'], undefined);
      assert.equal(claims['first_token'], true);
      const created = events(s.org.id, 'PersonCreated_v1');
      assert.equal(created.length, 1);
      assert.equal(created[0]?.['person_id'], anon.person_id);
      assert.equal(created[0]?.['prev_person_type'], 'anonymous');
      assert.deepEqual(created[0]?.['handles'], [{ type: 'EmailAddress', value: 'ada@example.com' }]);
      const minted = events(s.org.id, 'TokenMinted_v1');
      assert.equal(minted.at(-1)?.['prev_anonymous_person_id'], anon.person_id);
      assert.equal(events(s.org.id, 'PersonDeleted_v1').length, 0);
      const person = await s.org.admin.get(`/persons/${anon.person_id}`);
      assert.equal(person.body.result.person_type, 'regular');
      const old = await server.client.post('/token/validate', { token: anon.token }, { 'Service-OrgID': '', 'Service-API-Key': '' });
      assert.equal(old.body.result.valid, false);
      // The next SSO sign-in finds the upgraded person by the handle.
      const again = await verifyIdentityToken(server, await finish(s, await s.browser.request(s.startUrl())));
      assert.equal(again.sub, anon.person_id);
      assert.equal(again['prev_anonymous_person_id'], undefined);
    } finally {
      await s.close();
    }
  });

  test('sign-in of an existing person with Authorization: Bearer at the start: that person, the claim and event, the anonymous person deleted', async () => {
    const s = await setup();
    try {
      const existing = await personWithPassword(s.org, 'ada@example.com', 'correct horse battery');
      const anon = await anonymous(s.org);
      const token = await finish(s, await s.browser.request(s.startUrl(), { headers: { Authorization: `Bearer ${anon.token}` } }));
      const claims = await verifyIdentityToken(server, token);
      assert.equal(claims.sub, existing);
      assert.equal(claims['prev_anonymous_person_id'], anon.person_id);
      assert.equal(events(s.org.id, 'TokenMinted_v1').at(-1)?.['prev_anonymous_person_id'], anon.person_id);
      const deleted = events(s.org.id, 'PersonDeleted_v1');
      assert.equal(deleted.length, 1);
      assert.equal(deleted[0]?.['person_id'], anon.person_id);
      assert.equal((await s.org.admin.get(`/persons/${anon.person_id}`)).status, 404);
    } finally {
      await s.close();
    }
  });

  test("groups_claim: the upgraded person gets the provider's groups, in the token and stored", async () => {
    const s = await setup({ authorize_scopes: ['groups'], groups_claim: 'groups' });
    try {
      assert.equal((await s.org.admin.post('/groups', { name: 'staff' })).status, 201);
      (s.idp.accounts.get('ada') as { groups?: string[] }).groups = ['staff', 'not-here'];
      const anon = await anonymous(s.org);
      const claims = await verifyIdentityToken(server, await finish(s, await s.browser.request(s.startUrl(`&anonymous_token=${encodeURIComponent(anon.token)}`))));
      assert.equal(claims.sub, anon.person_id);
      assert.deepEqual(claims['groups'], ['staff']);
      assert.deepEqual((await s.org.admin.get(`/persons/${anon.person_id}/groups`)).body.result, ['staff']);
      assert.equal(events(s.org.id, 'PersonCreated_v1').at(-1)?.['prev_person_type'], 'anonymous');
    } finally {
      await s.close();
    }
  });

  test('an anonymous person deleted while the browser is at the provider: an ordinary registration, no claim', async () => {
    const s = await setup();
    try {
      const anon = await anonymous(s.org);
      const start = await s.browser.request(s.startUrl(`&anonymous_token=${encodeURIComponent(anon.token)}`));
      assert.equal((await s.org.admin.delete(`/persons/${anon.person_id}`)).status, 204);
      const claims = await verifyIdentityToken(server, await finish(s, start));
      assert.notEqual(claims.sub, anon.person_id);
      assert.equal(claims['prev_anonymous_person_id'], undefined);
      const created = events(s.org.id, 'PersonCreated_v1');
      assert.equal(created.length, 1);
      assert.equal(created[0]?.['prev_person_type'], undefined);
    } finally {
      await s.close();
    }
  });

  test('the start refuses a token that is not a live anonymous one of this organization, or one sent twice: 400 naming it, no redirect, nothing recorded', async () => {
    const s = await setup();
    const other = await newOrg(server, 'other');
    try {
      const anon = await anonymous(s.org);
      const foreign = await anonymous(other);
      const regular = await personWithPassword(s.org, 'bob@example.com', 'correct horse battery');
      const minted = await s.org.admin.post(`/persons/${regular}/mint-token`, {});
      assert.equal(minted.status, 201, minted.text);
      const regularToken = minted.body.result as string;
      const before = events(s.org.id, 'AuthenticationFailed_v1').length;
      const cases: Array<[string, Record<string, string>, RegExp]> = [
        [`&anonymous_token=not-a-token`, {}, /^anonymous_token: not a valid token/],
        [`&anonymous_token=${foreign.token}`, {}, /^anonymous_token: not an anonymous person's token of this organization/],
        [`&anonymous_token=${regularToken}`, {}, /^anonymous_token: not an anonymous person's token of this organization/],
        ['', { Authorization: `Bearer ${foreign.token}` }, /^Authorization: not an anonymous person's token of this organization/],
        ['', { Authorization: 'Basic abc' }, /^Authorization: must be Bearer/],
        [`&anonymous_token=${anon.token}`, { Authorization: `Bearer ${anon.token}` }, /^anonymous_token: send the anonymous token once/],
      ];
      for (const [extra, headers, message] of cases) {
        const r = await s.browser.request(s.startUrl(extra), { headers });
        assert.equal(r.status, 400, `${extra} ${JSON.stringify(headers)}: ${r.status} ${r.body}`);
        assert.equal(r.location, null);
        assert.match(JSON.parse(r.body).errors[0].message, message, `${extra.slice(0, 40)} ${JSON.stringify(headers).slice(0, 40)}`);
      }
      assert.equal(events(s.org.id, 'AuthenticationFailed_v1').length, before);
      assert.equal((await s.org.admin.get(`/persons/${anon.person_id}`)).status, 200);
    } finally {
      await s.close();
    }
  });
});
