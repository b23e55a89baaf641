// Password hashes imported from other systems (bcrypt, pbkdf2, argon2, made here by Python's implementations)
// sign in over HTTP and are replaced by the service's own scrypt form in the sign-in's entry; malformed,
// unsupported and too costly hashes are refused with 400 naming the format and the parameter.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectResult, unchanged } from '../support/expect.js';
import { foreignHashes, type ForeignFormat } from '../support/foreign-hashes.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { emailHandle, newOrg, recordEvents, signIn, type Org } from '../support/auth.js';

const PASSWORD = 'imported pässword 1';

let server: TestServer;
let events: ReturnType<typeof recordEvents>;
let org: Org;
let hashes: Record<ForeignFormat, string>;

before(async () => {
  server = await startTestServer();
  events = recordEvents(server);
  org = await newOrg(server, 'imported-hashes');
  hashes = foreignHashes(PASSWORD);
});
after(() => server.stop());

async function personWithHash(email: string, password_hash: string): Promise<{ id: string; credential: { id: string; params: { algorithm: string } } }> {
  const created = await org.admin.post('/persons', { handles: [emailHandle(email)] });
  const id = created.body.result.person_id as string;
  const credential = expectResult(await org.admin.post(`/persons/${id}/credentials`, { type: 'password', params: { password_hash } }), 201);
  return { id, credential };
}

const ALGORITHM: Record<ForeignFormat, string> = {
  'bcrypt-2a': 'bcrypt',
  'bcrypt-2b': 'bcrypt',
  'bcrypt-2y': 'bcrypt',
  'bcrypt-phc': 'bcrypt',
  'pbkdf2-sha256': 'pbkdf2-sha256',
  'pbkdf2-sha512': 'pbkdf2-sha512',
  argon2id: 'argon2id',
  argon2i: 'argon2i',
};

describe('imported password hashes', () => {
  for (const format of Object.keys(ALGORITHM) as ForeignFormat[]) {
    test(`${format}: imports, a wrong password fails and keeps it, the right one signs in and leaves a scrypt hash`, async () => {
      const email = `${format}@example.com`;
      const { id, credential } = await personWithHash(email, hashes[format]);
      assert.equal(credential.params.algorithm, ALGORITHM[format]);
      assert.equal((await signIn(org, email, 'imported password 2')).status, 401);
      assert.equal(expectResult<any[]>(await org.admin.get(`/persons/${id}/credentials`), 200)[0].params.algorithm, ALGORITHM[format]);
      const changed = events(org.id, 'PasswordChanged_v1').length;
      assert.equal((await signIn(org, email, PASSWORD)).status, 200);
      const [after] = expectResult<any[]>(await org.admin.get(`/persons/${id}/credentials`), 200);
      assert.deepEqual(after, { ...credential, params: { algorithm: 'scrypt' } }, 'the same credential, now in the service own form');
      assert.equal(events(org.id, 'PasswordChanged_v1').length, changed, 'the password did not change: no PasswordChanged');
      assert.equal((await signIn(org, email, PASSWORD)).status, 200, 'the scrypt hash signs in');
      assert.equal((await signIn(org, email, 'imported password 2')).status, 401);
    });
  }

  test('malformed and unsupported hashes: 400 naming the format; nothing changed', async () => {
    const created = await org.admin.post('/persons', { handles: [emailHandle('malformed@example.com')] });
    const id = created.body.result.person_id as string;
    const post = (password_hash: string) => org.admin.post(`/persons/${id}/credentials`, { type: 'password', params: { password_hash } });
    await unchanged(org.admin, async () => {
      expectError(await post('$2b$10$tooShort'), 400, 'params.password_hash', 'bcrypt');
      expectError(await post(`$2x$10$${'a'.repeat(53)}`), 400, '2x', 'not supported');
      expectError(await post('$bcrypt$v=98$r=10$abc$def'), 400, 'bcrypt', 'salt');
      expectError(await post('$pbkdf2-sha1$i=100000$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA'), 400, 'pbkdf2-sha1', 'not supported');
      expectError(await post('$pbkdf2-sha256$i=100000$not base64!$aGFzaGhhc2hoYXNoaGFzaA'), 400, 'pbkdf2');
      expectError(await post(hashes['pbkdf2-sha256'].replace(',l=32', ',l=64')), 400, 'pbkdf2-sha256', 'l = 64');
      expectError(await post(hashes.argon2id.replace('$argon2id$', '$argon2d$')), 400, 'argon2d', 'not supported');
      expectError(await post(hashes.argon2id.replace('v=19', 'v=16')), 400, 'argon2id', 'v=16');
      expectError(await post('$1$saltsalt$abcdefghijklmnopqrstuv'), 400, '1: this hash format is not supported');
      expectError(await post('correct horse battery staple'), 400, 'not a recognised hash format', 'argon2id');
    }, server);
  });

  test('a cost above the ceiling of each format: 400 naming the parameter, never computed', async () => {
    const created = await org.admin.post('/persons', { handles: [emailHandle('costly@example.com')] });
    const id = created.body.result.person_id as string;
    const post = (password_hash: string) => org.admin.post(`/persons/${id}/credentials`, { type: 'password', params: { password_hash } });
    const key = 'A'.repeat(43);
    const salt = 'c2FsdHNhbHRzYWx0c2FsdA';
    await unchanged(org.admin, async () => {
      // About 4 GiB and 2,000 times the service's own work per check.
      expectError(await post(`scrypt$20$32$16$${salt}$${key}`), 400, 'scrypt', 'logN = 20', 'ceiling 16');
      expectError(await post(`scrypt$15$32$1$${salt}$${key}`), 400, 'scrypt', 'r = 32', 'ceiling 8');
      expectError(await post(`scrypt$15$8$16$${salt}$${key}`), 400, 'scrypt', 'p = 16', 'ceiling 2');
      expectError(await post(hashes['bcrypt-2b'].replace('$10$', '$13$')), 400, 'bcrypt', 'cost = 13', 'ceiling 12');
      expectError(await post(hashes['bcrypt-phc'].replace('r=10', 'r=31')), 400, 'bcrypt', 'cost = 31');
      expectError(await post(hashes['pbkdf2-sha256'].replace('i=100000', 'i=5000000')), 400, 'pbkdf2-sha256', 'iterations = 5000000', 'ceiling 1000000');
      expectError(await post(hashes['pbkdf2-sha512'].replace('$25000$', '$600000$')), 400, 'pbkdf2-sha512', 'iterations = 600000', 'ceiling 500000');
      expectError(await post(hashes.argon2id.replace(/m=\d+/, 'm=4194304')), 400, 'argon2id', 'm = 4194304', 'ceiling 131072');
      expectError(await post(hashes.argon2id.replace(/t=\d+/, 't=64')), 400, 'argon2id', 't = 64', 'ceiling 4');
      expectError(await post(hashes.argon2i.replace(/m=\d+,t=\d+/, 'm=131072,t=4')), 400, 'argon2i', 'm × t = 524288', 'ceiling 262144');
      expectError(await post(hashes.argon2id.replace(/p=\d+/, 'p=64')), 400, 'argon2id', 'p = 64', 'ceiling 8');
    }, server);
  });
});
