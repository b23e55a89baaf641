import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPasswordHasher, needsRehash } from '../../src/auth/password-hash.js';

test('a hash verifies its password only, and is salted', async () => {
  const hasher = createPasswordHasher();
  const [a, b] = await Promise.all([hasher.hash('correct horse'), hasher.hash('correct horse')]);
  assert.match(a, /^scrypt\$15\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
  assert.notEqual(a, b);
  assert.equal(await hasher.verify('correct horse', a), true);
  assert.equal(await hasher.verify('correct horsf', a), false);
});

test('nothing stored, or something malformed, never verifies', async () => {
  const hasher = createPasswordHasher();
  const stored = await hasher.hash('correct horse');
  assert.equal(await hasher.verify('correct horse', undefined), false);
  assert.equal(await hasher.verify('correct horse', 'plain text'), false);
  assert.equal(await hasher.verify('correct horse', stored.replace('$15$', '$30$')), false, 'an absurd cost is refused, not computed');
  assert.equal(await hasher.verify('correct horse', stored.slice(0, -4)), false);
});

test('canonically equivalent Unicode spellings are one password', async () => {
  const hasher = createPasswordHasher();
  const stored = await hasher.hash('caf\u00e9 au lait');
  assert.equal(await hasher.verify('cafe\u0301 au lait', stored), true);
});

test('a stored hash above its cost ceiling is never computed: even the right password fails, at the cost of a dummy check', async () => {
  const { scryptSync, randomBytes } = await import('node:crypto');
  const salt = randomBytes(16);
  const key = scryptSync('correct horse', salt, 32, { N: 2 ** 17, r: 8, p: 1, maxmem: 2 ** 28 });
  const stored = `scrypt$17$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
  assert.equal(await createPasswordHasher().verify('correct horse', stored), false);
});

test('only the service own current form needs no re-hash', async () => {
  const stored = await createPasswordHasher().hash('correct horse');
  assert.equal(needsRehash(stored), false);
  assert.equal(needsRehash(stored.replace('scrypt$15$', 'scrypt$14$')), true);
  assert.equal(needsRehash('$2b$10$abcdefghijklmnopqrstuu5Ipr7cdJ4HJqMyZ1UeUqB0fKdCq3hhK'), true);
});
