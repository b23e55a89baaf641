// Secrets in the meta store sealed under SERVICE_SECRETS_KEY, on a real LMDB: what lands in the store is not
// the plain value, it reads back only with the same key and under the same name, and values stored in the clear
// are sealed at the next start with a key.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ConfigError } from '../../src/config.js';
import { sealedMeta } from '../../src/wal/sealed-meta.js';
import { createWal, type Wal } from '../../src/wal/log.js';
import { openStore, type Store } from '../../src/wal/store.js';
import { removeDir, tempDir } from '../support/server.js';

const stores: Store[] = [];
const dirs: string[] = [];
after(async () => {
  for (const store of stores) await store.close();
  for (const dir of dirs) removeDir(dir);
});

function freshWal(): Wal {
  const dir = tempDir('identity-sealed-');
  dirs.push(dir);
  const store = openStore(dir, 'local', false);
  stores.push(store);
  return createWal(store, () => {});
}

const KEY = randomBytes(32);
const SECRET = { keys: [{ kid: 'k1', pkcs8: randomBytes(138) }] };

test('a sealed value is stored without its plain bytes and reads back whole with the key', async () => {
  const wal = freshWal();
  await sealedMeta(wal, KEY).putMeta('token_keys', SECRET);
  const raw = wal.getMeta<Record<string, unknown>>('token_keys');
  assert.equal(raw?.['sealed'], 'aes-256-gcm');
  assert.equal(Buffer.from(raw?.['data'] as Buffer).indexOf(SECRET.keys[0]?.pkcs8 as Buffer), -1, 'the plain key is not in the stored value');
  assert.deepEqual(sealedMeta(wal, KEY).getMeta('token_keys'), SECRET);
});

test('without the key, with another key, or moved under another name, a sealed value does not open', async () => {
  const wal = freshWal();
  await sealedMeta(wal, KEY).putMeta('token_keys', SECRET);
  assert.throws(() => sealedMeta(wal, undefined).getMeta('token_keys'), (e: unknown) => e instanceof ConfigError && /token_keys are sealed: set SERVICE_SECRETS_KEY/.test(e.message));
  assert.throws(() => sealedMeta(wal, randomBytes(32)).getMeta('token_keys'), (e: unknown) => e instanceof ConfigError && /SERVICE_SECRETS_KEY does not open the stored token_keys/.test(e.message));
  await wal.putMeta('cursor_secret', wal.getMeta('token_keys'));
  assert.throws(() => sealedMeta(wal, KEY).getMeta('cursor_secret'), /does not open the stored cursor_secret/);
  await assert.rejects(sealedMeta(wal, undefined).sealStored(['token_keys']), /sealed: set SERVICE_SECRETS_KEY/);
});

test('given a key, values stored in the clear are sealed once, and absent ones are left absent', async () => {
  const wal = freshWal();
  await sealedMeta(wal, undefined).putMeta('token_keys', SECRET);
  assert.deepEqual(wal.getMeta('token_keys'), SECRET, 'without a key, stored as before');
  const sealed = sealedMeta(wal, KEY);
  assert.deepEqual(await sealed.sealStored(['token_keys', 'cursor_secret']), ['token_keys']);
  assert.equal(wal.getMeta<Record<string, unknown>>('token_keys')?.['sealed'], 'aes-256-gcm');
  assert.equal(wal.getMeta('cursor_secret'), undefined);
  assert.deepEqual(await sealed.sealStored(['token_keys', 'cursor_secret']), [], 'nothing left to seal');
  assert.deepEqual(sealed.getMeta('token_keys'), SECRET);
});

test('a key change: what the previous key sealed opens with it and is sealed again with the new key', async () => {
  const wal = freshWal();
  await sealedMeta(wal, KEY).putMeta('token_keys', SECRET);
  const next = randomBytes(32);
  assert.throws(() => sealedMeta(wal, next).getMeta('token_keys'), /does not open/, 'the new key alone does not open it');
  const changing = sealedMeta(wal, next, KEY);
  assert.deepEqual(changing.getMeta('token_keys'), SECRET);
  assert.deepEqual(await changing.sealStored(['token_keys']), ['token_keys']);
  assert.deepEqual(sealedMeta(wal, next).getMeta('token_keys'), SECRET, 'now the new key alone opens it');
  assert.throws(() => sealedMeta(wal, KEY).getMeta('token_keys'), /does not open/, 'and the previous one no longer does');
  assert.deepEqual(await changing.sealStored(['token_keys']), [], 'nothing left to seal again');
});
