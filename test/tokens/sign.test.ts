import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import type { TokenAlg } from '../../src/config.js';
import { identityClaims } from '../../src/tokens/claims.js';
import { openKeyRing } from '../../src/tokens/keys.js';
import { createTokenIssuer } from '../../src/tokens/sign.js';
import { createWal } from '../../src/wal/log.js';
import { openStore, type Store } from '../../src/wal/store.js';
import { movableClock } from '../support/clock.js';
import { removeDir, tempDir } from '../support/server.js';

const dir = tempDir('identity-sign-');
const store: Store = openStore(dir, 'local', false);
after(async () => {
  await store.close();
  removeDir(dir);
});

for (const alg of ['ES256', 'RS256', 'EdDSA'] as TokenAlg[]) {
  test(`${alg}: a token signed with node:crypto verifies with jose against the published key`, async () => {
    const clock = movableClock();
    const keys = await openKeyRing({ meta: createWal(store, () => {}), name: `keys_${alg}`, alg, ttl: 600, clock });
    let n = 0;
    const issuer = createTokenIssuer({ keys, issuer: () => 'https://id.example', ttl: 600, clock, jti: () => `jti-${++n}` });
    const claims = identityClaims({ org: 'org-1', person: { person_id: 'p-1', region: 'us-iowa', groups: ['g1'] }, authenticated_methods: ['api'], first_token: false, custom_claims: { plan: 'pro' } });
    const from = Math.floor(clock.nowMs() / 1000);
    const issued = issuer.issue(claims);
    const token = await issued.token;
    const to = Math.floor(clock.nowMs() / 1000);

    const header = decodeProtectedHeader(token);
    assert.deepEqual(header, { alg, typ: 'JWT', kid: keys.current().kid });
    const jwk = keys.jwks().keys[0];
    assert.ok(jwk);
    const { payload } = await jwtVerify(token, await importJWK(jwk, alg), { issuer: 'https://id.example', audience: 'org-1', algorithms: [alg], currentDate: new Date(clock.nowMs()) });
    assert.equal(payload.jti, 'jti-1');
    assert.equal(payload.sub, 'p-1');
    assert.equal(payload['plan'], 'pro');
    assert.deepEqual(payload['groups'], ['g1']);
    // Read when issuing, which a slow signature (RS256 on a busy machine) can leave seconds behind.
    assert.ok((payload.iat as number) >= from && (payload.iat as number) <= to, `iat ${payload.iat} outside ${from}..${to}`);
    assert.equal(payload.exp, (payload.iat as number) + 600);
    assert.equal(issued.iat, payload.iat);
    assert.equal(issued.exp, payload.exp);
    assert.deepEqual(Object.keys(payload).slice(0, 8), ['iss', 'aud', 'oid', 'sub', 'person_id', 'iat', 'exp', 'jti']);
  });
}

test('after a rotation the issuer signs with the new key and names it in the header', async () => {
  const clock = movableClock();
  const keys = await openKeyRing({ meta: createWal(store, () => {}), name: 'keys_rotation', alg: 'ES256', ttl: 600, clock });
  const issuer = createTokenIssuer({ keys, issuer: 'https://id.example', ttl: 600, clock });
  const before = issuer.issue({});
  const fresh = await keys.rotate();
  const afterRotation = issuer.issue({});
  assert.notEqual(before.kid, fresh.kid);
  assert.equal(afterRotation.kid, fresh.kid);
  assert.equal(decodeProtectedHeader(await afterRotation.token).kid, fresh.kid);
  assert.notEqual(before.jti, afterRotation.jti);
});

test('a token may have its own lifetime; without one it has the issuer\'s', async () => {
  const clock = movableClock();
  const keys = await openKeyRing({ meta: createWal(store, () => {}), name: 'keys_lifetime', alg: 'ES256', ttl: 600, clock });
  const issuer = createTokenIssuer({ keys, issuer: 'https://id.example', ttl: 600, clock });
  const own = issuer.issue({}, 60);
  assert.equal(own.exp - own.iat, 60);
  const { payload } = await jwtVerify(await own.token, await importJWK(keys.jwks().keys[0] ?? {}, 'ES256'), { currentDate: new Date(clock.nowMs()) });
  assert.equal((payload.exp as number) - (payload.iat as number), 60);
  const byDefault = issuer.issue({});
  assert.equal(byDefault.exp - byDefault.iat, 600);
  assert.equal(keys.current().maxTtl, 600, 'a shorter lifetime changes nothing about the key');
});

test('tokens issued one after another, small and larger than the issuer\'s scratch buffer, with non-ASCII claims, each verify with their own claims', async () => {
  const clock = movableClock();
  const keys = await openKeyRing({ meta: createWal(store, () => {}), name: 'keys_scratch', alg: 'ES256', ttl: 600, clock });
  const issuer = createTokenIssuer({ keys, issuer: () => 'https://id.example', ttl: 600, clock });
  const key = await importJWK(keys.jwks().keys[0] as Parameters<typeof importJWK>[0], 'ES256');
  const notes = ['short', 'é€😀'.repeat(700), 'x'.repeat(9000), 'after the large ones'];
  const issued = notes.map((note) => issuer.issue(identityClaims({ org: 'org-1', person: { person_id: 'p-1', region: 'us-iowa', groups: [] }, authenticated_methods: ['api'], first_token: false, custom_claims: { note } })));
  for (const [i, pending] of issued.entries()) {
    const { payload } = await jwtVerify(await pending.token, key, { issuer: 'https://id.example', audience: 'org-1', currentDate: new Date(clock.nowMs()) });
    assert.equal(payload['note'], notes[i]);
    assert.equal(payload.jti, pending.jti);
  }
});
