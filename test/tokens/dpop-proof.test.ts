// The DPoP proof check on its own: a proof verifies only with the key in its own header, over the exact bytes
// signed, for every algorithm offered; a key imported once (cached by thumbprint) never lets another key's
// signature or a changed payload through.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { createManualClock } from '../../src/lib/manual-clock.js';
import { DpopProofError, accessTokenHash, createDpopProofVerifier } from '../../src/tokens/dpop-proof.js';

const URL_ = 'https://id.example.com/oauth2/tokens';
const clock = createManualClock(Date.parse('2026-01-01T00:00:00Z'));
const nowS = () => Math.floor(clock.nowMs() / 1000);
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

interface Key {
  alg: string;
  privateKey: KeyObject;
  jwk: JWK;
}
function newKey(alg: string): Key {
  const pair =
    alg.startsWith('ES') ? generateKeyPairSync('ec', { namedCurve: { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' }[alg]! })
    : alg === 'EdDSA' ? generateKeyPairSync('ed25519')
    : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { alg, privateKey: pair.privateKey, jwk: pair.publicKey.export({ format: 'jwk' }) as JWK };
}
function signWith(key: Key, input: string): string {
  const hash = key.alg === 'EdDSA' ? null : `sha${key.alg.slice(2)}`;
  const opts =
    key.alg.startsWith('ES') ? { key: key.privateKey, dsaEncoding: 'ieee-p1363' as const }
    : key.alg.startsWith('PS') ? { key: key.privateKey, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: -1 /* digest length */ }
    : key.privateKey;
  return sign(hash, Buffer.from(input), opts).toString('base64url');
}
function proof(key: Key, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): string {
  const input = `${b64({ typ: 'dpop+jwt', alg: key.alg, jwk: key.jwk, ...header })}.${b64({ jti: randomUUID(), htm: 'POST', htu: URL_, iat: nowS(), ...claims })}`;
  return `${input}.${signWith(key, input)}`;
}
const refusal = (message: RegExp) => (e: unknown) => e instanceof DpopProofError && message.test(e.message);

test('a proof of each offered algorithm verifies and answers its RFC 7638 thumbprint', async () => {
  const verifier = createDpopProofVerifier(clock);
  for (const alg of ['ES256', 'ES384', 'ES512', 'EdDSA', 'RS256', 'PS256']) {
    const key = newKey(alg);
    for (let i = 0; i < 2; i++) {
      const p = await verifier.verify(proof(key, { nonce: 'n1' }), { method: 'POST', url: URL_ });
      assert.equal(p.jkt, await calculateJwkThumbprint(key.jwk, 'sha256'), alg);
      assert.equal(p.iat, nowS());
      assert.equal(p.nonce, 'n1');
    }
  }
});

test('a proof signed by another key under the same header is refused, also once the header key is cached', async () => {
  const verifier = createDpopProofVerifier(clock);
  const key = newKey('ES256');
  await verifier.verify(proof(key), { method: 'POST', url: URL_ });
  const other = newKey('ES256');
  const [h, p] = proof(key).split('.');
  const forged = `${h}.${p}.${signWith(other, `${h}.${p}`)}`;
  await assert.rejects(verifier.verify(forged, { method: 'POST', url: URL_ }), refusal(/signature does not verify/));
  await assert.rejects(createDpopProofVerifier(clock).verify(forged, { method: 'POST', url: URL_ }), refusal(/signature does not verify/));
});

test('a proof whose payload was changed after signing is refused', async () => {
  const verifier = createDpopProofVerifier(clock);
  const key = newKey('ES256');
  const [h, , s] = proof(key, { htm: 'GET' }).split('.');
  const tampered = `${h}.${b64({ jti: randomUUID(), htm: 'POST', htu: URL_, iat: nowS() })}.${s}`;
  await assert.rejects(verifier.verify(tampered, { method: 'POST', url: URL_ }), refusal(/signature does not verify/));
  const rsa = newKey('RS256');
  const [rh, , rs] = proof(rsa).split('.');
  await assert.rejects(verifier.verify(`${rh}.${b64({ jti: 'x', htm: 'POST', htu: URL_, iat: nowS() })}.${rs}`, { method: 'POST', url: URL_ }), refusal(/signature does not verify/));
});

test('every other check still holds', async () => {
  const verifier = createDpopProofVerifier(clock);
  const key = newKey('ES256');
  const req = { method: 'POST', url: URL_ };
  await assert.rejects(verifier.verify('a.b', req), refusal(/compact JWS/));
  await assert.rejects(verifier.verify(proof(key, {}, { typ: 'JWT' }), req), refusal(/typ must be dpop\+jwt/));
  await assert.rejects(verifier.verify(proof(key, {}, { alg: 'HS256' }), req), refusal(/alg must be one of/));
  await assert.rejects(verifier.verify(proof(key, {}, { jwk: undefined }), req), refusal(/jwk header .* is required/));
  await assert.rejects(verifier.verify(proof(key, {}, { jwk: { ...key.jwk, d: 'AAAA' } }), req), refusal(/must be a public key/));
  await assert.rejects(verifier.verify(proof(key, {}, { alg: 'ES384' }), req), refusal(/not a key for ES384/));
  await assert.rejects(verifier.verify(proof(key, {}, { crit: ['x'] }), req), refusal(/crit/));
  await assert.rejects(verifier.verify(proof(key, { jti: undefined }), req), refusal(/jti claim is missing/));
  await assert.rejects(verifier.verify(proof(key, { htm: 'GET' }), req), refusal(/htm must be POST/));
  await assert.rejects(verifier.verify(proof(key, { htu: 'https://other.example.com/oauth2/tokens' }), req), refusal(/htu must be/));
  await assert.rejects(verifier.verify(proof(key, { iat: nowS() - 120 }), req), refusal(/iat must be within/));
  await assert.rejects(verifier.verify(proof(key, { iat: nowS() + 60 }), req), refusal(/iat must be within/));
  await assert.rejects(verifier.verify(proof(key, { exp: nowS() - 60 }), req), refusal(/exp claim is wrong/));
  await assert.rejects(verifier.verify(proof(key, { ath: 'wrong' }), { ...req, accessToken: 'at' }), refusal(/ath must be/));
  const ok = await verifier.verify(proof(key, { ath: accessTokenHash('at'), htu: `${URL_}?q=1` }), { ...req, accessToken: 'at' });
  assert.equal(ok.jkt, createHash('sha256').update(JSON.stringify({ crv: key.jwk.crv, kty: 'EC', x: key.jwk.x, y: key.jwk.y })).digest('base64url'));
});

test('the key cache is bounded: evicted keys are imported again and still verify', async () => {
  const verifier = createDpopProofVerifier(clock, 2);
  const keys = [newKey('ES256'), newKey('ES256'), newKey('ES256')];
  for (let round = 0; round < 2; round++) for (const key of keys) await verifier.verify(proof(key), { method: 'POST', url: URL_ });
});
