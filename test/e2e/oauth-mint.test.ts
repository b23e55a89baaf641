// The original's OAuth 2.0 operations beyond the RFCs: POST /oauth2/tokens/mint (a person's tokens without a
// sign-in), POST /oauth2/tokens/revoke-all (a client's grants of a person), and a client's hosted-UI configuration.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { expectError, expectResult, offsets, unchanged } from '../support/expect.js';
import { newOrg, type Org } from '../support/auth.js';
import { assertOriginalRequest, assertOriginalShape } from '../support/original.js';
import { startTestServer, type TestServer } from '../support/server.js';

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

interface Registered {
  client_id: string;
  client_secret: string;
}

describe('mint, revoke-all and the hosted-UI configuration', () => {
  let server: TestServer;
  let org: Org;
  let web: Registered;
  let machine: Registered;
  let person: string;

  const post = async (path: string, form: Record<string, string>, headers: Record<string, string> = {}) => {
    const res = await fetch(server.base + path, { method: 'POST', headers: { ...FORM, ...headers }, body: new URLSearchParams(form).toString() });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text === '' ? undefined : JSON.parse(text) };
  };
  const active = async (token: string) => (await post('/oauth2/tokens/introspect', { token }, { Authorization: basic(machine.client_id, machine.client_secret) })).body.active as boolean;
  const refresh = (token: string) => post('/oauth2/tokens', { grant_type: 'refresh_token', refresh_token: token }, { Authorization: basic(web.client_id, web.client_secret) });
  const mint = (body: Record<string, unknown>) => org.admin.post('/oauth2/tokens/mint', body);

  before(async () => {
    server = await startTestServer();
    org = await newOrg(server);
    web = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'web', scopes: ['openid', 'invoices.read'], grant_types: ['authorization_code', 'refresh_token'], redirect_uris: ['https://app.example.com/cb'] }), 201);
    machine = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'machine', scopes: ['invoices.read'], grant_types: ['client_credentials'] }), 201);
    person = expectResult(await org.admin.post('/persons', { handles: [{ type: 'email_address', value: 'mint@example.com' }] }), 201).person_id;
  });
  after(() => server.stop());

  test('mint: access, ID and refresh tokens for the scopes asked, authenticated_methods ["api"], custom claims in them', async () => {
    const body = { person_id: person, client_id: web.client_id, scopes: ['openid', 'offline_access', 'invoices.read'], custom_claims: { foo: 'bar', baz: { everything: 42 } } };
    assertOriginalRequest('POST /oauth2/tokens/mint', body);
    const r = await mint(body);
    assertOriginalShape('POST /oauth2/tokens/mint', 200, r.body);
    const tokens = expectResult<{ access_token: string; id_token?: string; refresh_token?: string }>(r, 200);
    assert.equal(r.headers.get('cache-control'), 'no-store');
    const at = decodeJwt(tokens.access_token);
    assert.equal(at['sub'], person);
    assert.equal(at['client_id'], web.client_id);
    assert.equal(at['scope'], 'openid offline_access invoices.read');
    assert.deepEqual(at['authenticated_methods'], ['api']);
    assert.equal(at['foo'], 'bar');
    assert.deepEqual(at['baz'], { everything: 42 });
    assert.ok(tokens.id_token, 'openid asks for an ID token');
    const id = decodeJwt(tokens.id_token);
    assert.equal(id['aud'], web.client_id);
    assert.equal(id['foo'], 'bar');
    assert.ok(tokens.refresh_token, 'offline_access asks for a refresh token');
    assert.equal(await active(tokens.access_token), true);
    // the refresh token is a grant's like any other: it rotates at the token endpoint
    const rotated = await refresh(tokens.refresh_token);
    assert.equal(rotated.status, 200, rotated.text);
    assert.ok(rotated.body.access_token);

    const plain = expectResult(await mint({ person_id: person, client_id: web.client_id }), 200);
    assert.deepEqual(Object.keys(plain), ['access_token']);
  });

  test('mint refusals change nothing: reserved claims, unknown client or person, scopes the client may not have', async () => {
    await unchanged(org.admin, async () => {
      expectError(await mint({ person_id: person, client_id: web.client_id, custom_claims: { sub: 'x' } }), 400, '"sub"', 'reserved');
      expectError(await mint({ person_id: person, client_id: 'no-such-client' }), 404, '"no-such-client"');
      expectError(await mint({ person_id: 'nobody', client_id: web.client_id }), 404, '"nobody"');
      expectError(await mint({ person_id: person, client_id: web.client_id, scopes: ['invoices.write'] }), 400, 'scopes[0]', 'invoices.write');
      expectError(await mint({ person_id: person, client_id: machine.client_id, scopes: ['offline_access'] }), 400, 'offline_access', 'refresh_token');
      expectError(await mint({ person_id: person }), 400, 'client_id');
    }, server);
    // another organization's client is not found in this one
    const other = await newOrg(server, 'other');
    expectError(await other.admin.post('/oauth2/tokens/mint', { person_id: person, client_id: web.client_id }), 404, web.client_id);
  });

  test('revoke-all: the client\'s grants of the person begun until `until` stop, refresh and access tokens alike', async () => {
    const scopes = ['offline_access', 'invoices.read'];
    const first = expectResult(await mint({ person_id: person, client_id: web.client_id, scopes }), 200);
    await new Promise((r) => setTimeout(r, 30));
    const until = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 30));
    const second = expectResult(await mint({ person_id: person, client_id: web.client_id, scopes }), 200);

    const body = { person_id: person, until };
    assertOriginalRequest('POST /oauth2/tokens/revoke-all', body);
    const r = await post('/oauth2/tokens/revoke-all', body, { Authorization: basic(web.client_id, web.client_secret) });
    assert.equal(r.status, 200, r.text);
    assertOriginalShape('POST /oauth2/tokens/revoke-all', 200, r.body);
    assert.equal(await active(first.access_token), false);
    assert.equal((await refresh(first.refresh_token)).body.error, 'invalid_grant');
    assert.equal(await active(second.access_token), true, 'a grant begun after until is kept');

    // another client's revoke-all reaches only its own grants
    assert.equal((await post('/oauth2/tokens/revoke-all', { person_id: person }, { Authorization: basic(machine.client_id, machine.client_secret) })).status, 200);
    assert.equal(await active(second.access_token), true);

    assert.equal((await post('/oauth2/tokens/revoke-all', { person_id: person }, { Authorization: basic(web.client_id, web.client_secret) })).status, 200);
    assert.equal(await active(second.access_token), false);
    assert.equal((await refresh(second.refresh_token)).body.error, 'invalid_grant');
  });

  test('revoke-all refusals change nothing: a wrong secret, a bad until, no person_id', async () => {
    const kept = expectResult(await mint({ person_id: person, client_id: web.client_id }), 200);
    const before = offsets(server);
    assert.equal((await post('/oauth2/tokens/revoke-all', { person_id: person }, { Authorization: basic(web.client_id, 'wrong') })).status, 401);
    const badUntil = await post('/oauth2/tokens/revoke-all', { person_id: person, until: 'yesterday' }, { Authorization: basic(web.client_id, web.client_secret) });
    assert.equal(badUntil.status, 400, badUntil.text);
    assert.equal(badUntil.body.error, 'invalid_request');
    assert.match(badUntil.body.error_description, /until/);
    const noPerson = await post('/oauth2/tokens/revoke-all', {}, { Authorization: basic(web.client_id, web.client_secret) });
    assert.equal(noPerson.status, 400, noPerson.text);
    assert.deepEqual(offsets(server), before);
    assert.equal(await active(kept.access_token), true);
  });

  test("revoke-all refuses a public client, which cannot authenticate: its bare client_id ends no person's grants", async () => {
    const spa = expectResult<Registered>(await org.admin.post('/oauth2/clients', { client_name: 'spa', public: true, scopes: ['openid'], grant_types: ['authorization_code', 'refresh_token'], redirect_uris: ['https://spa.example.com/cb'] }), 201);
    const held = expectResult(await mint({ person_id: person, client_id: spa.client_id, scopes: ['offline_access'] }), 200);
    const before = offsets(server);
    const r = await post('/oauth2/tokens/revoke-all', { client_id: spa.client_id, person_id: person });
    assert.equal(r.status, 401, r.text);
    assert.equal(r.body.error, 'invalid_client');
    assert.match(r.body.error_description, /public client/);
    assert.deepEqual(offsets(server), before);
    assert.equal(await active(held.access_token), true);
  });

  test('ui-configuration: {} until set, replaced whole by PUT (201), kept per client', async () => {
    const path = `/oauth2/clients/${web.client_id}/ui-configuration`;
    const empty = await org.admin.get(path);
    assertOriginalShape('GET /oauth2/clients/{oauth_client_id}/ui-configuration', 200, empty.body);
    assert.deepEqual(expectResult(empty, 200), {});
    const ui = { logoUrl: 'https://app.example.com/logo.png', showBadge: false, themeVars: { '--primary': '#123456' }, textOverrides: { 'login.title': 'Welcome' }, handleTypes: ['email_address'], custom: { any: [1, 2] } };
    assertOriginalRequest('PUT /oauth2/clients/{oauth_client_id}/ui-configuration', ui);
    const put = await org.admin.put(path, ui);
    assertOriginalShape('PUT /oauth2/clients/{oauth_client_id}/ui-configuration', 201, put.body);
    assert.deepEqual(expectResult(put, 201), ui);
    const read = await org.admin.get(path);
    assertOriginalShape('GET /oauth2/clients/{oauth_client_id}/ui-configuration', 200, read.body);
    assert.deepEqual(expectResult(read, 200), ui);
    assert.deepEqual(expectResult(await org.admin.get(`/oauth2/clients/${machine.client_id}/ui-configuration`), 200), {});
    expectResult(await org.admin.put(path, { pageTitle: 'Sign in' }), 201);
    assert.deepEqual(expectResult(await org.admin.get(path), 200), { pageTitle: 'Sign in' });
    // the client's own view does not grow a field
    assert.equal('ui_configuration' in expectResult(await org.admin.get(`/oauth2/clients/${web.client_id}`), 200), false);
  });

  test('ui-configuration refusals change nothing: an unknown client, mistyped fields, an oversized body', async () => {
    const path = `/oauth2/clients/${web.client_id}/ui-configuration`;
    const before = expectResult(await org.admin.get(path), 200);
    await unchanged(org.admin, async () => {
      expectError(await org.admin.put('/oauth2/clients/no-such-client/ui-configuration', { pageTitle: 'x' }), 404, '"no-such-client"');
      expectError(await org.admin.get('/oauth2/clients/no-such-client/ui-configuration'), 404, '"no-such-client"');
      expectError(await org.admin.put(path, { showBadge: 'yes' }), 400, 'showBadge');
      expectError(await org.admin.put(path, { themeVars: { a: 1 } }), 400, 'themeVars');
      expectError(await org.admin.put(path, { custom: 'x'.repeat(70_000) }), 400, 'bytes');
    }, server);
    assert.deepEqual(expectResult(await org.admin.get(path), 200), before);
  });
});
