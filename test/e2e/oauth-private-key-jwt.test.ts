// private_key_jwt (RFC 7523 2.2 and 3, OpenID Connect Core 9) on the real server: openid-client as the
// relying party with registered keys (jwks) and published ones (jwks_uri on a loopback server), the
// negative cases of each rule (audience per RFC 7523bis, jti reuse, expiry, lifetime, algorithms, keys the
// assertion brings along), registration rules, the outbound address guard for jwks_uri, and discovery.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import * as oidc from 'openid-client';
import { expectError, expectResult, unchanged } from '../support/expect.js';
import { newOrg, type Org } from '../support/auth.js';
import { startTestServer, type TestServer } from '../support/server.js';

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

interface KeyPair {
  privateKey: CryptoKey;
  jwk: JWK;
}

async function keyPair(alg: string, kid: string): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** A JWKS server on loopback, as a client publishes its keys. */
async function jwksServer(keys: () => JWK[]): Promise<{ url: string; fetches: () => number; close(): Promise<void> }> {
  let count = 0;
  const server: Server = createServer((_req, res) => {
    count++;
    res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(JSON.stringify({ keys: keys() }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/jwks`, fetches: () => count, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('OAuth 2.0 client authentication with private_key_jwt', () => {
  let server: TestServer;
  let org: Org;
  let es: KeyPair;
  let rsa: KeyPair;
  let published: Awaited<ReturnType<typeof jwksServer>>;
  let inline: { client_id: string };
  let remote: { client_id: string };

  const post = async (path: string, form: Record<string, string>) => {
    const res = await fetch(server.base + path, { method: 'POST', headers: FORM, body: new URLSearchParams(form).toString() });
    const text = await res.text();
    return { status: res.status, text, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
  };
  /** An assertion as RFC 7523 3 describes it; each override replaces (or with undefined removes) a claim. */
  const assertion = (key: KeyPair, clientId: string, claims: Record<string, unknown> = {}, alg = key.jwk.alg as string, header: Record<string, unknown> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    const all: Record<string, unknown> = { iss: clientId, sub: clientId, aud: server.base, jti: randomUUID(), iat: now, exp: now + 60, ...claims };
    for (const [k, v] of Object.entries(all)) if (v === undefined) delete all[k];
    return new SignJWT(all).setProtectedHeader({ alg, kid: key.jwk.kid as string, ...header }).sign(key.privateKey);
  };
  const token = (clientAssertion: string, extra: Record<string, string> = {}) =>
    post('/oauth2/tokens', { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER, client_assertion: clientAssertion, ...extra });

  before(async () => {
    // jwks_uri on loopback needs the deployment's allowance for insecure targets, as a webhook on loopback does
    server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
    org = await newOrg(server);
    es = await keyPair('ES256', 'es-1');
    rsa = await keyPair('PS256', 'rsa-1');
    published = await jwksServer(() => [rsa.jwk]);
    const created = expectResult(
      await org.admin.post('/oauth2/clients', { client_name: 'signed', scopes: ['reports.read'], grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [es.jwk] } }),
      201,
    );
    assert.equal(created.client_secret, undefined, 'a client that signs its assertions gets no secret');
    assert.equal(created.token_endpoint_auth_method, 'private_key_jwt');
    assert.deepEqual(created.jwks, { keys: [es.jwk] });
    inline = created;
    remote = expectResult(
      await org.admin.post('/oauth2/clients', { client_name: 'published', scopes: ['reports.read'], grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: published.url }),
      201,
    );
  });
  after(async () => {
    await published.close();
    await server.stop();
  });

  test('discovery lists private_key_jwt and its algorithms, and openid-client reads them', async () => {
    const config = await oidc.discovery(new URL(server.base), inline.client_id, undefined, oidc.PrivateKeyJwt({ key: es.privateKey, kid: 'es-1' }), { execute: [oidc.allowInsecureRequests] });
    const meta = config.serverMetadata();
    assert.ok(meta.token_endpoint_auth_methods_supported?.includes('private_key_jwt'));
    for (const alg of ['ES256', 'PS256', 'RS256', 'EdDSA']) assert.ok(meta.token_endpoint_auth_signing_alg_values_supported?.includes(alg), alg);
    assert.ok(!meta.token_endpoint_auth_signing_alg_values_supported?.some((a) => a.startsWith('HS') || a === 'none'), 'no shared-secret or unsigned assertions');
    assert.ok(meta.introspection_endpoint_auth_methods_supported?.includes('private_key_jwt'));
  });

  test('openid-client authenticates with a registered key (jwks) and with a published one (jwks_uri)', async () => {
    const config = await oidc.discovery(new URL(server.base), inline.client_id, undefined, oidc.PrivateKeyJwt({ key: es.privateKey, kid: 'es-1' }), { execute: [oidc.allowInsecureRequests] });
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'reports.read' });
    assert.equal(tokens.scope, 'reports.read');
    // introspection authenticates the same way
    const introspected = await oidc.tokenIntrospection(config, tokens.access_token);
    assert.equal(introspected.active, true);
    assert.equal(introspected.client_id, inline.client_id);

    const before = published.fetches();
    const remoteConfig = await oidc.discovery(new URL(server.base), remote.client_id, undefined, oidc.PrivateKeyJwt({ key: rsa.privateKey, kid: 'rsa-1' }), { execute: [oidc.allowInsecureRequests] });
    assert.equal((await oidc.clientCredentialsGrant(remoteConfig)).scope, 'reports.read');
    assert.equal((await oidc.clientCredentialsGrant(remoteConfig)).scope, 'reports.read');
    assert.equal(published.fetches() - before, 1, 'the published set is fetched once and cached');
  });

  test('a reused jti is refused while the assertion lives', async () => {
    const once = await assertion(es, inline.client_id);
    assert.equal((await token(once)).status, 200);
    const again = await token(once);
    assert.deepEqual([again.status, again.body.error], [401, 'invalid_client']);
    assert.match(again.body.error_description, /jti was used already/);
    assert.match(again.headers.get('www-authenticate') ?? '', /^Basic/);
  });

  test('the audience is the issuer alone (RFC 7523bis): the token endpoint URL, another server or an added audience are refused', async () => {
    for (const aud of [`${server.base}/oauth2/tokens`, 'https://other.example', [server.base, 'https://other.example']]) {
      const r = await token(await assertion(es, inline.client_id, { aud }));
      assert.deepEqual([r.status, r.body.error], [401, 'invalid_client'], JSON.stringify(aud));
      assert.match(r.body.error_description, /aud must be the issuer/);
    }
    assert.equal((await token(await assertion(es, inline.client_id, { aud: [server.base] }))).status, 200, 'the issuer as the only member of a list');
    const missing = await token(await assertion(es, inline.client_id, { aud: undefined }));
    assert.deepEqual([missing.status, missing.body.error], [401, 'invalid_client']);
  });

  test('an expired assertion, one living too long, one from the future, or without jti is refused; small clock skew is tolerated', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await token(await assertion(es, inline.client_id, { iat: now - 120, exp: now - 60 }));
    assert.deepEqual([expired.status, expired.body.error, expired.body.error_description], [401, 'invalid_client', 'client_assertion: expired (exp)']);
    const long = await token(await assertion(es, inline.client_id, { exp: now + 3600 }));
    assert.deepEqual([long.status, long.body.error], [401, 'invalid_client']);
    assert.match(long.body.error_description, /more than 600 seconds/);
    const future = await token(await assertion(es, inline.client_id, { iat: now + 300, exp: now + 360 }));
    assert.deepEqual([future.status, future.body.error], [401, 'invalid_client']);
    const noJti = await token(await assertion(es, inline.client_id, { jti: undefined }));
    assert.deepEqual([noJti.status, noJti.body.error], [401, 'invalid_client']);
    assert.match(noJti.body.error_description, /jti/);
    const skewed = await token(await assertion(es, inline.client_id, { iat: now + 5, nbf: now + 5 }));
    assert.equal(skewed.status, 200, `a clock 5 s ahead: ${skewed.text}`);
  });

  test('iss and sub are the client; the client_id in the form must agree', async () => {
    const other = await token(await assertion(es, inline.client_id, { iss: 'someone-else' }));
    assert.deepEqual([other.status, other.body.error], [401, 'invalid_client']);
    assert.match(other.body.error_description, /iss/);
    const mismatched = await token(await assertion(es, inline.client_id), { client_id: remote.client_id });
    assert.deepEqual([mismatched.status, mismatched.body.error], [401, 'invalid_client']);
    const named = await token(await assertion(es, inline.client_id), { client_id: inline.client_id });
    assert.equal(named.status, 200, named.text);
  });

  test('signatures: only the registered keys, asymmetric algorithms, and no key carried in the header', async () => {
    const stranger = await keyPair('ES256', 'es-1');
    const forged = await token(await assertion(stranger, inline.client_id));
    assert.deepEqual([forged.status, forged.body.error], [401, 'invalid_client']);
    assert.match(forged.body.error_description, /signature/);
    // the stranger's key in the header must not be used to verify
    const carried = await token(await assertion(stranger, inline.client_id, {}, 'ES256', { jwk: stranger.jwk }));
    assert.deepEqual([carried.status, carried.body.error], [401, 'invalid_client']);
    assert.match(carried.body.error_description, /jwk header/);
    const hmacKey = new TextEncoder().encode('a-shared-secret-that-is-long-enough-for-hs256');
    const now = Math.floor(Date.now() / 1000);
    const hs = await new SignJWT({ iss: inline.client_id, sub: inline.client_id, aud: server.base, jti: randomUUID(), exp: now + 60 }).setProtectedHeader({ alg: 'HS256' }).sign(hmacKey);
    const hmac = await token(hs);
    assert.deepEqual([hmac.status, hmac.body.error], [401, 'invalid_client']);
    assert.match(hmac.body.error_description, /alg must be one of/);
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify({ iss: inline.client_id, sub: inline.client_id, aud: server.base, jti: randomUUID(), exp: now + 60 })).toString('base64url')}.`;
    assert.equal((await token(unsigned)).status, 401);
    const garbage = await token('this.notatall.valid');
    assert.deepEqual([garbage.status, garbage.body.error], [401, 'invalid_client']);
  });

  test('client_assertion_type is required and exact; one method at a time; a secret client cannot sign, a signing client has no secret', async () => {
    const wrongType = await post('/oauth2/tokens', { grant_type: 'client_credentials', client_assertion_type: 'urn:ietf:mycustom', client_assertion: await assertion(es, inline.client_id) });
    assert.deepEqual([wrongType.status, wrongType.body.error], [400, 'invalid_request']);
    const noType = await post('/oauth2/tokens', { grant_type: 'client_credentials', client_assertion: await assertion(es, inline.client_id) });
    assert.deepEqual([noType.status, noType.body.error], [400, 'invalid_request']);
    const both = await token(await assertion(es, inline.client_id), { client_secret: 'x' });
    assert.deepEqual([both.status, both.body.error], [400, 'invalid_request']);
    const secretClient = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'secret', scopes: [], grant_types: ['client_credentials'], jwks: { keys: [es.jwk] } }), 201);
    assert.equal(secretClient.token_endpoint_auth_method, 'client_secret_basic');
    const signed = await token(await assertion(es, secretClient.client_id));
    assert.deepEqual([signed.status, signed.body.error], [401, 'invalid_client']);
    assert.match(signed.body.error_description, /not private_key_jwt/);
  });

  test('registration: public keys only, jwks or jwks_uri, a secret before switching to a secret method', async () => {
    const base = { client_name: 'c', scopes: [], grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt' };
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const privateJwk = await exportJWK(privateKey);
    await unchanged(org.admin, async () => {
      expectError(await org.admin.post('/oauth2/clients', { ...base, jwks: { keys: [privateJwk] } }), 400, 'jwks.keys[0]', 'private member');
      expectError(await org.admin.post('/oauth2/clients', { ...base, jwks: { keys: [{ kty: 'oct', k: 'AAAA' }] } }), 400, 'jwks.keys[0].kty');
      expectError(await org.admin.post('/oauth2/clients', { ...base, jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' }] } }), 400, 'not a valid public key');
      expectError(await org.admin.post('/oauth2/clients', base), 400, 'jwks or jwks_uri');
      expectError(await org.admin.post('/oauth2/clients', { ...base, jwks: { keys: [es.jwk] }, jwks_uri: published.url }), 400, 'not both');
      expectError(await org.admin.post('/oauth2/clients', { ...base, jwks_uri: 'ftp://keys.example/jwks' }), 400, 'jwks_uri');
      expectError(await org.admin.post('/oauth2/clients', { ...base, grant_types: ['authorization_code'], redirect_uris: ['http://localhost/cb'], public: true, jwks: { keys: [es.jwk] } }), 400, 'token_endpoint_auth_method');
      expectError(await org.admin.post('/oauth2/clients', { ...base, token_endpoint_auth_method: 'none', jwks: undefined }), 400, 'none is for public clients');
      expectError(await org.admin.post('/oauth2/clients', { ...base, jwks: { keys: [es.jwk, es.jwk] } }), 400, 'more than once');
    });
    const c = expectResult(await org.admin.post('/oauth2/clients', { ...base, jwks: { keys: [es.jwk] } }), 201);
    // a jwks_uri replaces the registered set
    const moved = expectResult(await org.admin.patch(`/oauth2/clients/${c.client_id}`, { jwks_uri: published.url }), 200);
    assert.deepEqual([moved.jwks, moved.jwks_uri], [undefined, published.url]);
    expectError(await org.admin.patch(`/oauth2/clients/${c.client_id}`, { jwks_uri: null }), 400, 'jwks or jwks_uri');
    expectError(await org.admin.patch(`/oauth2/clients/${c.client_id}`, { token_endpoint_auth_method: 'client_secret_basic' }), 400, 'has no secret');
    const { client_secret } = expectResult(await org.admin.put(`/oauth2/clients/${c.client_id}/secret`, {}), 200);
    const switched = expectResult(await org.admin.patch(`/oauth2/clients/${c.client_id}`, { token_endpoint_auth_method: 'client_secret_basic' }), 200);
    assert.equal(switched.token_endpoint_auth_method, 'client_secret_basic');
    const basic = `Basic ${Buffer.from(`${c.client_id}:${client_secret}`).toString('base64')}`;
    const r = await fetch(`${server.base}/oauth2/tokens`, { method: 'POST', headers: { ...FORM, Authorization: basic }, body: 'grant_type=client_credentials' });
    assert.equal(r.status, 200);
    // and the secret is never shown again
    const read = expectResult(await org.admin.get(`/oauth2/clients/${c.client_id}`), 200);
    assert.equal(read.client_secret, undefined);
  });

  test('a jwks_uri answer larger than 64 KiB is refused without being read whole, declared or not', async () => {
    const big = JSON.stringify({ keys: [rsa.jwk], padding: 'x'.repeat(100 * 1024) });
    for (const declared of [true, false]) {
      const huge = createServer((_req, res) => {
        // without Content-Length the body comes chunked, so only counting what arrives can stop it
        res.writeHead(200, { 'content-type': 'application/json', ...(declared && { 'content-length': String(Buffer.byteLength(big)) }) });
        res.end(big);
      });
      await new Promise<void>((resolve) => huge.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(huge.address() as { port: number }).port}/jwks`;
        const c = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'huge', scopes: [], grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: url }), 201);
        const res = await token(await assertion(rsa, c.client_id));
        assert.deepEqual([res.status, res.body.error], [401, 'invalid_client'], res.text);
        assert.match(res.body.error_description, /jwks_uri: the answer is larger than 65536 bytes/);
      } finally {
        await new Promise((resolve) => huge.close(resolve));
      }
    }
  });
});

describe('private_key_jwt: jwks_uri goes through the outbound address guard', () => {
  let server: TestServer;
  let published: Awaited<ReturnType<typeof jwksServer>>;

  before(async () => {
    // keys.example resolves to loopback: the guard must refuse to fetch it, as it refuses a webhook there
    server = await startTestServer({}, { resolveHost: async () => [{ address: '127.0.0.1', family: 4 }] });
    published = await jwksServer(() => []);
  });
  after(async () => {
    await published.close();
    await server.stop();
  });

  test('an http or IP-literal jwks_uri is refused at registration, and a name resolving to loopback is never fetched', async () => {
    const org = await newOrg(server);
    const key = await keyPair('ES256', 'k');
    const base = { client_name: 'c', scopes: [], grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt' };
    expectError(await org.admin.post('/oauth2/clients', { ...base, jwks_uri: published.url }), 400, 'jwks_uri', 'https');
    expectError(await org.admin.post('/oauth2/clients', { ...base, jwks_uri: 'https://127.0.0.1/jwks' }), 400, 'jwks_uri', 'IP address');
    const port = new URL(published.url).port;
    const c = expectResult(await org.admin.post('/oauth2/clients', { ...base, jwks_uri: `https://keys.example:${port}/jwks` }), 201);
    const now = Math.floor(Date.now() / 1000);
    const signed = await new SignJWT({ iss: c.client_id, sub: c.client_id, aud: server.base, jti: randomUUID(), exp: now + 60 }).setProtectedHeader({ alg: 'ES256', kid: 'k' }).sign(key.privateKey);
    const res = await fetch(`${server.base}/oauth2/tokens`, { method: 'POST', headers: FORM, body: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER, client_assertion: signed }).toString() });
    const body = (await res.json()) as { error: string; error_description: string };
    assert.deepEqual([res.status, body.error], [401, 'invalid_client']);
    // told as any endpoint that gives no answer, whatever the reason, so jwks_uri cannot map a network
    assert.match(body.error_description, /jwks_uri: could not be fetched \(fetch failed: the endpoint could not be reached\)/);
    assert.equal(published.fetches(), 0);
  });
});
