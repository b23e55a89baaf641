// A person's credentials: listed without a hash, imported as a hash, removed one or all, and rotated to a fresh
// password answered once (the new one signs in, the old one does not).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPasswordHasher } from '../../src/auth/password-hash.js';
import { expectError, expectNoContent, expectResult, unchanged } from '../support/expect.js';
import { assertOriginalRequest, assertOriginalShape, shapeProblems, original } from '../support/original.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { emailHandle, newOrg, personWithPassword, recordEvents, signIn, type Org } from '../support/auth.js';

const PASSWORD = 'first password 123';
const IMPORTED_PASSWORD = 'imported password 1';

let server: TestServer;
let events: ReturnType<typeof recordEvents>;
let org: Org;

before(async () => {
  server = await startTestServer();
  events = recordEvents(server);
  org = await newOrg(server, 'credentials');
});
after(() => server.stop());

/**
 * The original's exported password credential has `params.password_hash`; this service never answers a hash, so
 * `params` holds the algorithm instead (API.md). Everything else must match the original's schema: checked with
 * the hash's place filled by a stand-in, the real params checked on their own.
 */
function assertCredentialShape(operation: string, status: number, body: { result: unknown }): void {
  const credentials = (Array.isArray(body.result) ? body.result : [body.result]) as Array<Record<string, any>>;
  for (const c of credentials) {
    assert.deepEqual(c['params'], { algorithm: 'scrypt' }, 'no hash, the algorithm only');
    assert.ok(!JSON.stringify(c).includes('scrypt$'), 'no hash anywhere');
  }
  const standIn = (c: Record<string, any>) => ({ ...c, params: { password_hash: '' } });
  const filled = { ...body, result: Array.isArray(body.result) ? credentials.map(standIn) : standIn(credentials[0]!) };
  assertOriginalShape(operation, status, filled);
  // The stand-in is what makes it conform: without it the shape would not match, so the check above is not vacuous.
  if (credentials.length > 0) assert.notDeepEqual(shapeProblems(original.operations[operation]!.responses[String(status)], body), []);
}

/** A hash as another deployment of this service would export it. */
const hashOf = (password: string): Promise<string> => createPasswordHasher().hash(password);

