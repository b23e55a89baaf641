// OIDC provider credentials for SSO on the real server: the routes and their status codes, the filter,
// option rules, suborganization isolation, restarts, and secrets that no response, event or log carries
// and that SERVICE_SECRETS_KEY keeps out of the data files.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SsoCredential, StoredSecret } from '../../src/domain/state.js';
import { appleClientSecret } from '../../src/sso/apple.js';
import { createSecretSealer } from '../../src/sso/secrets.js';
import { newOrg, recordEvents, sameOrgOn, type Org } from '../support/auth.js';
import { removeDir, startTestServer, tempDir, type Reply, type TestServer } from '../support/server.js';

const PATH = '/organizations/sso/oidc/provider-credentials';
const SECRET = `client-secret-${randomBytes(8).toString('hex')}`;

function appleKey(): string {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}
/** The base64 body of a PEM: what would show in a file holding the key as text. */
const pemBody = (pem: string) => pem.split('\n').filter((l) => l !== '' && !l.startsWith('-----')).join('');

const google = (client_id: string, extra: Record<string, unknown> = {}) => ({ client_id, client_secret: SECRET, provider: 'google', ...extra });

function noSecret(r: Reply, ...secrets: string[]): void {
  for (const s of [SECRET, ...secrets]) assert.equal(r.text.includes(s), false, `a response carries a secret: ${r.text.slice(0, 200)}`);
}

