import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { startTestServer, type TestServer } from '../support/server.js';
import { emailHandle, newOrg, personWithPassword, recordEvents, sameOrgOn, verifyIdentityToken, type Org } from '../support/auth.js';
import { movableClock } from '../support/clock.js';
import { Subscriber } from '../support/ws.js';

const PASSWORD = 'correct horse battery';
const TTL = 3600;

describe('anonymous persons', () => {
  let server: TestServer;
  let events: ReturnType<typeof recordEvents>;
  const commits: Array<{ org: string; names: string[] }> = [];
  const clock = movableClock();
  before(async () => {
    server = await startTestServer({ SERVICE_ANONYMOUS_TTL: String(TTL), SERVICE_ANONYMOUS_RATE_PER_IP: '25', SERVICE_BROWSER_RATE_WINDOW: '3600', SERVICE_ANONYMOUS_SWEEP_INTERVAL_MS: '100' }, { clock });
    events = recordEvents(server);
    server.service.commits.subscribe((c) => commits.push({ org: c.org, names: c.events.map((e) => (e.event as Record<string, any>)['event_metadata'].event_name) }));
  });
  after(() => server.stop());

  async function anonymous(org: Org, body?: unknown): Promise<{ token: string; person_id: string }> {
    const r = await org.user.post('/persons/anonymous', body);
    assert.equal(r.status, 201, r.text);
    const token = r.body.result as string;
    return { token, person_id: decodeJwt(token).sub as string };
  }
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  test('creation: 201 with the token, both events in one commit, the claims, person_type in the records', async () => {
    const org = await newOrg(server);
    const r = await org.user.post('/persons/anonymous', undefined, { 'Service-Analytics-Correlation-ID': '0195f3a2-0000-7000-8000-0000000000aa' });
    assert.equal(r.status, 201);
    const token = r.body.result as string;
    const claims = await verifyIdentityToken(server, token);
    const id = claims.sub as string;
    assert.equal(claims['person_type'], 'anonymous');
    assert.deepEqual(claims['authenticated_methods'], ['anonymous']);
    assert.equal(claims['first_token'], true);
    assert.equal(claims['oid'], org.id);
    assert.equal(claims['region'], 'europe-belgium');
    const auths = claims['authentications'] as Array<{ method: string; timestamp: string }>;
    assert.equal(auths.length, 1);
    assert.equal(auths[0]?.method, 'anonymous');
    assert.equal((claims.exp as number) - (claims.iat as number), TTL);

    assert.ok(commits.some((c) => c.org === org.id && c.names.join() === 'AnonymousPersonCreated_v1,AnonymousTokenMinted_v1'), 'one commit holds both');
    const [created] = events(org.id, 'AnonymousPersonCreated_v1');
    assert.deepEqual({ ...created, event_metadata: undefined }, {
      event_metadata: undefined,
      analytics_metadata: { analytics_correlation_id: '0195f3a2-0000-7000-8000-0000000000aa', client_ip_address: '127.0.0.1' },
      person_id: id,
      region: 'europe-belgium',
    });
    assert.equal(created?.['event_metadata'].source, 'Cloud');
    const [minted] = events(org.id, 'AnonymousTokenMinted_v1');
    assert.equal(minted?.['token_id'], claims.jti);
    assert.equal(minted?.['person_id'], id);
    assert.equal(minted?.['mint_token_api'], false);
    assert.equal(Date.parse(minted?.['expires_at']) / 1000, claims.exp);
    assert.equal(events(org.id, 'TokenMinted_v1').length, 0);
    assert.equal(events(org.id, 'PersonCreated_v1').length, 0);

    const person = await org.admin.get(`/persons/${id}`);
    assert.equal(person.body.result.person_type, 'anonymous');
    assert.deepEqual(person.body.result.handles, []);
    const list = await org.admin.get('/persons');
    assert.deepEqual(list.body.result.map((p: any) => [p.person_id, p.person_type]), [[id, 'anonymous']]);
    const valid = await server.client.post('/token/validate', { token }, { 'Service-OrgID': '', 'Service-API-Key': '' });
    assert.equal(valid.body.result.valid, true);
  });

  test('the region is one of the configured ones; an unknown organization 404', async () => {
    const org = await newOrg(server);
    const bad = await org.user.post('/persons/anonymous', { region: 'mars-olympus' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.errors[0].message, /region/);
    const unknown = await server.client.as('no-such-org', '').post('/persons/anonymous');
    assert.equal(unknown.status, 404);
    assert.equal(events(org.id).length, 0);
  });

  test('mint-token for an anonymous person: AnonymousTokenMinted with mint_token_api, never past its life', async () => {
    const org = await newOrg(server);
    const anon = await anonymous(org);
    const r = await org.admin.post(`/persons/${anon.person_id}/mint-token`, {});
    assert.equal(r.status, 201);
    const claims = decodeJwt(r.body.result);
    assert.equal(claims['person_type'], 'anonymous');
    const minted = events(org.id, 'AnonymousTokenMinted_v1');
    assert.equal(minted.length, 2);
    assert.equal(minted[1]?.['mint_token_api'], true);
    assert.ok((claims.exp as number) <= (decodeJwt(anon.token).exp as number));
    assert.equal(events(org.id, 'TokenMinted_v1').length, 0);
  });

  test('registration with the anonymous token upgrades that same person; the old token stops validating', async () => {
    const org = await newOrg(server);
    const anon = await anonymous(org);
    const r = await org.user.post('/register/password', { handle: emailHandle('cart@example.com'), password: PASSWORD }, bearer(anon.token));
    assert.equal(r.status, 201, r.text);
    const claims = await verifyIdentityToken(server, r.body.result.token);
    assert.equal(claims.sub, anon.person_id);
    assert.equal(claims['prev_anonymous_person_id'], anon.person_id);
    assert.equal(claims['person_type'], undefined);
    assert.equal(claims['first_token'], true);
    const [created] = events(org.id, 'PersonCreated_v1');
    assert.equal(created?.['person_id'], anon.person_id);
    assert.equal(created?.['prev_person_type'], 'anonymous');
    assert.deepEqual(created?.['handles'], [{ type: 'EmailAddress', value: 'cart@example.com' }]);
    const [minted] = events(org.id, 'TokenMinted_v1');
    assert.equal(minted?.['prev_anonymous_person_id'], anon.person_id);
    assert.equal(minted?.['first_token'], true);
    assert.equal(events(org.id, 'PersonDeleted_v1').length, 0);
    const person = await org.admin.get(`/persons/${anon.person_id}`);
    assert.equal(person.body.result.person_type, 'regular');
    const old = await server.client.post('/token/validate', { token: anon.token }, { 'Service-OrgID': '', 'Service-API-Key': '' });
    assert.equal(old.body.result.valid, false);
    // The person signs in with the new password like anyone.
    const again = await org.user.post('/authenticate/password', { handle: emailHandle('cart@example.com'), password: PASSWORD });
    assert.equal(again.status, 200);
    // Upgraded, the person no longer expires.
    clock.advance((TTL + 10) * 1000);
    try {
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal((await org.admin.get(`/persons/${anon.person_id}`)).status, 200);
    } finally {
      clock.advance(-(TTL + 10) * 1000);
    }
  });

  test('an organization that approves new persons by hand: registration with the anonymous token awaits approval as a new person; the anonymous one stays', async () => {
    const org = await newOrg(server);
    assert.equal((await org.admin.patch('/organizations/config', { requires_manual_approval: true })).status, 200);
    const anon = await anonymous(org);
    const r = await org.user.post('/register/password', { handle: emailHandle('pending@example.com'), password: PASSWORD }, bearer(anon.token));
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.result.awaiting_approval, true);
    assert.notEqual(r.body.result.person_id, anon.person_id);
    assert.equal((await org.admin.get(`/persons/${r.body.result.person_id}`)).body.result.active, false);
    assert.equal((await org.admin.get(`/persons/${anon.person_id}`)).body.result.person_type, 'anonymous');
    const held = await server.client.post('/token/validate', { token: anon.token }, { 'Service-OrgID': '', 'Service-API-Key': '' });
    assert.equal(held.body.result.valid, true, 'the anonymous token still works until approval');
  });

  test('sign-in to an existing person with the anonymous token: that person, the claim and event, the anonymous person deleted', async () => {
    const org = await newOrg(server);
    const existing = await personWithPassword(org, 'ada@example.com', PASSWORD);
    const anon = await anonymous(org);
    const r = await org.user.post('/authenticate/password', { handle: emailHandle('ada@example.com'), password: PASSWORD }, bearer(anon.token));
    assert.equal(r.status, 200, r.text);
    const claims = await verifyIdentityToken(server, r.body.result.token);
    assert.equal(claims.sub, existing);
    assert.equal(claims['prev_anonymous_person_id'], anon.person_id);
    const [minted] = events(org.id, 'TokenMinted_v1');
    assert.equal(minted?.['prev_anonymous_person_id'], anon.person_id);
    const [deleted] = events(org.id, 'PersonDeleted_v1');
    assert.deepEqual({ ...deleted, event_metadata: undefined }, { event_metadata: undefined, person_id: anon.person_id, region: 'europe-belgium', handles: [], groups: [] });
    assert.equal((await org.admin.get(`/persons/${anon.person_id}`)).status, 404);
  });

  test('a bearer that is not a live anonymous token of this organization is refused with 400, nothing recorded', async () => {
    const org = await newOrg(server);
    const other = await newOrg(server);
    const foreign = await anonymous(other);
    await personWithPassword(org, 'bob@example.com', PASSWORD);
    const regular = (await org.user.post('/authenticate/password', { handle: emailHandle('bob@example.com'), password: PASSWORD })).body.result.token as string;
    const before = events(org.id).length;
    for (const [headers, message] of [
      [bearer(foreign.token), /of this organization/],
      [bearer(regular), /anonymous person's token/],
      [bearer('garbage'), /not a valid token/],
      [{ Authorization: 'Basic abc' }, /Bearer/],
    ] as const) {
      const r = await org.user.post('/register/password', { handle: emailHandle('new@example.com'), password: PASSWORD }, headers);
      assert.equal(r.status, 400, r.text);
      assert.match(r.body.errors[0].message, message);
    }
    assert.equal(events(org.id).length, before);
    assert.equal((await other.admin.get(`/persons/${foreign.person_id}`)).body.result.person_type, 'anonymous');
  });

  test('creation is rate-limited per address: 429 with Retry-After', async () => {
    const org = await newOrg(server);
    let limited;
    for (let i = 0; i < 30 && !limited; i++) {
      const r = await org.user.post('/persons/anonymous');
      if (r.status === 429) limited = r;
      else assert.equal(r.status, 201);
    }
    assert.ok(limited);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  });
});

describe('anonymous persons expire', () => {
  test('after SERVICE_ANONYMOUS_TTL, across a restart: PersonDeleted, the token invalid, an expired bearer ignored', async () => {
    const clock = movableClock();
    // A fixed issuer: the restarted service listens on another port, and its tokens must still be its own.
    const env = { SERVICE_ANONYMOUS_TTL: String(TTL), SERVICE_ANONYMOUS_SWEEP_INTERVAL_MS: '100', SERVICE_ISSUER: 'http://identity.test' };
    let server = await startTestServer(env, { clock });
    const org = await newOrg(server);
    const r = await org.user.post('/persons/anonymous');
    const token = r.body.result as string;
    const id = decodeJwt(token).sub as string;
    await server.stop();

    clock.advance((TTL + 1) * 1000);
    server = await startTestServer(env, { clock }, server.dataDir);
    try {
      const same = sameOrgOn(server, org);
      const sub = await Subscriber.open(server.base, { org: org.id, key: org.admin.apiKey, query: { from: '1', types: 'PersonDeleted_v1' } });
      await sub.waitForCount(1);
      assert.deepEqual(sub.frames[0]?.event.person_id, id);
      assert.deepEqual(sub.frames[0]?.event.handles ?? [], []);
      await sub.close();
      assert.equal((await same.admin.get(`/persons/${id}`)).status, 404);
      const verdict = await server.client.post('/token/validate', { token }, { 'Service-OrgID': '', 'Service-API-Key': '' });
      assert.equal(verdict.body.result.valid, false);
      // An expired anonymous token sent along with a registration is ignored: an ordinary registration.
      const reg = await same.user.post('/register/password', { handle: emailHandle('late@example.com'), password: PASSWORD }, { Authorization: `Bearer ${token}` });
      assert.equal(reg.status, 201, reg.text);
      const claims = decodeJwt(reg.body.result.token);
      assert.notEqual(claims.sub, id);
      assert.equal(claims['prev_anonymous_person_id'], undefined);
    } finally {
      await server.stop();
    }
  });
});
