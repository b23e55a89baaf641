// POST /token/revoke: a revoked identity token is invalid at /token/validate, on the replicas, after a restart;
// entries go once their tokens expired.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { expectError, expectNoContent, unchanged } from '../support/expect.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { ALL_REGIONS, OPERATOR_KEY, waitFor } from '../support/regions.js';
import { movableClock } from '../support/clock.js';
import { newOrg, sameOrgOn, type Org } from '../support/auth.js';

// a fixed issuer: a restart listens on another port, and tokens name the issuer
const TWO_REGIONS = { SERVICE_REGIONS: 'europe-belgium,us-iowa', SERVICE_ISSUER: 'https://id.example' };
const clock = movableClock();
const dir = tempDir();
let server: TestServer;
let org: Org;
let other: Org;
let person: string;

const start = () => startTestServer(TWO_REGIONS, { operatorKey: OPERATOR_KEY, clock }, dir);

before(async () => {
  server = await start();
  org = await newOrg(server, 'revoking');
  other = await newOrg(server, 'other');
  const r = await org.admin.post('/persons', { handles: [{ type: 'email_address', value: 'ada@example.com' }] });
  assert.equal(r.status, 201, r.text);
  person = r.body.result.person_id as string;
});
after(async () => {
  await server.stop();
  removeDir(dir);
});

async function mint(o: Org, personId: string): Promise<string> {
  const r = await o.admin.post(`/persons/${personId}/mint-token`);
  assert.equal(r.status, 201, r.text);
  return r.body.result as string;
}

async function validate(token: string) {
  const r = await server.client.as('', '').post('/token/validate', { token });
  assert.equal(r.status, 200, r.text);
  return r.body.result as { valid: boolean; invalidity_reason?: string; revoked?: boolean };
}

const REVOKED = { valid: false, invalidity_reason: 'invalid_token_content', revoked: true };
const jti = (token: string) => decodeJwt(token).jti as string;
const localRevoked = (orgId: string) => server.service.registry.get(orgId)?.state.revoked_tokens;
const replicaRevoked = (orgId: string) => server.service.regions.replica('us-iowa')?.state(orgId)?.revoked_tokens;

let revoked: string;
let kept: string;

describe('POST /token/revoke', () => {
  test('204; the token is invalid from then on, with the original reason and revoked: true; others of the person stay valid', async () => {
    revoked = await mint(org, person);
    kept = await mint(org, person);
    assert.equal((await validate(revoked)).valid, true);
    expectNoContent(await org.admin.post('/token/revoke', { token: revoked }, ALL_REGIONS));
    assert.deepEqual(await validate(revoked), REVOKED);
    assert.equal((await validate(kept)).valid, true);
  });

  test('the revocation is replicated: the second region holds it once the all_regions write answered', async () => {
    assert.equal(localRevoked(org.id)?.has(jti(revoked)), true);
    assert.equal(replicaRevoked(org.id)?.has(jti(revoked)), true);
    assert.equal(replicaRevoked(org.id)?.get(jti(revoked)), decodeJwt(revoked).exp);
  });

  test('revoking again is a 204 that changes nothing', async () => {
    await unchanged(org.admin, async () => expectNoContent(await org.admin.post('/token/revoke', { token: revoked })), server);
  });

  test("a token of another organization, a forged or malformed one, a bad body are 400s; no key a 401; nothing changes", async () => {
    const otherPerson = await other.admin.post('/persons', { handles: [{ type: 'username', value: 'eve' }] });
    const foreign = await mint(other, otherPerson.body.result.person_id as string);
    const [h, p] = kept.split('.');
    await unchanged(org.admin, async () => {
      expectError(await org.admin.post('/token/revoke', { token: foreign }), 400, 'another organization');
      expectError(await org.admin.post('/token/revoke', { token: `${h}.${p}.${'A'.repeat(86)}` }), 400, 'token');
      expectError(await org.admin.post('/token/revoke', { token: 'not-a-jwt' }), 400, 'token');
      expectError(await org.admin.post('/token/revoke', {}), 400, 'token');
      expectError(await org.admin.post('/token/revoke', { token: kept, extra: 1 }), 400);
      assert.equal((await org.user.post('/token/revoke', { token: kept })).status, 401);
    }, server);
    assert.equal((await validate(foreign)).valid, true);
    assert.equal((await validate(kept)).valid, true);
  });

  test('after a restart the token is still revoked, locally and on the replica', async () => {
    await server.stop();
    server = await start();
    org = sameOrgOn(server, org);
    assert.deepEqual(await validate(revoked), REVOKED);
    assert.equal((await validate(kept)).valid, true);
    await waitFor(() => replicaRevoked(org.id)?.has(jti(revoked)) === true, 10_000, 'the replica to hold the revocation');
  });

  test('once a revoked token expired its entry goes with the next revocation; revoking an expired token adds none', async () => {
    clock.advance(2 * 86_400_000);
    const fresh = await mint(org, person);
    expectNoContent(await org.admin.post('/token/revoke', { token: fresh }, ALL_REGIONS));
    assert.deepEqual([...(localRevoked(org.id)?.keys() ?? [])], [jti(fresh)]);
    assert.deepEqual([...(replicaRevoked(org.id)?.keys() ?? [])], [jti(fresh)]);
    assert.equal((await validate(revoked)).invalidity_reason, 'expired');
    assert.deepEqual(await validate(fresh), REVOKED);
  });
});
