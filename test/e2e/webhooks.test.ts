import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { newOrg, sameOrgOn, type Org } from '../support/auth.js';

const hook = (target_url: string, extra: Record<string, unknown> = {}) => ({ name: 'hook', target_url, ...extra });

describe('webhooks, with secure targets only (the default)', () => {
  let server: TestServer;
  let org: Org;
  before(async () => {
    server = await startTestServer();
    org = await newOrg(server);
  });
  after(() => server.stop());

  test('a webhook is created, read back with its defaults, listed, changed and deleted', async () => {
    const created = await org.admin.post('/organizations/webhooks', { name: 'audit', target_url: 'https://hooks.example.com/audit', description: 'first' });
    assert.equal(created.status, 201);
    const w = created.body.result;
    assert.equal(typeof w.id, 'string');
    assert.deepEqual(w, { id: w.id, name: 'audit', description: 'first', target_url: 'https://hooks.example.com/audit', custom_headers: {}, timeout: '0s', on_failure: 'block' });

    assert.deepEqual((await org.admin.get(`/organizations/webhooks/${w.id}`)).body.result, w);
    assert.deepEqual((await org.admin.get('/organizations/webhooks')).body.result, [w]);

    const patched = await org.admin.patch(`/organizations/webhooks/${w.id}`, { custom_headers: { 'X-One': ['1'] }, timeout: '500ms', on_failure: 'continue' });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.body.result, { ...w, custom_headers: { 'X-One': ['1'] }, timeout: '500ms', on_failure: 'continue' });
    const replaced = await org.admin.patch(`/organizations/webhooks/${w.id}`, { custom_headers: { 'X-Two': ['2', '3'] } });
    assert.deepEqual(replaced.body.result.custom_headers, { 'X-Two': ['2', '3'] }, 'custom_headers are replaced whole');

    assert.equal((await org.admin.delete(`/organizations/webhooks/${w.id}`)).status, 204);
    assert.equal((await org.admin.get(`/organizations/webhooks/${w.id}`)).status, 404);
    assert.equal((await org.admin.delete(`/organizations/webhooks/${w.id}`)).status, 404);
    assert.deepEqual((await org.admin.get('/organizations/webhooks')).body.result, []);
  });

  test('target_url: https with a host name; no localhost, IP address, query, fragment or credentials', async () => {
    const refused = [
      'http://hooks.example.com/a',
      'ftp://hooks.example.com/a',
      'not a url',
      '/relative/path',
      'https://localhost/a',
      'https://LOCALHOST./a',
      'https://api.localhost/a',
      'https://127.0.0.1/a',
      'https://10.0.0.1/a',
      'https://0x7f.1/a',
      'https://2130706433/a',
      'https://[::1]/a',
      'https://[fe80::1]/a',
      'https://hooks.example.com/a?x=1',
      'https://hooks.example.com/a?',
      'https://hooks.example.com/a#frag',
      'https://user:pw@hooks.example.com/a',
    ];
    for (const target_url of refused) {
      const r = await org.admin.post('/organizations/webhooks', hook(target_url));
      assert.equal(r.status, 400, `${target_url}: ${r.text}`);
      assert.match(r.body.errors[0].message, /^target_url: /, target_url);
    }
    assert.deepEqual((await org.admin.get('/organizations/webhooks')).body.result, [], 'nothing was created');
  });

  test('target_url is unique per organization, compared in canonical form', async () => {
    const first = await org.admin.post('/organizations/webhooks', hook('https://hooks.example.com/unique'));
    assert.equal(first.status, 201);
    for (const again of ['https://hooks.example.com/unique', 'https://HOOKS.example.com:443/unique']) {
      const r = await org.admin.post('/organizations/webhooks', hook(again));
      assert.equal(r.status, 409, again);
      assert.match(r.body.errors[0].message, /target_url/);
    }
    const second = await org.admin.post('/organizations/webhooks', hook('https://hooks.example.com/other'));
    const clash = await org.admin.patch(`/organizations/webhooks/${second.body.result.id}`, { target_url: 'https://hooks.example.com/unique' });
    assert.equal(clash.status, 409);
    assert.equal((await org.admin.patch(`/organizations/webhooks/${first.body.result.id}`, { target_url: 'https://hooks.example.com/unique' })).status, 200, 'its own URL is no clash');
    // Another organization may use the same URL.
    const other = await newOrg(server, 'other');
    assert.equal((await other.admin.post('/organizations/webhooks', hook('https://hooks.example.com/unique'))).status, 201);
    for (const w of (await org.admin.get('/organizations/webhooks')).body.result) await org.admin.delete(`/organizations/webhooks/${w.id}`);
  });

  test('timeout: a duration string of at most 20s', async () => {
    const ok = ['0s', '0', '1ms', '500ms', '2s', '1.5s', '20s', '19s1000ms', '20000ms'];
    const bad = ['21s', '1m', '20.001s', 'abc', '500', '-1s', '1d', '', ' 2s', '1ns', '0.5us'];
    for (const [i, timeout] of ok.entries()) {
      const r = await org.admin.post('/organizations/webhooks', hook(`https://hooks.example.com/t${i}`, { timeout }));
      assert.equal(r.status, 201, `${timeout}: ${r.text}`);
      assert.equal(r.body.result.timeout, timeout);
      await org.admin.delete(`/organizations/webhooks/${r.body.result.id}`);
    }
    for (const timeout of bad) {
      const r = await org.admin.post('/organizations/webhooks', hook('https://hooks.example.com/t', { timeout }));
      assert.equal(r.status, 400, `${timeout}: ${r.text}`);
      assert.match(r.body.errors[0].message, /^timeout: /);
    }
  });

  test('on_failure is block or continue; other fields are checked too', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [hook('https://hooks.example.com/f', { on_failure: 'maybe' }), /^on_failure: must be one of block, continue/],
      [{ target_url: 'https://hooks.example.com/f' }, /^name: is required/],
      [{ name: 'x' }, /^target_url: is required/],
      [hook('https://hooks.example.com/f', { name: '' }), /^name: /],
      [hook('https://hooks.example.com/f', { colour: 'red' }), /^colour: unknown field/],
      [hook('https://hooks.example.com/f', { description: 7 }), /^description: /],
    ];
    for (const [body, message] of cases) {
      const r = await org.admin.post('/organizations/webhooks', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.errors[0].message, message);
    }
  });

  test('custom_headers: valid names and values, no hop-by-hop headers and none the call sets', async () => {
    const refused: Array<Record<string, unknown>> = [
      { 'Content-Type': ['text/plain'] },
      { 'content-length': ['1'] },
      { Host: ['evil.example'] },
      { Connection: ['close'] },
      { 'Keep-Alive': ['timeout=5'] },
      { 'Transfer-Encoding': ['chunked'] },
      { TE: ['trailers'] },
      { Upgrade: ['websocket'] },
      { 'Proxy-Authorization': ['x'] },
      { 'bad name': ['x'] },
      { 'X-Ok': ['line\r\nInjected: yes'] },
      { 'X-Ok': ['nul\u0000'] },
      { 'X-Ok': [] },
      { 'X-Ok': 'not an array' },
      { 'X-Ok': ['1'], 'x-ok': ['2'] },
    ];
    for (const custom_headers of refused) {
      const r = await org.admin.post('/organizations/webhooks', hook('https://hooks.example.com/h', { custom_headers }));
      assert.equal(r.status, 400, `${JSON.stringify(custom_headers)}: ${r.text}`);
      assert.match(r.body.errors[0].message, /^custom_headers/);
    }
    const ok = await org.admin.post('/organizations/webhooks', hook('https://hooks.example.com/h', { custom_headers: { Authorization: ['Bearer abc'], 'X-Tenant': ['a', 'b'] } }));
    assert.equal(ok.status, 201);
    assert.deepEqual(ok.body.result.custom_headers, { Authorization: ['Bearer abc'], 'X-Tenant': ['a', 'b'] });
    const bad = await org.admin.patch(`/organizations/webhooks/${ok.body.result.id}`, { custom_headers: { Host: ['x'] }, name: 'renamed' });
    assert.equal(bad.status, 400);
    assert.equal((await org.admin.get(`/organizations/webhooks/${ok.body.result.id}`)).body.result.name, 'hook', 'a refused PATCH changes nothing');
    await org.admin.delete(`/organizations/webhooks/${ok.body.result.id}`);
  });

  test('triggers: sync_hook token_minted, or an event message; listed, detached, and removed with the webhook', async () => {
    const w = (await org.admin.post('/organizations/webhooks', hook('https://hooks.example.com/triggers'))).body.result;
    const base = `/organizations/webhooks/${w.id}/triggers`;
    const sync = { trigger_type: 'sync_hook', trigger_name: 'token_minted' };
    const attached = await org.admin.post(base, sync);
    assert.equal(attached.status, 201);
    assert.deepEqual(attached.body, {}, 'a bare envelope');
    assert.equal((await org.admin.post(base, sync)).status, 201, 'attaching twice changes nothing');
    assert.equal((await org.admin.post(base, { trigger_type: 'event', trigger_name: 'PersonCreated_v1' })).status, 201);
    assert.equal((await org.admin.post(base, { trigger_type: 'event', trigger_name: 'PermissionCreated_InRegion_v1' })).status, 201);
    assert.deepEqual((await org.admin.get(base)).body.result, [sync, { trigger_type: 'event', trigger_name: 'PersonCreated_v1' }, { trigger_type: 'event', trigger_name: 'PermissionCreated_InRegion_v1' }]);

    const refused: Array<[Record<string, unknown>, RegExp]> = [
      [{ trigger_type: 'sync_hook', trigger_name: 'person_created' }, /^trigger_name: a sync_hook trigger must be one of token_minted/],
      [{ trigger_type: 'event', trigger_name: 'token_minted' }, /^trigger_name: an event trigger names an event message/],
      [{ trigger_type: 'event', trigger_name: 'Person Created_v1' }, /^trigger_name: /],
      [{ trigger_type: 'event', trigger_name: 'PersonCreated' }, /^trigger_name: /],
      [{ trigger_type: 'event', trigger_name: 'PersonCreated_v2' }, /^trigger_name: /],
      [{ trigger_type: 'async', trigger_name: 'token_minted' }, /^trigger_type: must be one of event, sync_hook/],
      [{ trigger_type: 'sync_hook' }, /^trigger_name: is required/],
    ];
    for (const [body, message] of refused) {
      const r = await org.admin.post(base, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.errors[0].message, message);
    }
    assert.equal((await org.admin.post('/organizations/webhooks/no-such-webhook/triggers', sync)).status, 404);

    assert.equal((await org.admin.delete(`${base}?trigger_type=sync_hook`)).status, 400, 'both query parameters are required');
    assert.equal((await org.admin.delete(`${base}?trigger_type=event&trigger_name=PersonDeleted_v1`)).status, 404);
    assert.equal((await org.admin.delete(`${base}?trigger_type=event&trigger_name=PersonCreated_v1`)).status, 204);
    assert.deepEqual((await org.admin.get(base)).body.result, [sync, { trigger_type: 'event', trigger_name: 'PermissionCreated_InRegion_v1' }]);

    assert.equal((await org.admin.delete(`/organizations/webhooks/${w.id}`)).status, 204);
    assert.equal((await org.admin.get(base)).status, 404);
    const again = (await org.admin.post('/organizations/webhooks', hook('https://hooks.example.com/triggers'))).body.result;
    assert.deepEqual((await org.admin.get(`/organizations/webhooks/${again.id}/triggers`)).body.result, [], 'the old triggers went with the old webhook');
    await org.admin.delete(`/organizations/webhooks/${again.id}`);
  });

  test('management needs the API key of the organization; verification-jwks needs only Service-OrgID', async () => {
    assert.equal((await org.user.get('/organizations/webhooks')).status, 401);
    assert.equal((await org.user.post('/organizations/webhooks', hook('https://hooks.example.com/k'))).status, 401);
    assert.equal((await server.client.as(org.id, server.client.apiKey).get('/organizations/webhooks')).status, 403);
    const other = await newOrg(server, 'neighbour');
    const theirs = (await other.admin.post('/organizations/webhooks', hook('https://hooks.example.com/theirs'))).body.result;
    assert.equal((await org.admin.get(`/organizations/webhooks/${theirs.id}`)).status, 404, "another organization's webhook is not found");
    assert.equal((await org.admin.delete(`/organizations/webhooks/${theirs.id}`)).status, 404);

    const jwks = await org.user.get('/organizations/webhooks/verification-jwks');
    assert.equal(jwks.status, 200);
    assert.equal(jwks.body.result, undefined, 'a raw key set, not an envelope');
    assert.ok(jwks.body.keys.length >= 1);
    for (const key of jwks.body.keys) {
      assert.deepEqual(Object.keys(key).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
      assert.equal(key.alg, 'ES256');
      assert.equal(key.use, 'sig');
      assert.equal(key.crv, 'P-256');
    }
    assert.equal((await server.client.as('', '').get('/organizations/webhooks/verification-jwks')).status, 400);
    assert.equal((await server.client.as('no-such-org', '').get('/organizations/webhooks/verification-jwks')).status, 404);
  });

  test('webhooks, triggers and the verification keys survive a restart', async () => {
    const w = (await org.admin.post('/organizations/webhooks', hook('https://hooks.example.com/durable', { timeout: '3s' }))).body.result;
    await org.admin.post(`/organizations/webhooks/${w.id}/triggers`, { trigger_type: 'sync_hook', trigger_name: 'token_minted' });
    const keys = (await org.user.get('/organizations/webhooks/verification-jwks')).body;
    await server.stop();
    server = await startTestServer({}, {}, server.dataDir);
    org = sameOrgOn(server, org);
    assert.deepEqual((await org.admin.get(`/organizations/webhooks/${w.id}`)).body.result, w);
    assert.deepEqual((await org.admin.get(`/organizations/webhooks/${w.id}/triggers`)).body.result, [{ trigger_type: 'sync_hook', trigger_name: 'token_minted' }]);
    assert.deepEqual((await org.user.get('/organizations/webhooks/verification-jwks')).body, keys);
  });
});

describe('webhooks with SERVICE_WEBHOOK_ALLOW_INSECURE=1', () => {
  let server: TestServer;
  let org: Org;
  before(async () => {
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
    org = await newOrg(server);
  });
  after(() => server.stop());

  test('http, loopback, localhost and IP targets are allowed; query and fragment still are not', async () => {
    for (const target_url of ['http://127.0.0.1:9000/hook', 'http://localhost:9000/hook', 'http://[::1]:9000/hook', 'https://10.0.0.1/hook']) {
      assert.equal((await org.admin.post('/organizations/webhooks', hook(target_url))).status, 201, target_url);
    }
    for (const target_url of ['http://127.0.0.1:9000/hook?x=1', 'http://127.0.0.1:9000/hook#x', 'ftp://127.0.0.1/hook']) {
      assert.equal((await org.admin.post('/organizations/webhooks', hook(target_url))).status, 400, target_url);
    }
  });
});
