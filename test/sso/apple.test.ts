import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { ServiceError } from '../../src/errors.js';
import { appleClientSecret, secretLifetimeSeconds } from '../../src/sso/apple.js';

const NOW_MS = Date.UTC(2026, 0, 15, 10, 0, 0, 750);

function appleKey() {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), publicJwk: createPublicKey(privateKey).export({ format: 'jwk' }) };
}

test("the client-secret JWT verifies with the key's public half, with the claims Apple expects", async () => {
  const key = appleKey();
  const jwt = appleClientSecret({ client_id: 'com.example.web', team_id: 'TEAM123456', key_id: 'KEY9876543', private_key: key.pem, secret_lifetime: '1h30m' }, NOW_MS);
  const publicKey = await importJWK({ ...key.publicJwk, alg: 'ES256' }, 'ES256');
  const { payload, protectedHeader } = await jwtVerify(jwt, publicKey, {
    algorithms: ['ES256'],
    issuer: 'TEAM123456',
    audience: 'https://appleid.apple.com',
    subject: 'com.example.web',
    currentDate: new Date(NOW_MS),
  });
  assert.deepEqual(protectedHeader, { alg: 'ES256', kid: 'KEY9876543' });
  const iat = Math.floor(NOW_MS / 1000);
  assert.deepEqual(payload, { iss: 'TEAM123456', iat, exp: iat + 5400, aud: 'https://appleid.apple.com', sub: 'com.example.web' });
});

test('another key does not verify it', async () => {
  const jwt = appleClientSecret({ client_id: 'c', team_id: 'TEAM123456', key_id: 'KEY9876543', private_key: appleKey().pem, secret_lifetime: '720h' }, NOW_MS);
  assert.equal(decodeProtectedHeader(jwt).kid, 'KEY9876543');
  const other = await importJWK({ ...appleKey().publicJwk, alg: 'ES256' }, 'ES256');
  await assert.rejects(jwtVerify(jwt, other, { currentDate: new Date(NOW_MS) }), { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
});

test('the default lifetime of 30 days, and the bounds, in seconds', async () => {
  const key = appleKey();
  const jwt = appleClientSecret({ client_id: 'c', team_id: 'TEAM123456', key_id: 'KEY9876543', private_key: key.pem, secret_lifetime: '720h' }, NOW_MS);
  const { payload } = await jwtVerify(jwt, await importJWK({ ...key.publicJwk, alg: 'ES256' }, 'ES256'), { currentDate: new Date(NOW_MS) });
  assert.equal((payload.exp as number) - (payload.iat as number), 30 * 24 * 3600);
  assert.equal(secretLifetimeSeconds('300s'), 300);
  assert.equal(secretLifetimeSeconds('15777000s'), 15_777_000);
  assert.throws(() => secretLifetimeSeconds('299s'), ServiceError);
  assert.throws(() => secretLifetimeSeconds('15777001s'), ServiceError);
});