describe('OIDC provider credentials', () => {
  let server: TestServer;
  let org: Org;
  let events: ReturnType<typeof recordEvents>;
  const logged: string[] = [];
  before(async () => {
    server = await startTestServer({}, { log: (m) => logged.push(m), warn: (m) => logged.push(m) });
    events = recordEvents(server);
    org = await newOrg(server);
  });
  after(() => server.stop());

  test('created (201, bare), read back with the defaults, listed, changed (200, bare) and deleted (200, bare); the secret never comes back', async () => {
    const eventsBefore = server.service.registry.get(org.id)?.state.event_offset;
    const created = await org.admin.post(PATH, google('g-1.apps.example.com', { label: 'Google', external_cred_id: 'ext-1' }));
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body, {});
    const expected = {
      client_id: 'g-1.apps.example.com',
      provider: 'google',
      label: 'Google',
      external_cred_id: 'ext-1',
      enable_in_slashid_oidc_authz_server: false,
      options: { google: { authorize_scopes: ['openid', 'email', 'profile'] } },
    };
    const got = await org.admin.get(`${PATH}/g-1.apps.example.com`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, { result: expected });
    const list = await org.admin.get(PATH);
    assert.deepEqual(list.body, { result: [expected] });

    const patched = await org.admin.patch(`${PATH}/g-1.apps.example.com`, {
      client_secret: 'a-new-secret-value',
      label: 'Google (new)',
      enable_in_slashid_oidc_authz_server: true,
      options: { google: { authorize_scopes: ['https://www.googleapis.com/auth/calendar.readonly', 'email'] } },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body, {});
    const after = await org.admin.get(`${PATH}/g-1.apps.example.com`);
    assert.deepEqual(after.body.result, {
      ...expected,
      label: 'Google (new)',
      enable_in_slashid_oidc_authz_server: true,
      options: { google: { authorize_scopes: ['openid', 'email', 'profile', 'https://www.googleapis.com/auth/calendar.readonly'] } },
    });

    const deleted = await org.admin.delete(`${PATH}/g-1.apps.example.com`);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, {});
    assert.equal((await org.admin.get(`${PATH}/g-1.apps.example.com`)).status, 404);
    assert.equal((await org.admin.patch(`${PATH}/g-1.apps.example.com`, { label: 'x' })).status, 404);
    assert.equal((await org.admin.delete(`${PATH}/g-1.apps.example.com`)).status, 404);
    assert.deepEqual((await org.admin.get(PATH)).body, { result: [] });

    for (const r of [created, got, list, patched, after, deleted]) noSecret(r, 'a-new-secret-value');
    assert.equal(server.service.registry.get(org.id)?.state.event_offset, eventsBefore, 'the seed defines no credential events: none is emitted');
    assert.deepEqual(events(org.id), []);
    assert.equal(logged.some((m) => m.includes(SECRET) || m.includes('a-new-secret-value')), false, 'no secret in the log');
  });

  test('a duplicate client_id is 409, whatever the provider, and the first stays as it was', async () => {
    assert.equal((await org.admin.post(PATH, google('dup-1', { label: 'first' }))).status, 201);
    const again = await org.admin.post(PATH, { client_id: 'dup-1', client_secret: 'other', provider: 'github' });
    assert.equal(again.status, 409);
    assert.match(again.body.errors[0].message, /client_id.*dup-1/);
    const kept = (await org.admin.get(`${PATH}/dup-1`)).body.result;
    assert.equal(kept.provider, 'google');
    assert.equal(kept.label, 'first');
  });

  test('every provider with its defaults, and the oauth_provider filter', async () => {
    const o = await newOrg(server, 'providers');
    const defaults: Record<string, Record<string, unknown>> = {
      google: { authorize_scopes: ['openid', 'email', 'profile'] },
      github: { authorize_scopes: ['read:user', 'user:email'] },
      bitbucket: { authorize_scopes: ['account'] },
      gitlab: { authorize_scopes: ['read_user'] },
      facebook: { authorize_scopes: ['email', 'public_profile'] },
      line: { authorize_scopes: ['openid', 'email', 'profile'] },
      azuread: { authorize_scopes: ['openid', 'email', 'profile', 'User.Read'], tenant: 'common' },
      service: { authorize_scopes: ['openid', 'email', 'profile'] },
      apple: { authorize_scopes: ['openid', 'email', 'name'], team_id: 'TEAM123456', key_id: 'KEY9876543', secret_lifetime: '720h' },
    };
    const required: Record<string, unknown> = { apple: { apple: { private_key: appleKey(), team_id: 'TEAM123456', key_id: 'KEY9876543' } } };
    for (const provider of Object.keys(defaults)) {
      const options = required[provider];
      const r = await o.admin.post(PATH, { client_id: `${provider}-client`, client_secret: SECRET, provider, ...(options !== undefined && { options }) });
      assert.equal(r.status, 201, `${provider}: ${r.text}`);
    }
    assert.equal((await o.admin.post(PATH, { client_id: 'google-2', client_secret: SECRET, provider: 'google' })).status, 201);
    const all = await o.admin.get(PATH);
    assert.deepEqual(all.body.result.map((c: { client_id: string }) => c.client_id), [...Object.keys(defaults).map((p) => `${p}-client`), 'google-2']);
    for (const [provider, options] of Object.entries(defaults)) {
      const one = await o.admin.get(`${PATH}?oauth_provider=${provider}`);
      assert.equal(one.status, 200);
      const want = provider === 'google' ? ['google-client', 'google-2'] : [`${provider}-client`];
      assert.deepEqual(one.body.result.map((c: { client_id: string }) => c.client_id), want, provider);
      assert.deepEqual(one.body.result[0].options, { [provider]: options }, provider);
      noSecret(one);
    }

    for (const query of ['?oauth_provider=okta', '?oauth_provider=Google', '?oauth_provider=', '?provider=google']) {
      const r = await o.admin.get(`${PATH}${query}`);
      assert.equal(r.status, 400, query);
      assert.match(r.body.errors[0].message, /oauth_provider|provider/);
    }
  });

  test('bad input is a 400 naming the field, and nothing is stored', async () => {
    const o = await newOrg(server, 'bad-input');
    const offset = server.service.registry.get(o.id)?.state.offset;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ client_id: 'x', client_secret: 's', provider: 'okta' }, /provider/],
      [{ client_id: 'x', client_secret: 's', provider: 'the service' }, /provider/],
      [{ client_id: 'x', client_secret: 's', provider: 'google', options: { github: { authorize_scopes: ['repo'] } } }, /options\.github.*google/],
      [{ client_id: 'x', client_secret: 's', provider: 'apple', options: { azuread: {} } }, /options\.azuread/],
      [{ client_id: 'x', client_secret: 's', provider: 'google', options: { okta: {} } }, /options\.okta/],
      [{ client_id: 'x', client_secret: 's', provider: 'google', options: { google: { tenant: 'common' } } }, /options\.google\.tenant/],
      [{ client_id: 'x', client_secret: 's', provider: 'google', options: { google: { authorize_scopes: ['two words'] } } }, /options\.google\.authorize_scopes\[0\]/],
      [{ client_id: 'x', client_secret: 's', provider: 'google', options: { google: { authorize_scopes: 'openid email' } } }, /options\.google\.authorize_scopes/],
      [{ client_id: 'x', client_secret: 's', provider: 'azuread', options: { azuread: { tenant: 'not a tenant' } } }, /options\.azuread\.tenant/],
      [{ client_id: 'x', client_secret: 's', provider: 'service', options: { service: { organization_url: 'http://login.example.com' } } }, /options\.service\.organization_url/],
      [{ client_id: 'x', client_secret: 's', provider: 'service', options: { service: { organization_url: 'https://127.0.0.1/' } } }, /options\.service\.organization_url/],
      [{ client_id: 'x', client_secret: 's', provider: 'apple', options: { apple: { secret_lifetime: '299s' } } }, /options\.apple\.secret_lifetime/],
      [{ client_id: 'x', client_secret: 's', provider: 'apple', options: { apple: { secret_lifetime: '15777001s' } } }, /options\.apple\.secret_lifetime/],
      [{ client_id: 'x', client_secret: 's', provider: 'apple', options: { apple: { secret_lifetime: '30d' } } }, /options\.apple\.secret_lifetime/],
      [{ client_id: 'x', client_secret: 's', provider: 'apple', options: { apple: { team_id: 'SHORT' } } }, /options\.apple\.team_id/],
      [{ client_id: 'x', client_secret: 's', provider: 'apple', options: { apple: { private_key: 'not a key' } } }, /options\.apple\.private_key/],
      [{ client_id: 'x', provider: 'google' }, /client_secret/],
      [{ client_id: '', client_secret: 's', provider: 'google' }, /client_id/],
      [{ client_id: 'with space', client_secret: 's', provider: 'google' }, /client_id/],
      [{ client_id: 'x', client_secret: 's', provider: 'google', extra: 1 }, /extra/],
    ];
    for (const [body, mention] of cases) {
      const r = await o.admin.post(PATH, body);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
      assert.match(r.body.errors[0].message, mention, JSON.stringify(body));
    }
    assert.deepEqual((await o.admin.get(PATH)).body.result, []);
    assert.equal(server.service.registry.get(o.id)?.state.offset, offset, 'nothing was written');
  });

  test('apple: secret_lifetime from 300 s to 15,777,000 s, default 30 days; the key is write-only and kept across changes', async () => {
    const o = await newOrg(server, 'apple');
    const key = appleKey();
    const required = { private_key: key, team_id: 'TEAM123456', key_id: 'KEY9876543' };
    const apple = (client_id: string, fields: Record<string, unknown>) =>
      o.admin.post(PATH, { client_id, client_secret: SECRET, provider: 'apple', options: { apple: { ...required, ...fields } } });
    assert.equal((await apple('a-300', { secret_lifetime: '300s' })).status, 201);
    assert.equal((await apple('a-299', { secret_lifetime: '299s' })).status, 400);
    assert.equal((await apple('a-max', { secret_lifetime: '15777000s' })).status, 201);
    assert.equal((await apple('a-over', { secret_lifetime: '15777001s' })).status, 400);
    for (const bad of ['5', '5 m', '-5m', '1d', 'forever', '']) assert.equal((await apple(`a-${bad}`, { secret_lifetime: bad })).status, 400, bad);

    const created = await apple('com.example.web', { private_key: key, team_id: 'TEAM123456', key_id: 'KEY9876543', authorize_scopes: ['name'] });
    assert.equal(created.status, 201, created.text);
    const got = await o.admin.get(`${PATH}/com.example.web`);
    assert.deepEqual(got.body.result.options, { apple: { authorize_scopes: ['openid', 'email', 'name'], team_id: 'TEAM123456', key_id: 'KEY9876543', secret_lifetime: '720h' } });
    noSecret(got, pemBody(key));

    // A change that does not repeat the key keeps it; options merge field by field.
    assert.equal((await o.admin.patch(`${PATH}/com.example.web`, { options: { apple: { secret_lifetime: '24h' } } })).status, 200);
    const state = server.service.registry.get(o.id)?.state.sso_credentials.get('com.example.web');
    assert.ok(state?.private_key, 'the key is kept');
    const after = await o.admin.get(`${PATH}/com.example.web`);
    assert.deepEqual(after.body.result.options.apple, { authorize_scopes: ['openid', 'email', 'name'], team_id: 'TEAM123456', key_id: 'KEY9876543', secret_lifetime: '24h' });
    const list = await o.admin.get(PATH);
    noSecret(list, pemBody(key));
    const replaced = await o.admin.patch(`${PATH}/com.example.web`, { options: { apple: { private_key: appleKey() } } });
    assert.equal(replaced.status, 200);
    assert.notDeepEqual(server.service.registry.get(o.id)?.state.sso_credentials.get('com.example.web')?.private_key, state.private_key);
  });

  test('apple: private_key, team_id and key_id are required (the original marks them so): 400 naming each missing one, at creation and at PATCH, and nothing stored', async () => {
    const o = await newOrg(server, 'apple-required');
    const offset = () => server.service.registry.get(o.id)?.state.offset;
    const full = { private_key: appleKey(), team_id: 'TEAM123456', key_id: 'KEY9876543' };
    const before = offset();
    const post = (options: Record<string, unknown> | undefined) =>
      o.admin.post(PATH, { client_id: 'com.example.app', client_secret: SECRET, provider: 'apple', ...(options !== undefined && { options }) });
    for (const field of ['private_key', 'team_id', 'key_id'] as const) {
      const { [field]: _, ...rest } = full;
      const r = await post({ apple: { ...rest, secret_lifetime: '24h' } });
      assert.equal(r.status, 400, `without ${field}: ${r.text}`);
      assert.match(r.body.errors[0].message, new RegExp(`options\\.apple\\.${field}\\b`));
      noSecret(r, pemBody(full.private_key));
    }
    for (const options of [undefined, {}, { apple: {} }]) {
      const r = await post(options);
      assert.equal(r.status, 400, JSON.stringify(options));
      assert.match(r.body.errors[0].message, /options\.apple\.private_key, options\.apple\.team_id, options\.apple\.key_id/);
    }
    assert.deepEqual((await o.admin.get(PATH)).body.result, []);
    assert.equal(offset(), before, 'nothing was written');

    assert.equal((await post({ apple: full })).status, 201);
    const stored = (await o.admin.get(`${PATH}/com.example.app`)).body.result;
    for (const blank of [{ team_id: '' }, { key_id: null }, { private_key: '' }, { team_id: null }]) {
      const r = await o.admin.patch(`${PATH}/com.example.app`, { options: { apple: blank } });
      assert.equal(r.status, 400, JSON.stringify(blank));
      assert.match(r.body.errors[0].message, new RegExp(`options\\.apple\\.${Object.keys(blank)[0]}`));
    }
    assert.deepEqual((await o.admin.get(`${PATH}/com.example.app`)).body.result, stored);
  });

  test('PATCH never changes client_id or provider, refuses foreign options, and answers 400 before anything changes', async () => {
    const o = await newOrg(server, 'patch');
    assert.equal((await o.admin.post(PATH, google('p-1'))).status, 201);
    const before = (await o.admin.get(`${PATH}/p-1`)).body.result;
    for (const [body, mention] of [
      [{ client_id: 'p-2' }, /client_id/],
      [{ provider: 'github' }, /provider/],
      [{ options: { github: {} } }, /options\.github.*google/],
      [{ options: { google: { authorize_scopes: ['a b'] } } }, /authorize_scopes\[0\]/],
      [{ label: 'fine', options: { apple: { team_id: 'TEAM123456' } } }, /options\.apple/],
    ] as const) {
      const r = await o.admin.patch(`${PATH}/p-1`, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.errors[0].message, mention);
    }
    assert.deepEqual((await o.admin.get(`${PATH}/p-1`)).body.result, before);
  });

  test('writes take the consistency headers like every other write', async () => {
    const o = await newOrg(server, 'consistency');
    const bad = await o.admin.post(PATH, google('c-1'), { 'Service-Required-Consistency': 'everywhere' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.errors[0].message, /Service-Required-Consistency/);
    const ok = await o.admin.post(PATH, google('c-1'), { 'Service-Required-Consistency': 'all_regions', 'Service-Required-Consistency-Timeout': '10' });
    assert.equal(ok.status, 201, ok.text);
  });

  test("a suborganization sees only its own credentials; a client_id of the parent is free in the child and vice versa", async () => {
    const parent = await newOrg(server, 'parent');
    const r = await parent.admin.post('/organizations/suborganizations', { sub_org_name: 'child' });
    const child = { admin: server.client.as(r.body.result.id, r.body.result.api_key) };
    assert.equal((await parent.admin.post(PATH, google('shared-id', { label: 'parent' }))).status, 201);
    assert.equal((await child.admin.get(`${PATH}/shared-id`)).status, 404);
    assert.deepEqual((await child.admin.get(PATH)).body.result, []);
    assert.equal((await child.admin.post(PATH, { client_id: 'shared-id', client_secret: 'x', provider: 'github', label: 'child' })).status, 201);
    assert.equal((await child.admin.post(PATH, google('child-only'))).status, 201);
    assert.equal((await parent.admin.post(PATH, google('child-only'))).status, 201);
    assert.equal((await parent.admin.get(`${PATH}/shared-id`)).body.result.provider, 'google');
    assert.equal((await child.admin.get(`${PATH}/shared-id`)).body.result.provider, 'github');
    assert.equal((await child.admin.delete(`${PATH}/shared-id`)).status, 200);
    assert.equal((await parent.admin.get(`${PATH}/shared-id`)).status, 200);
  });

  test('/openapi.json lists every route', async () => {
    const doc = (await server.client.get('/openapi.json')).body;
    assert.deepEqual(Object.keys(doc.paths[PATH]).sort(), ['get', 'post']);
    assert.deepEqual(Object.keys(doc.paths[`${PATH}/{oauth_client_id}`]).sort(), ['delete', 'get', 'patch']);
  });
});

