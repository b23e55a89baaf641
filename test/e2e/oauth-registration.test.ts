// Dynamic client registration (RFC 7591) and its management protocol (RFC 7592) on the real server:
// openid-client registers with an initial access token the organization issued and then uses the client; the
// registration access token reads, replaces and deletes it; the same event as a client created through the
// management API; and the negatives: no, wrong, revoked or expired initial access token, invalid metadata in
// RFC 7591 3.2.2's error codes, another client's or a deleted client's registration access token.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { exportJWK, generateKeyPair } from 'jose';
import * as oidc from 'openid-client';
import { expectError, expectNoContent, expectResult } from '../support/expect.js';
import { newOrg, recordEvents, type Org } from '../support/auth.js';
import { movableClock } from '../support/clock.js';
import { startTestServer, type TestServer } from '../support/server.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };

describe('Dynamic client registration (RFC 7591, RFC 7592)', () => {
  const clock = movableClock();
  let server: TestServer;
  let org: Org;
  let events: ReturnType<typeof recordEvents>;
  let initial: { id: string; token: string };

  const call = async (method: string, path: string, token: string | undefined, body?: unknown) => {
    const res = await fetch(server.base + path, { method, headers: { ...JSON_TYPE, ...(token !== undefined && { Authorization: `Bearer ${token}` }) }, ...(body !== undefined && { body: JSON.stringify(body) }) });
    const text = await res.text();
    return { status: res.status, text, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
  };
  const register = (metadata: Record<string, unknown>, token: string | undefined = initial.token) => call('POST', '/oauth2/register', token, metadata);
  const machine = { client_name: 'Agent', grant_types: ['client_credentials'], response_types: [], scope: 'reports.read', token_endpoint_auth_method: 'client_secret_basic' };

  before(async () => {
    server = await startTestServer({}, { clock });
    events = recordEvents(server);
    org = await newOrg(server);
    initial = expectResult(await org.admin.post('/oauth2/registration-tokens', { description: 'MCP agents' }), 201);
  });
  after(() => server.stop());

  test('initial access tokens: issued with the value once, listed without it, revoked', async () => {
    assert.match(initial.token, new RegExp(`^${org.id}\\.`));
    const listed = expectResult(await org.admin.get('/oauth2/registration-tokens'), 200);
    assert.deepEqual(listed, [{ id: initial.id, description: 'MCP agents', created_at: listed[0].created_at, expires_at: null }]);
    assert.ok(!JSON.stringify(listed).includes(initial.token.split('.')[1] as string), 'the value is never shown again');
    const other = expectResult(await org.admin.post('/oauth2/registration-tokens', { expires_in: 3600 }), 201);
    expectError(await org.admin.post('/oauth2/registration-tokens', { expires_in: 5 }), 400, 'expires_in');
    expectNoContent(await org.admin.delete(`/oauth2/registration-tokens/${other.id}`));
    expectError(await org.admin.delete(`/oauth2/registration-tokens/${other.id}`), 404);
    const revoked = await register(machine, other.token);
    assert.deepEqual([revoked.status, revoked.body.error], [401, 'invalid_token']);
    assert.match(revoked.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/);
  });

  test('openid-client registers through discovery and uses the client; the event is the management API\'s', async () => {
    const meta = (await oidc.discovery(new URL(server.base), 'x', undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] })).serverMetadata();
    assert.equal(meta.registration_endpoint, `${server.base}/oauth2/register`);
    const config = await oidc.dynamicClientRegistration(new URL(server.base), machine, undefined, { initialAccessToken: initial.token, execute: [oidc.allowInsecureRequests] });
    const registered = config.clientMetadata();
    assert.equal(typeof registered.client_secret, 'string');
    assert.equal(registered['client_secret_expires_at'], 0);
    assert.equal(typeof registered['registration_access_token'], 'string');
    assert.equal(registered['registration_client_uri'], `${server.base}/oauth2/register/${registered.client_id}`);
    assert.equal(registered['scope'], 'reports.read');
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'reports.read' });
    assert.equal(tokens.scope, 'reports.read');

    const created = events(org.id, 'OAuth2ClientCreated_InRegion_v1').at(-1);
    assert.equal(created?.['client_id'], registered.client_id);
    assert.ok(!JSON.stringify(events(org.id)).includes(registered.client_secret as string), 'never the secret in an event');
    assert.ok(!JSON.stringify(events(org.id)).includes(registered['registration_access_token'] as string), 'never the registration access token in an event');
    const managed = expectResult(await org.admin.get(`/oauth2/clients/${registered.client_id}`), 200);
    assert.equal(managed.registration_token_id, initial.id);
    assert.equal(managed.client_secret, undefined);
  });

  test('private_key_jwt and public clients register too, with RFC 7591 defaults', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    const signed = await register({ ...machine, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [jwk] } });
    assert.equal(signed.status, 201, signed.text);
    assert.equal(signed.body.client_secret, undefined);
    const config = await oidc.discovery(new URL(server.base), signed.body.client_id, undefined, oidc.PrivateKeyJwt({ key: privateKey, kid: 'k1' }), { execute: [oidc.allowInsecureRequests] });
    assert.equal((await oidc.clientCredentialsGrant(config)).scope, 'reports.read');

    const spa = await register({ redirect_uris: ['http://localhost:3000/cb'], token_endpoint_auth_method: 'none', unknown_metadata: 'ignored' });
    assert.equal(spa.status, 201, spa.text);
    assert.deepEqual([spa.body.grant_types, spa.body.response_types, spa.body.client_name, spa.body.require_pushed_authorization_requests], [['authorization_code'], ['code'], 'Dynamically registered client', false]);
    assert.equal(spa.body.unknown_metadata, undefined);
    assert.equal(spa.body.client_secret, undefined);
    assert.equal(expectResult(await org.admin.get(`/oauth2/clients/${spa.body.client_id}`), 200).public, true);
  });

  test('registration refusals: no, malformed or unknown token (401 invalid_token), bad metadata (400, RFC 7591 3.2.2)', async () => {
    const before = expectResult(await org.admin.get('/oauth2/clients'), 200).length;
    const none = await call('POST', '/oauth2/register', undefined, machine);
    assert.deepEqual([none.status, none.body.error], [401, 'invalid_token']);
    for (const token of ['garbage', `${org.id}.wrong`, `nobody.${initial.token.split('.')[1]}`]) {
      const r = await register(machine, token);
      assert.deepEqual([r.status, r.body.error], [401, 'invalid_token'], token);
    }
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ redirect_uris: ['https://app.example/cb#frag'] }, 'invalid_redirect_uri', /fragment/],
      [{ redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri', /https/],
      [{ redirect_uris: 'https://app.example/cb' }, 'invalid_redirect_uri', /array/],
      [{ grant_types: ['implicit'], response_types: ['token'] }, 'invalid_client_metadata', /grant_types/],
      [{ redirect_uris: ['https://app.example/cb'], response_types: ['code id_token'] }, 'invalid_client_metadata', /response_types/],
      [{ ...machine, token_endpoint_auth_method: 'client_secret_jwt' }, 'invalid_client_metadata', /token_endpoint_auth_method/],
      [{ ...machine, token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', /jwks or jwks_uri/],
      [{ ...machine, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ kty: 'oct', k: 'AAAA' }] } }, 'invalid_client_metadata', /kty/],
      [{ ...machine, scope: 7 }, 'invalid_client_metadata', /scope/],
      [{ ...machine, client_name: '' }, 'invalid_client_metadata', /client_name/],
    ];
    for (const [metadata, error, why] of cases) {
      const r = await register(metadata);
      assert.deepEqual([r.status, r.body.error], [400, error], `${JSON.stringify(metadata)}: ${r.text}`);
      assert.match(r.body.error_description, why);
    }
    assert.equal(expectResult(await org.admin.get('/oauth2/clients'), 200).length, before, 'nothing registered');
  });

  test('RFC 7592: the registration access token reads, replaces and deletes its own client, and nothing else', async () => {
    const a = (await register(machine)).body;
    const b = (await register(machine)).body;
    const uri = new URL(a.registration_client_uri).pathname;
    const read = await call('GET', uri, a.registration_access_token);
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.client_name, 'Agent');
    assert.equal(read.body.client_secret, undefined, 'the secret is never read back');
    assert.equal(read.body.registration_access_token, undefined);
    assert.equal(read.headers.get('cache-control'), 'no-store');

    const wrong = await call('GET', uri, b.registration_access_token);
    assert.deepEqual([wrong.status, wrong.body.error], [401, 'invalid_token'], "another client's token");
    const garbage = await call('GET', uri, `${a.client_id}.nope`);
    assert.deepEqual([garbage.status, garbage.body.error], [401, 'invalid_token']);
    const managed = await call('GET', uri, initial.token);
    assert.equal(managed.status, 401, 'the initial access token is not a registration access token');

    const replaced = await call('PUT', uri, a.registration_access_token, { client_id: a.client_id, client_name: 'Agent 2', grant_types: ['client_credentials'], response_types: [], scope: 'reports.read reports.write' });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual([replaced.body.client_name, replaced.body.scope], ['Agent 2', 'reports.read reports.write']);
    assert.deepEqual(expectResult(await org.admin.get(`/oauth2/clients/${a.client_id}`), 200).scopes, ['reports.read', 'reports.write']);
    const noId = await call('PUT', uri, a.registration_access_token, { client_name: 'x', grant_types: ['client_credentials'] });
    assert.deepEqual([noId.status, noId.body.error], [400, 'invalid_client_metadata']);
    const toPublic = await call('PUT', uri, a.registration_access_token, { client_id: a.client_id, redirect_uris: ['http://localhost/cb'], token_endpoint_auth_method: 'none' });
    assert.deepEqual([toPublic.status, toPublic.body.error], [400, 'invalid_client_metadata']);
    // the secret it was given still works after the replacement
    const basic = `Basic ${Buffer.from(`${a.client_id}:${a.client_secret}`).toString('base64')}`;
    const token = await fetch(`${server.base}/oauth2/tokens`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic }, body: 'grant_type=client_credentials' });
    assert.equal(token.status, 200);

    assert.equal((await call('DELETE', uri, a.registration_access_token)).status, 204);
    const gone = await call('GET', uri, a.registration_access_token);
    assert.deepEqual([gone.status, gone.body.error], [401, 'invalid_token']);
    expectError(await org.admin.get(`/oauth2/clients/${a.client_id}`), 404);
    const after = await fetch(`${server.base}/oauth2/tokens`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic }, body: 'grant_type=client_credentials' });
    assert.equal(after.status, 401);
    // a client the management API created has no registration access token to use
    const plain = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'managed', scopes: [], grant_types: ['client_credentials'] }), 201);
    assert.equal((await call('GET', `/oauth2/register/${plain.client_id}`, `${plain.client_id}.${plain.client_secret}`)).status, 401);
  });

  test('an initial access token that expired registers nothing', async () => {
    const short = expectResult(await org.admin.post('/oauth2/registration-tokens', { expires_in: 60 }), 201);
    assert.ok(short.expires_at);
    assert.equal((await register(machine, short.token)).status, 201);
    clock.advance(61_000);
    const late = await register(machine, short.token);
    assert.deepEqual([late.status, late.body.error], [401, 'invalid_token']);
    assert.ok(!expectResult(await org.admin.get('/oauth2/registration-tokens'), 200).some((t: { id: string }) => t.id === short.id), 'expired tokens are not listed');
  });
});
