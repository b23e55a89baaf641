import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ServiceError } from '../../src/errors.js';
import { createSecretSealer } from '../../src/sso/secrets.js';

const KEY = randomBytes(32);
const NEXT = randomBytes(32);

test('without a key secrets are kept plain', () => {
  const sealer = createSecretSealer(undefined);
  const stored = sealer.seal('org-1', 'client', 'client_secret', 's3cret');
  assert.deepEqual(stored, { plain: 's3cret' });
  assert.equal(sealer.open('org-1', 'client', 'client_secret', stored), 's3cret');
});

test('with a key the stored form holds no trace of the secret, differs each time, and opens', () => {
  const sealer = createSecretSealer(KEY);
  const a = sealer.seal('org-1', 'client', 'client_secret', 's3cret-value');
  const b = sealer.seal('org-1', 'client', 'client_secret', 's3cret-value');
  assert.ok('sealed' in a);
  assert.notDeepEqual(a, b);
  for (const form of [JSON.stringify(a), Buffer.from(a.box, 'base64url').toString('latin1')]) assert.equal(form.includes('s3cret'), false);
  assert.equal(sealer.open('org-1', 'client', 'client_secret', a), 's3cret-value');
});

test('a sealed secret is bound to its organization, client_id and field', () => {
  const sealer = createSecretSealer(KEY);
  const stored = sealer.seal('org-1', 'client', 'client_secret', 's3cret');
  for (const [org, client, field] of [['org-2', 'client', 'client_secret'], ['org-1', 'other', 'client_secret'], ['org-1', 'client', 'private_key']] as const) {
    assert.throws(() => sealer.open(org, client, field, stored), (e: unknown) => e instanceof ServiceError && e.code === 'ERR_INTERNAL' && !e.message.includes('s3cret'));
  }
});

test('after a key change, what the previous key sealed opens while it is given as SERVICE_SECRETS_KEY_PREVIOUS', () => {
  const stored = createSecretSealer(KEY).seal('org-1', 'client', 'private_key', 'pem');
  assert.equal(createSecretSealer(NEXT, KEY).open('org-1', 'client', 'private_key', stored), 'pem');
  assert.throws(() => createSecretSealer(NEXT).open('org-1', 'client', 'private_key', stored), ServiceError);
  // New values are sealed with the new key alone.
  const fresh = createSecretSealer(NEXT, KEY).seal('org-1', 'client', 'private_key', 'pem2');
  assert.equal(createSecretSealer(NEXT).open('org-1', 'client', 'private_key', fresh), 'pem2');
  assert.throws(() => createSecretSealer(KEY).open('org-1', 'client', 'private_key', fresh), ServiceError);
});
