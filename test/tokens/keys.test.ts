import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { importJWK, jwtVerify } from 'jose';
import { openKeyRing, type KeyRingOptions } from '../../src/tokens/keys.js';
import { createTokenIssuer } from '../../src/tokens/sign.js';
import { createWal, type Wal } from '../../src/wal/log.js';
import { openStore, type Store } from '../../src/wal/store.js';
import { movableClock } from '../support/clock.js';
import { removeDir, tempDir } from '../support/server.js';

const stores: Store[] = [];
const dirs: string[] = [];
after(async () => {
  for (const store of stores) await store.close();
  for (const dir of dirs) removeDir(dir);
});

/** A WAL on the files in dir: opening it again stands for a restart. */
function reopen(dir: string): Wal {
  const store = openStore(dir, 'local', false);
  stores.push(store);
  return createWal(store, () => {});
}

function freshWal(): { wal: Wal; dir: string } {
  const dir = tempDir('identity-keys-');
  dirs.push(dir);
  return { wal: reopen(dir), dir };
}

const ring = (wal: Wal, clock = movableClock(), over: Partial<KeyRingOptions> = {}) =>
  openKeyRing({ meta: wal, name: 'token_keys', alg: 'ES256', ttl: 3600, clock, ...over });

test('the first start creates a key, and the next start finds the same one', async () => {
  const { wal, dir } = freshWal();
  const first = await ring(wal);
  const key = first.current();
  assert.equal(key.alg, 'ES256');
  assert.deepEqual(first.jwks().keys.map((k) => k.kid), [key.kid]);
  const jwk = first.jwks().keys[0];
  assert.equal(jwk?.use, 'sig');
  assert.equal(jwk?.alg, 'ES256');
  assert.equal(jwk?.d, undefined, 'the private part is never published');
  // another environment on the same files, as after a restart
  const again = await ring(reopen(dir));
  assert.equal(again.current().kid, key.kid);
});

test('a rotated key stays published until its last token expires, then drops out', async () => {
  const { wal } = freshWal();
  const clock = movableClock();
  const keys = await ring(wal, clock);
  const old = keys.current();
  const issuer = createTokenIssuer({ keys, issuer: 'https://id.example', ttl: 3600, clock });
  const oldToken = issuer.issue({});
  const fresh = await keys.rotate();
  assert.notEqual(fresh.kid, old.kid);
  assert.equal(keys.current().kid, fresh.kid);
  assert.deepEqual(keys.jwks().keys.map((k) => k.kid), [fresh.kid, old.kid]);
  assert.equal(issuer.issue({}).kid, fresh.kid, 'new tokens are signed with the new key');

  const oldJwk = keys.jwks().keys.find((k) => k.kid === old.kid);
  assert.ok(oldJwk);
  await jwtVerify(await oldToken.token, await importJWK(oldJwk, 'ES256'), { issuer: 'https://id.example', currentDate: new Date(clock.nowMs()) });

  clock.advance(3599_000);
  assert.equal(keys.find(old.kid)?.kid, old.kid);
  clock.advance(2_000);
  assert.equal(keys.find(old.kid), undefined);
  assert.deepEqual(keys.jwks().keys.map((k) => k.kid), [fresh.kid]);
});

test('rotations survive a restart, and keys whose tokens have all expired are forgotten', async () => {
  const { wal, dir } = freshWal();
  const clock = movableClock();
  const keys = await ring(wal, clock);
  const a = keys.current().kid;
  const b = (await keys.rotate()).kid;
  clock.advance(10_000);
  const c = (await keys.rotate()).kid;
  const restarted = await ring(reopen(dir), clock);
  assert.equal(restarted.current().kid, c);
  assert.deepEqual(restarted.published().map((k) => k.kid), [c, b, a]);
  clock.advance(3600_000 - 5_000);
  const later = await ring(reopen(dir), clock);
  assert.deepEqual(later.published().map((k) => k.kid), [c, b]);
  const stored = reopen(dir).getMeta<{ keys: Array<{ kid: string }> }>('token_keys');
  assert.deepEqual(stored?.keys.map((k) => k.kid), [c, b]);
});

test('concurrent rotations each retire the key before them, none is lost', async () => {
  const { wal } = freshWal();
  const clock = movableClock();
  const keys = await ring(wal, clock);
  const first = keys.current().kid;
  const made = await Promise.all([keys.rotate(), keys.rotate(), keys.rotate()]);
  assert.equal(new Set(made.map((k) => k.kid)).size, 3);
  assert.equal(keys.current().kid, made[2]?.kid);
  assert.deepEqual(new Set(keys.published().map((k) => k.kid)), new Set([first, ...made.map((k) => k.kid)]));
  assert.equal(keys.published().filter((k) => k.retiredAt === undefined).length, 1);
});

test('a changed algorithm at start makes a new key; the old one stays published for its tokens', async () => {
  const { wal, dir } = freshWal();
  const clock = movableClock();
  const es = (await ring(wal, clock)).current();
  const ed = await ring(reopen(dir), clock, { alg: 'EdDSA' });
  assert.equal(ed.current().alg, 'EdDSA');
  assert.deepEqual(ed.jwks().keys.map((k) => [k.alg, k.kty]), [['EdDSA', 'OKP'], ['ES256', 'EC']]);
  assert.equal(ed.find(es.kid)?.alg, 'ES256');
});

test('a longer token lifetime keeps the current key published longer after it retires', async () => {
  const { wal, dir } = freshWal();
  const clock = movableClock();
  const short = await ring(wal, clock, { ttl: 60 });
  const kid = short.current().kid;
  const long = await ring(reopen(dir), clock, { ttl: 7200 });
  await long.rotate();
  clock.advance(3600_000);
  assert.equal(long.find(kid)?.kid, kid);
});

test('a token that lives longer than its key has signed for keeps the key published that long after it retires, durably', async () => {
  const { wal, dir } = freshWal();
  const clock = movableClock();
  const keys = await ring(wal, clock, { ttl: 60 });
  const kid = keys.current().kid;
  const issuer = createTokenIssuer({ keys, issuer: 'https://id.example', ttl: 60, clock });
  // Issued together: they share one write of the longer retention.
  const [a, b] = [issuer.issue({}, 7200), issuer.issue({}, 3600)];
  await Promise.all([a.token, b.token]);
  assert.equal(keys.current().maxTtl, 7200);
  await keys.rotate();
  clock.advance(3600_000);
  assert.equal(keys.find(kid)?.kid, kid, 'published past the deployment\'s 60 s');
  const reopened = await ring(reopen(dir), clock, { ttl: 60 });
  assert.equal(reopened.find(kid)?.kid, kid, 'the longer retention survives a restart');
  clock.advance(3601_000);
  assert.equal(reopened.find(kid), undefined, 'gone once the longest token it signed has expired');
});

test('the retention of a key that retired while its longer-lived token was being signed is raised all the same', async () => {
  const { wal } = freshWal();
  const clock = movableClock();
  const keys = await ring(wal, clock, { ttl: 60 });
  const old = keys.current();
  const rotated = keys.rotate();
  const retained = keys.retain(old, 600);
  await Promise.all([rotated, retained]);
  assert.notEqual(keys.current().kid, old.kid);
  clock.advance(300_000);
  assert.equal(keys.find(old.kid)?.maxTtl, 600);
  await keys.rotate();
  await keys.retain(old, 900);
  assert.equal(keys.find(old.kid)?.maxTtl, 900);
});
