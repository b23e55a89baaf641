import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import type { TokenAlg } from '../../src/config.js';
import { openKeyRing } from '../../src/tokens/keys.js';
import { createTokenIssuer } from '../../src/tokens/sign.js';
import { SigningThreads } from '../../src/tokens/signing-threads.js';
import { createWal } from '../../src/wal/log.js';
import { openStore, type Store } from '../../src/wal/store.js';
import { movableClock } from '../support/clock.js';
import { removeDir, tempDir } from '../support/server.js';

const dir = tempDir('identity-signing-threads-');
const store: Store = openStore(dir, 'local', false);
after(async () => {
  await store.close();
  removeDir(dir);
});

const ring = (name: string, alg: TokenAlg, clock = movableClock()) => openKeyRing({ meta: createWal(store, () => {}), name, alg, ttl: 600, clock });

for (const alg of ['ES256', 'RS256', 'EdDSA'] as TokenAlg[]) {
  test(`${alg}: tokens signed by two threads at once all verify with jose, each with its own claims`, async () => {
    const clock = movableClock();
    const keys = await ring(`threads_${alg}`, alg, clock);
    const signer = new SigningThreads(2);
    try {
      const issuer = createTokenIssuer({ keys, issuer: 'https://id.example', ttl: 600, clock, signer });
      // More jobs than either thread takes at once, so that some wait and leave as a batch.
      const pending = Array.from({ length: 200 }, (_, i) => issuer.issue({ sub: `p-${i}` }));
      const tokens = await Promise.all(pending.map((p) => p.token));
      const key = await importJWK(keys.jwks().keys[0] as object, alg);
      for (const [i, token] of tokens.entries()) {
        const { payload } = await jwtVerify(token, key, { issuer: 'https://id.example', algorithms: [alg], currentDate: new Date(clock.nowMs()) });
        assert.equal(payload.sub, `p-${i}`);
        assert.equal(payload.jti, pending[i]?.jti);
      }
    } finally {
      await signer.close();
    }
  });
}

test('after a rotation the threads sign with the new key, and the old tokens still verify', async () => {
  const clock = movableClock();
  const keys = await ring('threads_rotation', 'ES256', clock);
  const signer = new SigningThreads(1);
  try {
    const issuer = createTokenIssuer({ keys, issuer: 'https://id.example', ttl: 600, clock, signer });
    const before = await issuer.issue({ sub: 'a' }).token;
    const fresh = await keys.rotate();
    const later = await issuer.issue({ sub: 'b' }).token;
    assert.equal(decodeProtectedHeader(later).kid, fresh.kid);
    for (const token of [before, later]) {
      const jwk = keys.jwks().keys.find((k) => k.kid === decodeProtectedHeader(token).kid);
      await jwtVerify(token, await importJWK(jwk as object, 'ES256'), { currentDate: new Date(clock.nowMs()) });
    }
  } finally {
    await signer.close();
  }
});

test('once closed, the threads refuse new jobs instead of leaving them waiting', async () => {
  const keys = await ring('threads_closed', 'ES256');
  const signer = new SigningThreads(1);
  await signer.close();
  await assert.rejects(signer.sign(keys.current(), 'e30.e30'), /stopped/);
});

test('when a thread dies with tokens in flight, only those are refused, and the next token is signed by a new thread', async () => {
  const clock = movableClock();
  const keys = await ring('threads_crash', 'ES256', clock);
  const replaced: Error[] = [];
  const signer = new SigningThreads(1, { replaced: (reason) => replaced.push(reason) });
  try {
    const issuer = createTokenIssuer({ keys, issuer: 'https://id.example', ttl: 600, clock, signer });
    await issuer.issue({ sub: 'warm' }).token;
    const dying = signer.workers[0];
    const inFlight = Array.from({ length: 50 }, (_, i) => issuer.issue({ sub: `lost-${i}` }).token);
    // Ended from outside, as a crash or an out-of-memory kill of the thread would end it.
    await dying?.terminate();
    const outcomes = await Promise.allSettled(inFlight);
    const refused = outcomes.filter((o) => o.status === 'rejected');
    assert.ok(refused.length > 0, 'the jobs of the ended thread are refused, not left waiting');
    for (const o of refused) assert.match(String((o as PromiseRejectedResult).reason), /signing thread exited/);

    const token = await issuer.issue({ sub: 'after' }).token;
    const key = await importJWK(keys.jwks().keys[0] as object, 'ES256');
    const { payload } = await jwtVerify(token, key, { currentDate: new Date(clock.nowMs()) });
    assert.equal(payload.sub, 'after');
    assert.equal(replaced.length, 1);
    assert.notEqual(signer.workers[0], dying);
  } finally {
    await signer.close();
  }
});

test('closing refuses the jobs still in flight instead of leaving them waiting', async () => {
  const keys = await ring('threads_close_in_flight', 'ES256');
  const signer = new SigningThreads(1);
  const outcomes = Promise.allSettled(Array.from({ length: 20 }, () => signer.sign(keys.current(), 'e30.e30')));
  // Closed before this thread yields, so no answer can have come back.
  await signer.close();
  for (const o of await outcomes) assert.match(String(o.status === 'rejected' && o.reason), /stopped/);
});
