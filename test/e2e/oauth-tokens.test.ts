// The token endpoint's machine side on the real server, driven by openid-client as a standard relying party
// through discovery: client_credentials, client authentication and its RFC 6749 5.2 errors, scope
// escalation, RFC 9068 access tokens verified against the published keys, introspection and revocation,
// a deleted client's tokens, and forged tokens (alg none, HMAC keyed with the public key) never active.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { expectError, expectResult } from '../support/expect.js';
import { newOrg, recordEvents, type Org } from '../support/auth.js';
import { startTestServer, type TestServer } from '../support/server.js';

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

interface Registered {
  client_id: string;
  client_secret: string;
}

describe('OAuth 2.0 token endpoint: client credentials, introspection, revocation', () => {
  let server: TestServer;
  let org: Org;
  let machine: Registered;
  let resourceServer: Registered;

  /** A raw form POST, as a client that does not use a library would send it. */
  const post = async (path: string, form: Record<string, string>, headers: Record<string, string> = {}) => {
    const res = await fetch(server.base + path, { method: 'POST', headers: { ...FORM, ...headers }, body: new URLSearchParams(form).toString() });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text === '' ? undefined : JSON.parse(text) };
  };
  const configFor = async (c: Registered, auth: 'basic' | 'post' = 'basic') => {
    const config = await oidc.discovery(new URL(server.base), c.client_id, undefined, auth === 'basic' ? oidc.ClientSecretBasic(c.client_secret) : oidc.ClientSecretPost(c.client_secret), {
      execute: [oidc.allowInsecureRequests],
    });
    return config;
  };
  const introspect = (token: string, by: Registered = resourceServer) => post('/oauth2/tokens/introspect', { token }, { Authorization: basic(by.client_id, by.client_secret) });

  before(async () => {
    server = await startTestServer();
    org = await newOrg(server);
    machine = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'machine', scopes: ['invoices.read', 'invoices.write'], grant_types: ['client_credentials'], resources: ['https://api.example.com/'] }), 201);
    resourceServer = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'api', scopes: [], grant_types: ['client_credentials'] }), 201);
  });
  after(() => server.stop());

  test('discovery lists the endpoints and what they support', async () => {
    const doc = (await server.client.as('', '').get('/.well-known/openid-configuration')).body;
    const iss = server.base;
    assert.equal(doc.issuer, iss);
    assert.equal(doc.token_endpoint, `${iss}/oauth2/tokens`);
    assert.equal(doc.introspection_endpoint, `${iss}/oauth2/tokens/introspect`);
    assert.equal(doc.revocation_endpoint, `${iss}/oauth2/tokens/revoke`);
    assert.equal(doc.authorization_endpoint, `${iss}/oauth2/authorize`);
    assert.equal(doc.userinfo_endpoint, `${iss}/oauth2/userinfo`);
    assert.equal(doc.jwks_uri, `${iss}/.well-known/jwks.json`);
    assert.deepEqual(doc.response_types_supported, ['code']);
    assert.deepEqual(doc.subject_types_supported, ['public']);
    assert.deepEqual(doc.code_challenge_methods_supported, ['S256']);
    assert.ok(doc.grant_types_supported.includes('client_credentials'));
    assert.deepEqual(doc.token_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none']);
    assert.deepEqual(doc.id_token_signing_alg_values_supported, ['ES256']);
    assert.ok(Array.isArray(doc.scopes_supported) && doc.scopes_supported.includes('openid'));
    assert.ok(Array.isArray(doc.claims_supported));
    assert.equal(doc.token_validation_endpoint, `${iss}/token/validate`, 'the earlier fields stay');
  });

  for (const auth of ['basic', 'post'] as const) {
    test(`client_credentials through openid-client (client_secret_${auth}): an RFC 9068 access token the published keys verify`, async () => {
      const events = recordEvents(server);
      const config = await configFor(machine, auth);
      const tokens = await oidc.clientCredentialsGrant(config, { scope: 'invoices.read' });
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');
      assert.equal(tokens.scope, 'invoices.read');
      assert.equal(tokens.expires_in, 3600);
      const jwks = createLocalJWKSet((await server.client.as('', '').get('/.well-known/jwks.json')).body);
      const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, { issuer: server.base, audience: server.base, typ: 'at+jwt' });
      assert.equal(protectedHeader.typ, 'at+jwt');
      assert.equal(payload.sub, machine.client_id);
      assert.equal(payload['client_id'], machine.client_id);
      assert.equal(payload['scope'], 'invoices.read');
      assert.equal((payload.exp as number) - (payload.iat as number), 3600);
      assert.equal(typeof payload.jti, 'string');
      // A machine token has no person: no TokenMinted, and nothing is written.
      assert.deepEqual(events(org.id), []);
    });
  }

  test('no scope asked: all of the client\'s scopes; unknown parameters ignored; a resource indicator becomes the audience', async () => {
    // Unknown parameters are ignored (RFC 6749 3.2).
    const all = await post('/oauth2/tokens', { grant_type: 'client_credentials', unknown_extension: 'x' }, { Authorization: basic(machine.client_id, machine.client_secret) });
    assert.equal(all.status, 200, all.text);
    assert.equal(all.body.scope, 'invoices.read invoices.write');
    assert.equal(all.headers.get('cache-control'), 'no-store');
    const aimed = await post('/oauth2/tokens', { grant_type: 'client_credentials', resource: 'https://api.example.com/' }, { Authorization: basic(machine.client_id, machine.client_secret) });
    assert.equal(aimed.status, 200, aimed.text);
    const claims = JSON.parse(Buffer.from(aimed.body.access_token.split('.')[1], 'base64url').toString());
    assert.equal(claims.aud, 'https://api.example.com/');
    const bad = await post('/oauth2/tokens', { grant_type: 'client_credentials', resource: 'https://api.example.com/#x' }, { Authorization: basic(machine.client_id, machine.client_secret) });
    assert.deepEqual([bad.status, bad.body.error], [400, 'invalid_target']);
    // the issuer, the default audience, needs no registration
    const own = await post('/oauth2/tokens', { grant_type: 'client_credentials', resource: server.base }, { Authorization: basic(machine.client_id, machine.client_secret) });
    assert.equal(own.status, 200, own.text);
  });

  test("a client_credentials token's audience is a resource registered for the client, never any resource it names", async () => {
    const other = expectResult<Registered>(await org.admin.post('/oauth2/clients', { client_name: 'unregistered', scopes: ['invoices.read'], grant_types: ['client_credentials'] }), 201);
    const payroll = await post('/oauth2/tokens', { grant_type: 'client_credentials', resource: 'https://payroll.example.com/' }, { Authorization: basic(other.client_id, other.client_secret) });
    assert.equal(payroll.status, 400, `a token for a resource the client has no business with: ${payroll.text}`);
    assert.equal(payroll.body.error, 'invalid_target');
    assert.match(payroll.body.error_description, /not registered for this client/);
    assert.deepEqual(expectResult(await org.admin.get(`/oauth2/clients/${other.client_id}`), 200).resources, []);
    // registering a resource: absolute URIs without a fragment, each once
    expectError(await org.admin.patch(`/oauth2/clients/${other.client_id}`, { resources: ['payroll'] }), 400, 'resources[0]');
    expectError(await org.admin.patch(`/oauth2/clients/${other.client_id}`, { resources: ['https://a.example/', 'https://a.example/'] }), 400, 'resources[1]');
    assert.deepEqual(expectResult(await org.admin.patch(`/oauth2/clients/${other.client_id}`, { resources: ['https://payroll.example.com/'] }), 200).resources, ['https://payroll.example.com/']);
    const allowed = await post('/oauth2/tokens', { grant_type: 'client_credentials', resource: 'https://payroll.example.com/' }, { Authorization: basic(other.client_id, other.client_secret) });
    assert.equal(allowed.status, 200, allowed.text);
    // emptied, the list no longer allows it
    assert.deepEqual(expectResult(await org.admin.patch(`/oauth2/clients/${other.client_id}`, { resources: [] }), 200).resources, []);
    assert.equal((await post('/oauth2/tokens', { grant_type: 'client_credentials', resource: 'https://payroll.example.com/' }, { Authorization: basic(other.client_id, other.client_secret) })).body.error, 'invalid_target');
  });

  test('a wrong secret is 401 invalid_client with WWW-Authenticate, by either method and through openid-client', async () => {
    const wrongBasic = await post('/oauth2/tokens', { grant_type: 'client_credentials' }, { Authorization: basic(machine.client_id, 'wrong') });
    assert.equal(wrongBasic.status, 401);
    assert.equal(wrongBasic.body.error, 'invalid_client');
    assert.equal(typeof wrongBasic.body.error_description, 'string');
    assert.match(wrongBasic.headers.get('www-authenticate') ?? '', /^Basic /);
    assert.equal(wrongBasic.body.errors, undefined, 'not the envelope');
    const wrongPost = await post('/oauth2/tokens', { grant_type: 'client_credentials', client_id: machine.client_id, client_secret: 'wrong' });
    assert.deepEqual([wrongPost.status, wrongPost.body.error], [401, 'invalid_client']);
    const unknown = await post('/oauth2/tokens', { grant_type: 'client_credentials' }, { Authorization: basic('no-such-client', 'x') });
    assert.deepEqual([unknown.status, unknown.body.error], [401, 'invalid_client']);
    const none = await post('/oauth2/tokens', { grant_type: 'client_credentials' });
    assert.deepEqual([none.status, none.body.error], [401, 'invalid_client']);
    const confidentialWithout = await post('/oauth2/tokens', { grant_type: 'client_credentials', client_id: machine.client_id });
    assert.deepEqual([confidentialWithout.status, confidentialWithout.body.error], [401, 'invalid_client']);
    const both = await post('/oauth2/tokens', { grant_type: 'client_credentials', client_secret: machine.client_secret }, { Authorization: basic(machine.client_id, machine.client_secret) });
    assert.deepEqual([both.status, both.body.error], [400, 'invalid_request']);

    const config = await configFor({ client_id: machine.client_id, client_secret: 'wrong' });
    // The library reads the challenge before the body: the 401 and its Basic scheme are what it reports.
    await assert.rejects(oidc.clientCredentialsGrant(config), (error: unknown) => {
      assert.ok(error instanceof oidc.WWWAuthenticateChallengeError, String(error));
      assert.equal(error.status, 401);
      assert.equal(error.cause[0]?.scheme, 'basic');
      return true;
    });
  });

  test('a rotated secret stops working at once', async () => {
    const c = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'rotating', scopes: ['x'], grant_types: ['client_credentials'] }), 201);
    const { client_secret } = expectResult(await org.admin.put(`/oauth2/clients/${c.client_id}/secret`), 200);
    const old = await post('/oauth2/tokens', { grant_type: 'client_credentials' }, { Authorization: basic(c.client_id, c.client_secret) });
    assert.deepEqual([old.status, old.body.error], [401, 'invalid_client']);
    const fresh = await post('/oauth2/tokens', { grant_type: 'client_credentials' }, { Authorization: basic(c.client_id, client_secret) });
    assert.equal(fresh.status, 200, fresh.text);
  });

  test('scope escalation is invalid_scope; other mistakes are RFC 6749 5.2 errors too', async () => {
    const auth = { Authorization: basic(machine.client_id, machine.client_secret) };
    const escalate = await post('/oauth2/tokens', { grant_type: 'client_credentials', scope: 'invoices.read admin' }, auth);
    assert.deepEqual([escalate.status, escalate.body.error], [400, 'invalid_scope']);
    assert.match(escalate.body.error_description, /admin/);
    const config = await configFor(machine);
    await assert.rejects(oidc.clientCredentialsGrant(config, { scope: 'admin' }), (e: unknown) => e instanceof oidc.ResponseBodyError && e.error === 'invalid_scope');
    const unsupported = await post('/oauth2/tokens', { grant_type: 'password' }, auth);
    assert.deepEqual([unsupported.status, unsupported.body.error], [400, 'unsupported_grant_type']);
    const missing = await post('/oauth2/tokens', {}, auth);
    assert.deepEqual([missing.status, missing.body.error], [400, 'invalid_request']);
    const json = await fetch(`${server.base}/oauth2/tokens`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...auth }, body: '{}' });
    assert.deepEqual([json.status, ((await json.json()) as { error: string }).error], [415, 'invalid_request']);
    const web = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'web', scopes: ['openid'], grant_types: ['authorization_code'], redirect_uris: ['https://app.example.com/cb'] }), 201);
    const notRegistered = await post('/oauth2/tokens', { grant_type: 'client_credentials' }, { Authorization: basic(web.client_id, web.client_secret) });
    assert.deepEqual([notRegistered.status, notRegistered.body.error], [400, 'unauthorized_client']);
  });

  test('introspection: active with its claims for a client of the organization; inactive for garbage, another organization, and a deleted client', async () => {
    const issued = await post('/oauth2/tokens', { grant_type: 'client_credentials', scope: 'invoices.write' }, { Authorization: basic(machine.client_id, machine.client_secret) });
    const token = issued.body.access_token as string;
    const config = await configFor(resourceServer);
    const seen = await oidc.tokenIntrospection(config, token);
    assert.equal(seen.active, true);
    assert.equal(seen.client_id, machine.client_id);
    assert.equal(seen.sub, machine.client_id);
    assert.equal(seen.scope, 'invoices.write');
    assert.equal(seen.iss, server.base);
    assert.equal(seen.token_type, 'Bearer');
    assert.equal(typeof seen.exp, 'number');
    assert.equal(typeof seen.iat, 'number');

    assert.deepEqual((await introspect('not a token')).body, { active: false });
    const other = await newOrg(server, 'other');
    const outsider = expectResult(await other.admin.post('/oauth2/clients', { client_name: 'outsider', scopes: [], grant_types: ['client_credentials'] }), 201);
    assert.deepEqual((await introspect(token, outsider)).body, { active: false }, "another organization's client learns nothing");
    // An identity token is not an access token (typ JWT).
    const person = expectResult(await org.admin.post('/persons', { handles: [{ type: 'email_address', value: 'p@example.com' }] }), 201);
    const identity = expectResult(await org.admin.post(`/persons/${person.person_id}/mint-token`), 201);
    assert.deepEqual((await introspect(identity)).body, { active: false });

    const doomed = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'doomed', scopes: ['x'], grant_types: ['client_credentials'] }), 201);
    const doomedToken = (await post('/oauth2/tokens', { grant_type: 'client_credentials' }, { Authorization: basic(doomed.client_id, doomed.client_secret) })).body.access_token;
    assert.equal((await introspect(doomedToken)).body.active, true);
    assert.equal((await org.admin.delete(`/oauth2/clients/${doomed.client_id}`)).status, 204);
    assert.deepEqual((await introspect(doomedToken)).body, { active: false }, "a deleted client's tokens are revoked with it");
    const gone = await post('/oauth2/tokens', { grant_type: 'client_credentials' }, { Authorization: basic(doomed.client_id, doomed.client_secret) });
    assert.deepEqual([gone.status, gone.body.error], [401, 'invalid_client']);
  });

  test('revocation: 200 always for a well-formed request; the token becomes inactive; only its own client revokes it', async () => {
    const token = (await post('/oauth2/tokens', { grant_type: 'client_credentials' }, { Authorization: basic(machine.client_id, machine.client_secret) })).body.access_token;
    const byOther = await post('/oauth2/tokens/revoke', { token }, { Authorization: basic(resourceServer.client_id, resourceServer.client_secret) });
    assert.equal(byOther.status, 200);
    assert.equal((await introspect(token)).body.active, true, "another client cannot revoke it");
    await oidc.tokenRevocation(await configFor(machine, 'post'), token);
    assert.deepEqual((await introspect(token)).body, { active: false });
    assert.equal((await post('/oauth2/tokens/revoke', { token }, { Authorization: basic(machine.client_id, machine.client_secret) })).status, 200, 'again: still 200');
    assert.equal((await post('/oauth2/tokens/revoke', { token: 'garbage', token_type_hint: 'access_token' }, { Authorization: basic(machine.client_id, machine.client_secret) })).status, 200);
    const unauth = await post('/oauth2/tokens/revoke', { token }, { Authorization: basic(machine.client_id, 'wrong') });
    assert.deepEqual([unauth.status, unauth.body.error], [401, 'invalid_client']);
    const noToken = await post('/oauth2/tokens/revoke', {}, { Authorization: basic(machine.client_id, machine.client_secret) });
    assert.deepEqual([noToken.status, noToken.body.error], [400, 'invalid_request']);
    // The revocation is organization state: it survives in the snapshot form and is pruned once expired.
    assert.equal(server.service.registry.get(org.id)?.state.oauth_revoked.size, 1);
  });

  test('forged access tokens are never active: alg none, and HMAC keyed with the published public key', async () => {
    const real = (await post('/oauth2/tokens', { grant_type: 'client_credentials' }, { Authorization: basic(machine.client_id, machine.client_secret) })).body.access_token as string;
    const [h, p] = real.split('.') as [string, string];
    const header = JSON.parse(Buffer.from(h, 'base64url').toString());
    const none = `${b64({ alg: 'none', typ: 'at+jwt' })}.${p}.`;
    assert.deepEqual((await introspect(none)).body, { active: false });
    const jwk = (await server.client.as('', '').get('/.well-known/jwks.json')).body.keys[0];
    for (const secret of [JSON.stringify(jwk), Buffer.from(JSON.stringify(jwk)).toString('base64url'), jwk.x as string]) {
      const hs = `${b64({ alg: 'HS256', typ: 'at+jwt', kid: header.kid })}.${p}`;
      const forged = `${hs}.${createHmac('sha256', secret).update(hs).digest('base64url')}`;
      assert.deepEqual((await introspect(forged)).body, { active: false });
    }
    // A changed claim breaks the signature.
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    assert.deepEqual((await introspect(`${h}.${b64({ ...claims, scope: 'admin' })}.${real.split('.')[2]}`)).body, { active: false });
    assert.equal((await introspect(real)).body.active, true);
  });
});
