// validate-jwt and DPoP (RFC 9449 7): the service's DPoP-bound access tokens, checked as a third-party issuer's
// (jwks_url, issuer, audience), pass the Gate only as `Authorization: DPoP` with a fresh proof of their key
// for the Gate's own URL; as a bearer token, without a proof, with a replayed proof or another key's, never.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createHash, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { gateDoc, startEchoUpstream, startTestGate, type EchoUpstream } from '../support/gate.js';
import { expectResult } from '../support/expect.js';
import { newOrg } from '../support/auth.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let upstream: EchoUpstream;
let gate: Awaited<ReturnType<typeof startTestGate>>;
let client: { client_id: string; client_secret: string };

interface Key {
  privateKey: CryptoKey;
  jwk: JWK;
}
const newKey = async (): Promise<Key> => {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, jwk: await exportJWK(publicKey) };
};
const proof = (key: Key, htm: string, htu: string, claims: Record<string, unknown> = {}) =>
  new SignJWT({ jti: randomUUID(), htm, htu, iat: Math.floor(Date.now() / 1000), ...claims }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }).sign(key.privateKey);
const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

/** A client_credentials token of the service, DPoP-bound to `key` when given. */
async function accessToken(key?: Key): Promise<string> {
  const url = `${server.base}/oauth2/tokens`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`, ...(key && { dpop: await proof(key, 'POST', url) }) },
    body: 'grant_type=client_credentials',
  });
  const body = (await res.json()) as { access_token: string; token_type: string };
  assert.equal(body.token_type, key ? 'DPoP' : 'Bearer');
  return body.access_token;
}

before(async () => {
  server = await startTestServer();
  upstream = await startEchoUpstream();
  const org = await newOrg(server);
  client = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'api caller', scopes: [], grant_types: ['client_credentials'] }), 201);
  gate = await startTestGate(
    gateDoc(server.base, {
      default: { target: upstream.base },
      plugins: [{ id: 'at', type: 'validate-jwt', parameters: { jwks_url: `${server.base}/.well-known/jwks.json`, issuer: server.base, audience: server.base } }],
    }),
  );
});
after(async () => {
  await gate.close();
  await upstream.close();
  await server.stop();
});

async function call(path: string, authorization: string, dpop?: string) {
  const res = await fetch(`${gate.base}${path}`, { headers: { authorization, ...(dpop !== undefined && { dpop }) } });
  return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '' };
}

test('a DPoP-bound token passes with a proof of its key for this request, and only so', async () => {
  const key = await newKey();
  const token = await accessToken(key);
  const url = `${gate.base}/api/items`;
  const seen = upstream.seen.length;
  assert.equal((await call('/api/items', `DPoP ${token}`, await proof(key, 'GET', url, { ath: ath(token) }))).status, 200);
  // again (the token now from the cache of verified tokens): a new proof each time
  assert.equal((await call('/api/items?page=2', `DPoP ${token}`, await proof(key, 'GET', url, { ath: ath(token) }))).status, 200);
  assert.equal(upstream.seen.length, seen + 2);

  const bearer = await call('/api/items', `Bearer ${token}`);
  assert.equal(bearer.status, 401, 'a DPoP-bound token presented without its proof');
  assert.match(bearer.challenge, /^DPoP/);
  assert.equal((await call('/api/items', `DPoP ${token}`)).status, 401, 'no proof');
  const used = await proof(key, 'GET', url, { ath: ath(token) });
  assert.equal((await call('/api/items', `DPoP ${token}`, used)).status, 200);
  assert.equal((await call('/api/items', `DPoP ${token}`, used)).status, 401, 'a replayed proof');
  const other = await newKey();
  assert.equal((await call('/api/items', `DPoP ${token}`, await proof(other, 'GET', url, { ath: ath(token) }))).status, 401, "another key's proof");
  assert.equal((await call('/api/items', `DPoP ${token}`, await proof(key, 'POST', url, { ath: ath(token) }))).status, 401, 'htm');
  assert.equal((await call('/api/items', `DPoP ${token}`, await proof(key, 'GET', `${gate.base}/api/other`, { ath: ath(token) }))).status, 401, 'htu');
  assert.equal((await call('/api/items', `DPoP ${token}`, await proof(key, 'GET', url, { ath: ath('another') }))).status, 401, 'ath');
  assert.equal((await call('/api/items', `DPoP ${token}`, await proof(key, 'GET', url, { ath: ath(token), iat: Math.floor(Date.now() / 1000) - 3600 }))).status, 401, 'iat');
  assert.equal(upstream.seen.length, seen + 3, 'the upstream saw only the admitted requests');
});

test('a bearer token still passes as one, not as DPoP', async () => {
  const token = await accessToken();
  assert.equal((await call('/api/items', `Bearer ${token}`)).status, 200);
  const key = await newKey();
  assert.equal((await call('/api/items', `DPoP ${token}`, await proof(key, 'GET', `${gate.base}/api/items`, { ath: ath(token) }))).status, 401);
});
