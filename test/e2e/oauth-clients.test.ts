// OAuth 2.0 clients on the real server: create (the secret once), list, get, change, new secret, delete; the
// rules on grant types, public clients and redirect URIs; suborganization isolation; both forms of
// OAuth2ClientCreated without the secret; and clients surviving a restart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectResult } from '../support/expect.js';
import { newOrg, recordEvents, sameOrgOn, type Org } from '../support/auth.js';
import { ALL_REGIONS, startRegionServer } from '../support/regions.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';

const PATH = '/oauth2/clients';
const machine = { client_name: 'Billing service', scopes: ['invoices.read', 'invoices.write'], grant_types: ['client_credentials'] };
const webApp = { client_name: 'Web app', scopes: ['openid', 'email'], grant_types: ['authorization_code', 'refresh_token'], redirect_uris: ['https://app.example.com/cb'] };

describe('OAuth 2.0 clients', () => {
  let server: TestServer;
  let org: Org;
  let events: ReturnType<typeof recordEvents>;
  const dataDir = tempDir();
  before(async () => {
    server = await startTestServer({}, {}, dataDir);
    events = recordEvents(server);
    org = await newOrg(server);
  });
  after(async () => {
    await server.stop();
    removeDir(dataDir);
  });

  test('created with its secret once, read back, listed, changed, given a new secret and deleted', async () => {
    const created = expectResult(await org.admin.post(PATH, machine), 201);
    const { client_id, client_secret, created_at, ...rest } = created;
    assert.match(client_id, /^[0-9a-f-]{36}$/);
    assert.ok(typeof client_secret === 'string' && client_secret.length >= 43, 'a high-entropy secret');
    assert.ok(!Number.isNaN(Date.parse(created_at)));
    assert.deepEqual(rest, { ...machine, response_types: [['code']], public: false, redirect_uris: [], resources: [], access_token_duration: 3600, refresh_token_duration: 2_592_000, token_endpoint_auth_method: 'client_secret_basic', require_pushed_authorization_requests: false });

    const got = await org.admin.get(`${PATH}/${client_id}`);
    assert.equal(got.status, 200);
    assert.equal(got.text.includes(client_secret), false, 'the secret is never read back');
    assert.deepEqual(got.body.result, { client_id, created_at, ...rest });
    const list = await org.admin.get(PATH);
    assert.deepEqual(list.body.result, [got.body.result]);
    assert.deepEqual(list.body.meta.pagination, { limit: 100, offset: 0, total_count: 1 });

    const changed = expectResult(await org.admin.patch(`${PATH}/${client_id}`, { client_name: 'Billing', scopes: ['invoices.read'], access_token_duration: 600 }), 200);
    assert.deepEqual({ ...changed }, { ...got.body.result, client_name: 'Billing', scopes: ['invoices.read'], access_token_duration: 600 });

    const rotated = expectResult(await org.admin.put(`${PATH}/${client_id}/secret`), 200);
    assert.deepEqual(Object.keys(rotated), ['client_secret']);
    assert.notEqual(rotated.client_secret, client_secret);
    const state = server.service.registry.get(org.id)?.state.oauth_clients.get(client_id);
    assert.ok(state && !JSON.stringify(state).includes(rotated.client_secret), 'only a hash is kept');

    assert.equal((await org.admin.delete(`${PATH}/${client_id}`)).status, 204);
    expectError(await org.admin.get(`${PATH}/${client_id}`), 404, client_id);
    expectError(await org.admin.delete(`${PATH}/${client_id}`), 404, client_id);
    expectError(await org.admin.put(`${PATH}/${client_id}/secret`), 404, client_id);
  });

  test('a public client has no secret and may not use client_credentials; a secret for it is a 400', async () => {
    const pub = expectResult(await org.admin.post(PATH, { ...webApp, public: true }), 201);
    assert.equal(pub.client_secret, undefined);
    assert.equal(pub.public, true);
    expectError(await org.admin.put(`${PATH}/${pub.client_id}/secret`), 400, 'public');
    expectError(await org.admin.post(PATH, { ...machine, public: true }), 400, 'client_credentials');
    expectError(await org.admin.patch(`${PATH}/${pub.client_id}`, { grant_types: ['client_credentials'] }), 400, 'client_credentials');
  });

  test('bad input is a 400 naming the field, and nothing is created', async () => {
    const before = server.service.registry.get(org.id)?.state.offset;
    const cases: Array<[unknown, string]> = [
      [{ ...machine, grant_types: ['implicit'] }, 'grant_types'],
      [{ ...machine, grant_types: [] }, 'grant_types'],
      [{ ...machine, scopes: ['has space'] }, 'scopes[0]'],
      [{ ...machine, scopes: ['a', 'a'] }, 'scopes[1]'],
      [{ ...webApp, redirect_uris: [] }, 'redirect_uris'],
      [{ ...webApp, redirect_uris: ['https://app.example.com/cb#frag'] }, 'fragment'],
      [{ ...webApp, redirect_uris: ['http://app.example.com/cb'] }, 'http'],
      [{ ...webApp, redirect_uris: ['/relative'] }, 'redirect_uris[0]'],
      [{ ...webApp, grant_types: ['refresh_token'] }, 'refresh_token'],
      [{ ...machine, access_token_duration: 5 }, 'access_token_duration'],
      [{ ...machine, client_name: '' }, 'client_name'],
      [{ ...machine, client_secret: 'chosen' }, 'client_secret'],
    ];
    for (const [body, mention] of cases) expectError(await org.admin.post(PATH, body), 400, mention);
    assert.equal(server.service.registry.get(org.id)?.state.offset, before);
  });

  test("a suborganization's clients are its own", async () => {
    const other = await newOrg(server, 'other');
    const mine = expectResult(await org.admin.post(PATH, machine), 201);
    expectError(await other.admin.get(`${PATH}/${mine.client_id}`), 404, mine.client_id);
    expectError(await other.admin.patch(`${PATH}/${mine.client_id}`, { client_name: 'x' }), 404, mine.client_id);
    expectError(await other.admin.put(`${PATH}/${mine.client_id}/secret`), 404, mine.client_id);
    expectError(await other.admin.delete(`${PATH}/${mine.client_id}`), 404, mine.client_id);
    assert.deepEqual(expectResult(await other.admin.get(PATH), 200), []);
    assert.equal(expectResult(await org.admin.get(`${PATH}/${mine.client_id}`), 200).client_name, machine.client_name);
  });

  test('OAuth2ClientCreated in both forms, with client_id, name, grant types, scopes and public, never the secret', async () => {
    const created = expectResult(await org.admin.post(PATH, webApp), 201);
    const inRegion = events(org.id, 'OAuth2ClientCreated_InRegion_v1').filter((e) => e.client_id === created.client_id);
    const plain = events(org.id, 'OAuth2ClientCreated_v1').filter((e) => e.client_id === created.client_id);
    assert.equal(inRegion.length, 1);
    assert.equal(plain.length, 1);
    for (const e of [...inRegion, ...plain]) {
      assert.equal(e.client_name, webApp.client_name);
      assert.deepEqual(e.grant_types, webApp.grant_types);
      assert.deepEqual(e.scopes, webApp.scopes);
      assert.equal(JSON.stringify(e).includes(created.client_secret), false);
    }
    assert.equal(inRegion[0]?.region, 'europe-belgium');
    assert.equal(plain[0]?.region, undefined);
    const pub = expectResult(await org.admin.post(PATH, { ...webApp, public: true }), 201);
    assert.equal(events(org.id, 'OAuth2ClientCreated_v1').find((e) => e.client_id === pub.client_id)?.public, true);
  });

  test('clients and their secrets survive a restart', async () => {
    const created = expectResult(await org.admin.post(PATH, machine), 201);
    await server.stop();
    server = await startTestServer({}, {}, dataDir);
    org = sameOrgOn(server, org);
    assert.equal(expectResult(await org.admin.get(`${PATH}/${created.client_id}`), 200).client_name, machine.client_name);
  });
});

test('with three regions, OAuth2ClientCreated_v1 follows its _InRegion twin once every region has the client', async () => {
  const dataDir = tempDir();
  const server = await startRegionServer({}, dataDir);
  try {
    const events = recordEvents(server);
    const org = await newOrg(server);
    const created = expectResult(await org.admin.post(PATH, machine, ALL_REGIONS), 201);
    const names = () => events(org.id).map((e) => e['event_metadata'].event_name).filter((n: string) => n.startsWith('OAuth2ClientCreated'));
    const deadline = Date.now() + 20_000;
    while (names().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(names(), ['OAuth2ClientCreated_InRegion_v1', 'OAuth2ClientCreated_v1']);
    assert.equal(events(org.id, 'OAuth2ClientCreated_InRegion_v1')[0]?.client_id, created.client_id);
  } finally {
    await server.stop();
    removeDir(dataDir);
  }
});
