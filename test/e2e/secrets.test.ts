// SERVICE_SECRETS_KEY end to end, on the service as users start it: with a key the signing keys never reach
// the data files in the clear; a restart with the key serves the same keys; a start without it, or with
// another key, refuses with the reason; the key can be changed; and a data dir from before the key is sealed
// at its next start.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { email, removeDir, tempDir } from '../support/server.js';
import { spawnNode, spawnService, type ServiceProcess } from '../support/process.js';

const dirs: string[] = [];
const running = new Set<ServiceProcess>();
after(async () => {
  for (const s of running) await s.stop();
  for (const d of dirs) removeDir(d);
});

const KEY = randomBytes(32).toString('hex');
/** How every P-256 private key the service stores begins (PKCS#8 DER): ES256 token keys and webhook keys. */
const EC_PKCS8_PREFIX = Buffer.from('308187020100301306072a8648ce3d020106082a8648ce3d030107', 'hex');

function dataDir(): string {
  const dir = tempDir('identity-secrets-');
  dirs.push(dir);
  return dir;
}

const holdsPlainKeys = (dir: string) => readdirSync(dir).some((f) => readFileSync(join(dir, f)).includes(EC_PKCS8_PREFIX));

async function start(dir: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
  // A fixed issuer: with SERVICE_PORT=0 the default one would change with the port at every start.
  const s = await spawnService({ SERVICE_TOKEN_ALG: 'ES256', SERVICE_ISSUER: 'https://id.example', ...env }, dir);
  running.add(s);
  return s;
}

async function stop(s: ServiceProcess): Promise<void> {
  await s.stop();
  running.delete(s);
}

/** A person and a token for them, with the key set's kids. */
async function mint(s: ServiceProcess): Promise<{ token: string; kids: string[] }> {
  const person = await s.client.post('/persons', email(`p${randomBytes(4).toString('hex')}@example.com`));
  assert.equal(person.status, 201, person.text);
  const minted = await s.client.post(`/persons/${person.body.result.person_id}/mint-token`, {});
  assert.equal(minted.status, 201, minted.text);
  return { token: minted.body.result, kids: await kids(s) };
}

const kids = async (s: ServiceProcess) => ((await s.client.get('/.well-known/jwks.json')).body.keys as Array<{ kid: string }>).map((k) => k.kid);

async function valid(s: ServiceProcess, token: string): Promise<boolean> {
  const r = await s.client.as('', '').post('/token/validate', { token });
  return r.body.result.valid;
}

/** Starts main.ts on dir and expects it to refuse: exit status 2 with `reason`. */
async function refuses(dir: string, env: Record<string, string>, reason: RegExp): Promise<void> {
  const child = await spawnNode({ script: 'src/main.ts', env: { SERVICE_PORT: '0', SERVICE_DATA_DIR: dir, ...env }, ready: /cannot start: /, timeoutMs: 30_000 });
  assert.deepEqual(await child.exited, { code: 2, signal: null });
  assert.match(child.output(), reason);
  assert.doesNotMatch(child.output(), /listening on/);
}

test('with SERVICE_SECRETS_KEY the signing keys are sealed on disk, and only that key starts the service again', async () => {
  const dir = dataDir();
  let s = await start(dir, { SERVICE_SECRETS_KEY: KEY });
  const before = await mint(s);
  await stop(s);
  assert.equal(holdsPlainKeys(dir), false, 'no private key in the clear in the data files');

  s = await start(dir, { SERVICE_SECRETS_KEY: KEY });
  assert.deepEqual(await kids(s), before.kids, 'the same keys are served');
  assert.equal(await valid(s, before.token), true);
  assert.equal(await valid(s, (await mint(s)).token), true);
  await stop(s);

  await refuses(dir, {}, /the stored token_keys are sealed: set SERVICE_SECRETS_KEY/);
  await refuses(dir, { SERVICE_SECRETS_KEY: randomBytes(32).toString('hex') }, /SERVICE_SECRETS_KEY does not open the stored token_keys/);
  await refuses(dir, { SERVICE_SECRETS_KEY: 'too-short' }, /SERVICE_SECRETS_KEY must be 32 bytes/);

  // A key change: one start with both keys seals everything again with the new one.
  const next = randomBytes(32).toString('base64url');
  s = await start(dir, { SERVICE_SECRETS_KEY: next, SERVICE_SECRETS_KEY_PREVIOUS: KEY });
  assert.match(s.process.output(), /sealed the stored token_keys, webhook_signing_keys, cursor_secret with SERVICE_SECRETS_KEY/);
  assert.deepEqual(await kids(s), before.kids);
  await stop(s);
  s = await start(dir, { SERVICE_SECRETS_KEY: next });
  assert.equal(await valid(s, before.token), true);
  await stop(s);
  await refuses(dir, { SERVICE_SECRETS_KEY: KEY }, /does not open/);
});

test('a data dir from before the key is sealed at the next start with one, and its tokens still validate', async () => {
  const dir = dataDir();
  let s = await start(dir);
  const before = await mint(s);
  await stop(s);
  assert.equal(holdsPlainKeys(dir), true, 'without a key the keys are stored in the clear (so the check above can see them)');

  s = await start(dir, { SERVICE_SECRETS_KEY: KEY });
  assert.match(s.process.output(), /sealed the stored token_keys, webhook_signing_keys, cursor_secret with SERVICE_SECRETS_KEY/);
  assert.deepEqual(await kids(s), before.kids);
  assert.equal(await valid(s, before.token), true);
  await stop(s);
  await refuses(dir, {}, /sealed: set SERVICE_SECRETS_KEY/);
});
