import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type Client, type TestServer } from '../support/server.js';
import { newOrg, personWithPassword, signIn, type Org } from '../support/auth.js';
import { movableClock } from '../support/clock.js';
import { assertOriginalRequest, assertOriginalShape } from '../support/original.js';

const PASSWORD = 'correct horse battery';

describe('end-user routes with the person\'s own token', () => {
  let server: TestServer;
  let org: Org;
  let browser: Client;
  let anonymousToken: string;
  let anonymousId: string;
  let regularToken: string;
  let regularId: string;
  const clock = movableClock();
  before(async () => {
    server = await startTestServer({ SERVICE_ANONYMOUS_TTL: '3600' }, { clock });
    org = await newOrg(server);
    browser = server.client.as('', '');
    anonymousToken = (await org.user.post('/persons/anonymous')).body.result;
    anonymousId = JSON.parse(Buffer.from(anonymousToken.split('.')[1] as string, 'base64url').toString()).sub;
    regularId = await personWithPassword(org, 'ada@example.com', PASSWORD);
    regularToken = (await signIn(org, 'ada@example.com', PASSWORD)).body.result.token;
  });
  after(() => server.stop());

  const as = (token: string) => ({ Authorization: `Bearer ${token}` });

  test('GDPR consents: PUT replaces, POST adds, GET reads, DELETE clears; for an anonymous person too', async () => {
    for (const [token, id] of [[anonymousToken, anonymousId], [regularToken, regularId]] as const) {
      assertOriginalRequest('PUT /consent/gdpr', { consent_levels: ['necessary'] });
      const put = await browser.put('/consent/gdpr', { consent_levels: ['necessary'] }, as(token));
      assert.equal(put.status, 200, put.text);
      assertOriginalShape('PUT /consent/gdpr', 200, put.body);
      const post = await browser.post('/consent/gdpr', { consent_levels: ['analytics', 'necessary'] }, as(token));
      assert.equal(post.status, 201, post.text);
      assertOriginalShape('POST /consent/gdpr', 201, post.body);
      assert.deepEqual(post.body.result.consents.map((c: any) => c.consent_level), ['necessary', 'analytics']);
      assert.equal(post.body.result.consents[0].created_at, put.body.result.consents[0].created_at, 'a level held keeps its time');
      const get = await browser.get('/consent/gdpr', as(token));
      assert.equal(get.status, 200);
      assertOriginalShape('GET /consent/gdpr', 200, get.body);
      assert.deepEqual(get.body.result, post.body.result);
      // The API key sees the same person's consents.
      assert.deepEqual((await org.admin.get(`/persons/${id}/consent/gdpr`)).body.result, get.body.result);
      const del = await browser.delete('/consent/gdpr', as(token));
      assert.equal(del.status, 204);
      assert.deepEqual((await browser.get('/consent/gdpr', as(token))).body.result.consents, []);
    }
  });

  test("attributes: each bucket's end-user permission decides; the API key keeps full access", async () => {
    const token = anonymousToken;
    for (const bucket of ['end_user_read_write', 'person_pool-end_user_read_write']) {
      assert.equal((await browser.put(`/attributes/${bucket}`, { cart: ['apple'], n: 1 }, as(token))).status, 204);
      assert.equal((await browser.patch(`/attributes/${bucket}`, { n: 2 }, as(token))).status, 204);
      assert.deepEqual((await browser.get(`/attributes/${bucket}`, as(token))).body.result, { cart: ['apple'], n: 2 });
      assert.deepEqual((await browser.get(`/attributes/${bucket}?attributes=n`, as(token))).body.result, { n: 2 });
      assert.deepEqual((await org.admin.get(`/persons/${anonymousId}/attributes/${bucket}`)).body.result, { cart: ['apple'], n: 2 });
      assert.equal((await browser.delete(`/attributes/${bucket}?attributes=n`, as(token))).status, 204);
      assert.deepEqual((await browser.get(`/attributes/${bucket}`, as(token))).body.result, { cart: ['apple'] });
    }
    for (const bucket of ['end_user_read_only', 'person_pool-end_user_read_only']) {
      assert.equal((await org.admin.put(`/persons/${anonymousId}/attributes/${bucket}`, { tier: 'gold' })).status, 204);
      assert.deepEqual((await browser.get(`/attributes/${bucket}`, as(token))).body.result, { tier: 'gold' });
      for (const r of [await browser.put(`/attributes/${bucket}`, { tier: 'x' }, as(token)), await browser.patch(`/attributes/${bucket}`, { tier: 'x' }, as(token)), await browser.delete(`/attributes/${bucket}`, as(token))]) {
        assert.equal(r.status, 403);
        assert.match(r.body.errors[0].message, /read-only for end users/);
      }
      assert.deepEqual((await org.admin.get(`/persons/${anonymousId}/attributes/${bucket}`)).body.result, { tier: 'gold' });
    }
    for (const bucket of ['end_user_no_access', 'person_pool-end_user_no_access']) {
      assert.equal((await org.admin.put(`/persons/${anonymousId}/attributes/${bucket}`, { secret: 1 })).status, 204);
      for (const r of [await browser.get(`/attributes/${bucket}`, as(token)), await browser.put(`/attributes/${bucket}`, { secret: 2 }, as(token))]) {
        assert.equal(r.status, 403);
        assert.match(r.body.errors[0].message, /not accessible to end users/);
      }
      assert.deepEqual((await org.admin.get(`/persons/${anonymousId}/attributes/${bucket}`)).body.result, { secret: 1 });
    }
    const unknown = await browser.get('/attributes/nope', as(token));
    assert.equal(unknown.status, 404);
    const bad = await browser.put('/attributes/end_user_read_write', { ['x'.repeat(100)]: 1 }, as(token));
    assert.equal(bad.status, 400);
  });

  test("each person reaches only their own data: another person's, another organization's", async () => {
    await browser.put('/attributes/end_user_read_write', { mine: 'regular' }, as(regularToken));
    const other = await newOrg(server);
    const otherToken = (await other.user.post('/persons/anonymous')).body.result as string;
    assert.deepEqual((await browser.get('/attributes/end_user_read_write', as(otherToken))).body.result, {});
    await browser.put('/attributes/end_user_read_write', { mine: 'other' }, as(otherToken));
    assert.deepEqual((await browser.get('/attributes/end_user_read_write', as(regularToken))).body.result, { mine: 'regular' });
  });

  test('no token, a bad one, a revoked one or an expired one: 401, nothing changed', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /Authorization: Bearer/],
      [{ Authorization: 'Basic abc' }, /must be Bearer/],
      [as('not-a-token'), /not valid \(invalid_token_content\)/],
      [as(`${regularToken.slice(0, -4)}AAAA`), /not valid/],
    ];
    for (const [headers, message] of cases) {
      const r = await browser.put('/consent/gdpr', { consent_levels: ['tracking'] }, headers);
      assert.equal(r.status, 401, r.text);
      assert.match(r.body.errors[0].message, message);
      assert.equal(r.headers.get('www-authenticate'), 'Bearer');
    }
    // Key-holding callers cannot use these routes without a token either.
    assert.equal((await org.admin.get('/consent/gdpr')).status, 401);
    const fresh = (await org.user.post('/persons/anonymous')).body.result as string;
    clock.advance(3601_000);
    try {
      const expired = await browser.get('/consent/gdpr', as(fresh));
      assert.equal(expired.status, 401);
      assert.match(expired.body.errors[0].message, /expired/);
    } finally {
      clock.advance(-3601_000);
    }
    const revoked = (await signIn(org, 'ada@example.com', PASSWORD)).body.result.token as string;
    const revoke = await org.admin.post('/token/revoke', { token: revoked });
    assert.ok(revoke.status >= 200 && revoke.status < 300, revoke.text);
    assert.equal((await browser.get('/consent/gdpr', as(revoked))).status, 401);
    assert.deepEqual((await org.admin.get(`/persons/${regularId}/consent/gdpr`)).body.result.consents, []);
  });
});