describe('SERVICE_WEBHOOK_ALLOW_INSECURE', () => {
  test('allows an http or loopback organization_url for the service provider', async () => {
    const server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
    try {
      const o = await newOrg(server);
      const r = await o.admin.post(PATH, { client_id: 'svc', client_secret: 's', provider: 'service', options: { service: { organization_url: 'http://127.0.0.1:9000/org' } } });
      assert.equal(r.status, 201, r.text);
      assert.equal((await o.admin.get(`${PATH}/svc`)).body.result.options.service.organization_url, 'http://127.0.0.1:9000/org');
    } finally {
      await server.stop();
    }
  });
});

describe('credentials on disk', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));
  const filesHold = (dir: string, needle: string) => readdirSync(dir).some((f) => readFileSync(join(dir, f)).includes(needle));

  /** Creates a google and an apple credential, then restarts and reads them back. */
  async function storeAndRestart(env: Record<string, string>, snapshotEvery: string) {
    const dir = tempDir('identity-sso-');
    dirs.push(dir);
    const secret = `sso-secret-${randomBytes(12).toString('hex')}`;
    const key = appleKey();
    let server = await startTestServer({ ...env, SERVICE_SNAPSHOT_INTERVAL: snapshotEvery }, {}, dir);
    const org = await newOrg(server);
    assert.equal((await org.admin.post(PATH, { client_id: 'g', client_secret: secret, provider: 'google' })).status, 201);
    const apple = { client_id: 'a', client_secret: secret, provider: 'apple', options: { apple: { private_key: key, team_id: 'TEAM123456', key_id: 'KEY9876543' } } };
    assert.equal((await org.admin.post(PATH, apple)).status, 201);
    assert.equal((await org.admin.patch(`${PATH}/g`, { client_secret: `${secret}-2`, label: 'after' })).status, 200);
    const before = (await org.admin.get(PATH)).body.result;
    await server.stop();
    server = await startTestServer({ ...env, SERVICE_SNAPSHOT_INTERVAL: snapshotEvery }, {}, dir);
    try {
      const again = sameOrgOn(server, org);
      assert.deepEqual((await again.admin.get(PATH)).body.result, before, 'the same credentials after a restart');
      return { dir, secret, key, org: org.id, stored: server.service.registry.get(org.id)?.state.sso_credentials };
    } finally {
      await server.stop();
    }
  }

  test('with SERVICE_SECRETS_KEY neither the client secret nor the Apple key reaches the data files (WAL and snapshot)', async () => {
    const secretsKey = randomBytes(32);
    const { dir, secret, key, org, stored } = await storeAndRestart({ SERVICE_SECRETS_KEY: secretsKey.toString('hex') }, '2');
    assert.equal(filesHold(dir, secret), false, 'no client secret in the data files');
    assert.equal(filesHold(dir, pemBody(key).slice(0, 40)), false, 'no Apple key (PEM) in the data files');
    assert.equal(filesHold(dir, pemBody(key).slice(-40)), false, 'no Apple key (PEM tail) in the data files');
    assert.equal(stored?.get('a')?.private_key && 'sealed' in stored.get('a')!.private_key!, true);
    assert.equal(stored?.get('g')?.client_secret && 'sealed' in stored.get('g')!.client_secret, true);

    // What a sign-in will do: open them with the key (or, after a key change, the previous one) and sign.
    const g = stored?.get('g') as SsoCredential;
    const a = stored?.get('a') as SsoCredential;
    const next = randomBytes(32);
    for (const sealer of [createSecretSealer(secretsKey), createSecretSealer(next, secretsKey)]) {
      assert.equal(sealer.open(org, 'g', 'client_secret', g.client_secret), `${secret}-2`);
      assert.equal(sealer.open(org, 'a', 'private_key', a.private_key as StoredSecret), key);
    }
    assert.throws(() => createSecretSealer(next).open(org, 'g', 'client_secret', g.client_secret));
    const jwt = appleClientSecret({ client_id: 'a', team_id: 'TEAM123456', key_id: 'KEY9876543', secret_lifetime: '720h', private_key: createSecretSealer(secretsKey).open(org, 'a', 'private_key', a.private_key as StoredSecret) }, Date.now());
    assert.equal(jwt.split('.').length, 3);
  });

  test('without the key they are stored in the clear (so the check above can see them), and read back after a restart', async () => {
    const { dir, secret, key } = await storeAndRestart({}, '10000');
    assert.equal(filesHold(dir, secret), true);
    assert.equal(filesHold(dir, pemBody(key).slice(0, 40)), true);
  });
});