describe('credentials', () => {
  test('GET lists the password credential without its hash; none before a password is set', async () => {
    const created = await org.admin.post('/persons', { handles: [emailHandle('ada@example.com')] });
    const id = created.body.result.person_id as string;
    const empty = await org.admin.get(`/persons/${id}/credentials`);
    assert.deepEqual(expectResult(empty, 200), []);
    assertOriginalShape('GET /persons/{person_id}/credentials', 200, empty.body);
    assert.equal((await org.admin.put(`/persons/${id}/credentials/password`, { password: PASSWORD })).status, 204);
    const listed = await org.admin.get(`/persons/${id}/credentials`);
    const [credential] = expectResult<any[]>(listed, 200);
    assert.equal(credential.type, 'password');
    assert.equal(typeof credential.id, 'string');
    assertCredentialShape('GET /persons/{person_id}/credentials', 200, listed.body);
  });

  test('password-rotate answers a fresh high-entropy password once; it signs in, the old one does not; PasswordChanged (AdminAPI)', async () => {
    const id = await personWithPassword(org, 'rot@example.com', PASSWORD);
    const before = expectResult<any[]>(await org.admin.get(`/persons/${id}/credentials`), 200)[0].id;
    const changed = events(org.id, 'PasswordChanged_v1').length;
    const r = await org.admin.post(`/persons/${id}/credentials/password-rotate`);
    const { new_password } = expectResult(r, 200);
    assertOriginalShape('POST /persons/{person_id}/credentials/password-rotate', 200, r.body);
    assert.equal(r.headers.get('cache-control'), 'no-store');
    assert.match(new_password, /^[\w-]{32}$/, '192 random bits');
    const again = expectResult(await org.admin.post(`/persons/${id}/credentials/password-rotate`), 200).new_password;
    assert.notEqual(again, new_password);
    assert.equal((await signIn(org, 'rot@example.com', again)).status, 200);
    assert.equal((await signIn(org, 'rot@example.com', new_password)).status, 401);
    assert.equal((await signIn(org, 'rot@example.com', PASSWORD)).status, 401);
    const emitted = events(org.id, 'PasswordChanged_v1').slice(changed);
    assert.equal(emitted.length, 2);
    for (const e of emitted) assert.equal(e['initiated_by'], 'AdminAPI');
    assert.ok(!JSON.stringify(emitted).includes(again), 'the password is in no event');
    const after = expectResult<any[]>(await org.admin.get(`/persons/${id}/credentials`), 200)[0].id;
    assert.notEqual(after, before, 'a new password is a new credential');
  });

  test('password-rotate gives a person without a password one; refusals: unknown person 404, no API key 401', async () => {
    const created = await org.admin.post('/persons', { handles: [emailHandle('nopw@example.com')] });
    const id = created.body.result.person_id as string;
    const pw = expectResult(await org.admin.post(`/persons/${id}/credentials/password-rotate`), 200).new_password;
    assert.equal((await signIn(org, 'nopw@example.com', pw)).status, 200);
    await unchanged(org.admin, async () => {
      expectError(await org.admin.post('/persons/no-such-person/credentials/password-rotate'), 404, 'no-such-person');
      assert.equal((await org.user.post(`/persons/${id}/credentials/password-rotate`)).status, 401);
    }, server);
  });

  test('POST imports a password as its scrypt hash: 201 without the hash; it signs in; a second is a 409', async () => {
    const created = await org.admin.post('/persons', { handles: [emailHandle('imp@example.com')] });
    const id = created.body.result.person_id as string;
    const body = { type: 'password', params: { password_hash: await hashOf(IMPORTED_PASSWORD) } };
    assertOriginalRequest('POST /persons/{person_id}/credentials', body);
    const r = await org.admin.post(`/persons/${id}/credentials`, body);
    const credential = expectResult(r, 201);
    assertCredentialShape('POST /persons/{person_id}/credentials', 201, r.body);
    assert.equal(events(org.id, 'PasswordChanged_v1').at(-1)?.['initiated_by'], 'AdminAPI');
    assert.deepEqual(expectResult<any[]>(await org.admin.get(`/persons/${id}/credentials`), 200), [credential]);
    assert.equal((await signIn(org, 'imp@example.com', IMPORTED_PASSWORD)).status, 200);
    await unchanged(org.admin, async () => expectError(await org.admin.post(`/persons/${id}/credentials`, body), 409, 'password credential already'), server);
  });

  test('POST refusals: other types, a hash in another form, bad bodies, unknown person; nothing changed', async () => {
    const created = await org.admin.post('/persons', { handles: [emailHandle('bad@example.com')] });
    const id = created.body.result.person_id as string;
    const post = (body: unknown, person = id) => org.admin.post(`/persons/${person}/credentials`, body);
    const good = { type: 'password', params: { password_hash: await hashOf(IMPORTED_PASSWORD) } };
    await unchanged(org.admin, async () => {
      expectError(await post({ type: 'totp', params: { key_uri: 'otpauth://x', recovery_codes_total: 0, unused_recovery_codes: [] } }), 400, 'only password');
      expectError(await post({ type: 'password', params: { password_hash: '$2b$10$abcdefghijklmnopqrstuu5Ipr7' } }), 400, 'params.password_hash', 'bcrypt');
      expectError(await post({ type: 'password', params: {} }), 400, 'params.password_hash');
      expectError(await post({ type: 'password' }), 400, 'params');
      expectError(await post({ ...good, extra: 1 }), 400, 'extra');
      expectError(await post(good, 'no-such-person'), 404, 'no-such-person');
      assert.equal((await org.user.post(`/persons/${id}/credentials`, good)).status, 401);
    }, server);
    assert.deepEqual(expectResult(await org.admin.get(`/persons/${id}/credentials`), 200), []);
  });

  test('DELETE one by ID, or all: 204; the password no longer signs in; an unknown credential or person 404', async () => {
    const one = await personWithPassword(org, 'del1@example.com', PASSWORD);
    const all = await personWithPassword(org, 'del2@example.com', PASSWORD);
    const [credential] = expectResult<any[]>(await org.admin.get(`/persons/${one}/credentials`), 200);
    await unchanged(org.admin, async () => {
      expectError(await org.admin.delete(`/persons/${one}/credentials/not-a-credential`), 404, 'not-a-credential');
      expectError(await org.admin.delete(`/persons/no-such-person/credentials/${credential.id}`), 404, 'no-such-person');
      expectError(await org.admin.delete('/persons/no-such-person/credentials'), 404, 'no-such-person');
      assert.equal((await org.user.delete(`/persons/${one}/credentials`)).status, 401);
    }, server);
    expectNoContent(await org.admin.delete(`/persons/${one}/credentials/${credential.id}`));
    assert.deepEqual(expectResult(await org.admin.get(`/persons/${one}/credentials`), 200), []);
    assert.equal((await signIn(org, 'del1@example.com', PASSWORD)).status, 401);
    expectError(await org.admin.delete(`/persons/${one}/credentials/${credential.id}`), 404, credential.id);

    expectNoContent(await org.admin.delete(`/persons/${all}/credentials`));
    assert.deepEqual(expectResult(await org.admin.get(`/persons/${all}/credentials`), 200), []);
    assert.equal((await signIn(org, 'del2@example.com', PASSWORD)).status, 401);
    expectNoContent(await org.admin.delete(`/persons/${all}/credentials`));
    // Without a password, the person's last handle may go (it could not while the password needed it).
    assert.equal((await org.admin.delete(`/persons/${all}/handles/${encodeURIComponent('email_address:del2@example.com')}`)).status, 204);
  });
});
