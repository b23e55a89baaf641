// Used jti values of client assertions (RFC 7523 3) and DPoP proofs (RFC 9449 11.1) outlive a restart: one used
// before it is refused after it, and a fresh one made before it (never used) is accepted after it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { expectResult } from '../support/expect.js';
import { newOrg } from '../support/auth.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
// a fixed issuer: an assertion's audience and a proof's htu stay the same whatever port the server gets
const ENV = { SERVICE_ISSUER: 'https://id.example' };
const dir = tempDir();
let server: TestServer | undefined;
after(async () => {
  await server?.stop();
  removeDir(dir);
});

async function restart(): Promise<TestServer> {
  await server?.stop();
  server = await startTestServer(ENV, {}, dir);
  return server;
}

const tokens = (s: TestServer, body: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${s.base}/oauth2/tokens`, { method: 'POST', headers: { ...FORM, ...headers }, body: new URLSearchParams({ grant_type: 'client_credentials', ...body }).toString() });

async function refusal(res: Response): Promise<[number, string, string]> {
  const body = (await res.json()) as { error: string; error_description: string };
  return [res.status, body.error, body.error_description];
}

test('client assertions and DPoP proofs: used before a restart, refused after it; fresh ones made before it, accepted after it', async () => {
  let s = await restart();
  const org = await newOrg(s);
  const pair = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k', alg: 'ES256', use: 'sig' };
  const keyed = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'keyed', scopes: [], grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [jwk] } }), 201);
  const secret = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'dpop', scopes: [], grant_types: ['client_credentials'] }), 201);
  const basic = { Authorization: `Basic ${Buffer.from(`${secret.client_id}:${secret.client_secret}`).toString('base64')}` };
  const now = Math.floor(Date.now() / 1000);
  const assertion = () => new SignJWT({ iss: keyed.client_id, sub: keyed.client_id, aud: ENV.SERVICE_ISSUER, jti: randomUUID(), iat: now, exp: now + 120 }).setProtectedHeader({ alg: 'ES256', kid: 'k' }).sign(pair.privateKey);
  const proofKey = await generateKeyPair('ES256', { extractable: true });
  const proofJwk = await exportJWK(proofKey.publicKey);
  const proof = () => new SignJWT({ jti: randomUUID(), htm: 'POST', htu: `${ENV.SERVICE_ISSUER}/oauth2/tokens`, iat: now }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: proofJwk }).sign(proofKey.privateKey);
  const withAssertion = (a: string) => ({ client_assertion_type: JWT_BEARER, client_assertion: a });

  const [usedAssertion, freshAssertion, usedProof, freshProof] = await Promise.all([assertion(), assertion(), proof(), proof()]);
  assert.equal((await tokens(s, withAssertion(usedAssertion))).status, 200);
  assert.equal((await tokens(s, {}, { ...basic, DPoP: usedProof })).status, 200);

  s = await restart();
  const [assertionStatus, assertionError, assertionWhy] = await refusal(await tokens(s, withAssertion(usedAssertion)));
  assert.deepEqual([assertionStatus, assertionError], [401, 'invalid_client']);
  assert.match(assertionWhy, /jti was used already/);
  const [proofStatus, proofError, proofWhy] = await refusal(await tokens(s, {}, { ...basic, DPoP: usedProof }));
  assert.deepEqual([proofStatus, proofError], [400, 'invalid_dpop_proof']);
  assert.match(proofWhy, /used already/);
  assert.equal((await tokens(s, withAssertion(freshAssertion))).status, 200, 'an assertion made before the restart, first used after it');
  assert.equal((await tokens(s, {}, { ...basic, DPoP: freshProof })).status, 200, 'a proof made before the restart, first used after it');

  // and what was first used after the restart is refused after another
  s = await restart();
  assert.equal((await tokens(s, withAssertion(freshAssertion))).status, 401);
  assert.equal((await tokens(s, {}, { ...basic, DPoP: freshProof })).status, 400);
});
