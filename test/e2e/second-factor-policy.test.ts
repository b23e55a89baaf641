// The organization's sign-in policy: which methods may be a first factor and which a second, and who must use
// two (everyone, or the members of named groups). A person who must use two gets no token with one; once they
// hold a second factor, the first factor answers a challenge naming it, and the token lists both factors.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { expectError, expectResult } from '../support/expect.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { movableClock } from '../support/clock.js';
import { newOrg, personWithPassword, recordEvents, signIn, verifyIdentityToken, type Org } from '../support/auth.js';
import { Browser } from '../support/oauth-browser.js';
import * as oidc from 'openid-client';

const clock = movableClock();
const dir = tempDir();
let server: TestServer;
let events: ReturnType<typeof recordEvents>;
const PASSWORD = 'correct horse battery';

const oathtool = (secret: string, epochMs: number) =>
  execFileSync('oathtool', ['--totp', '--base32', secret, '--now', `@${Math.floor(epochMs / 1000)}`], { encoding: 'utf8' }).trim();

before(async () => {
  server = await startTestServer({}, { clock }, dir);
  events = recordEvents(server);
});
after(async () => {
  await server.stop();
  removeDir(dir);
});

async function configure(org: Org, patch: Record<string, unknown>): Promise<void> {
  const r = await org.admin.patch('/organizations/config', patch);
  assert.equal(r.status, 200, r.text);
}

async function inGroup(org: Org, person: string, group: string): Promise<void> {
  await org.admin.post('/groups', { name: group });
  const r = await org.admin.post(`/groups/${group}/persons`, { persons: [person] });
  assert.ok(r.status < 300, r.text);
}

/** The person enrolls TOTP with a token the organization minted for them; returns the secret. */
async function enrollWithMintedToken(org: Org, person: string): Promise<string> {
  const token = expectResult<string>(await org.admin.post(`/persons/${person}/mint-token`, {}), 201);
  const headers = { authorization: `Bearer ${token}` };
  const enrollment = expectResult<{ credential_id: string; key_uri: string }>(await org.user.post('/register/totp', {}, headers), 201);
  const secret = new URL(enrollment.key_uri).searchParams.get('secret') as string;
  clock.advance(35_000 - (clock.nowMs() % 30_000));
  expectResult(await org.user.post('/register/totp/confirm', { credential_id: enrollment.credential_id, code: oathtool(secret, clock.nowMs()) }, headers), 200);
  return secret;
}

describe('second-factor policy', () => {
  test('a group that must use two factors gets no token with a password alone; others do; with TOTP enrolled, both factors give one', async () => {
    const org = await newOrg(server, 'mfa-groups');
    const admin = await personWithPassword(org, 'root@example.com', PASSWORD);
    await personWithPassword(org, 'user@example.com', PASSWORD);
    await inGroup(org, admin, 'admins');
    await configure(org, { second_factor_required_groups: ['admins'] });

    const refused = await signIn(org, 'root@example.com', PASSWORD);
    expectError(refused, 403, 'second factor');
    const failed = events(org.id, 'AuthenticationFailed_v1').at(-1) as Record<string, any>;
    assert.equal(failed['failure_reason'], 'second_factor_required');
    assert.equal(failed['person_id'], admin);
    expectResult<{ token: string }>(await signIn(org, 'user@example.com', PASSWORD), 200);

    const secret = await enrollWithMintedToken(org, admin);
    clock.advance(30_000);
    const { second_factor } = expectResult<{ second_factor: { challenge: string; methods: string[] } }>(await signIn(org, 'root@example.com', PASSWORD), 200);
    assert.deepEqual(second_factor.methods, ['totp']);
    const { token } = expectResult<{ token: string }>(await org.user.post('/authenticate/totp', { challenge: second_factor.challenge, code: oathtool(secret, clock.nowMs()) }), 200);
    assert.deepEqual((await verifyIdentityToken(server, token))['authenticated_methods'], ['password', 'totp']);
  });

  test('second_factor_required: everyone; a direct-id alone is refused too', async () => {
    const org = await newOrg(server, 'mfa-everyone');
    const person = await personWithPassword(org, 'amy@example.com', PASSWORD);
    await configure(org, { second_factor_required: true });
    expectError(await signIn(org, 'amy@example.com', PASSWORD), 403, 'second factor');
    const value = expectResult<string>(await org.admin.post(`/persons/${person}/direct-id`, { duration_secs: 600 }), 201);
    expectError(await org.user.post('/authenticate/direct-id', { direct_id: value }), 403, 'second factor');
    await configure(org, { second_factor_required: false });
    expectResult<{ token: string }>(await signIn(org, 'amy@example.com', PASSWORD), 200);
  });

  test('first_factor_methods and second_factor_methods: a method out of its place is 403 naming it; a method that cannot stand there is a 400', async () => {
    const org = await newOrg(server, 'mfa-places');
    const person = await personWithPassword(org, 'bea@example.com', PASSWORD);
    await configure(org, { first_factor_methods: ['password'] });
    const value = expectResult<string>(await org.admin.post(`/persons/${person}/direct-id`, { duration_secs: 600 }), 201);
    expectError(await org.user.post('/authenticate/direct-id', { direct_id: value }), 403, 'first factor');
    expectError(await org.admin.patch('/organizations/config', { first_factor_methods: ['totp'] }), 400, 'first_factor_methods[0]');
    expectError(await org.admin.patch('/organizations/config', { second_factor_methods: ['password'] }), 400, 'second_factor_methods[0]');
    // TOTP not allowed as a factor at all: a person who holds it signs in with the password alone.
    await enrollWithMintedToken(org, person);
    await configure(org, { allowed_factor_methods: ['password', 'direct_id', 'oidc'] });
    expectResult<{ token: string }>(await signIn(org, 'bea@example.com', PASSWORD), 200);
  });

  test('the hosted OAuth page asks a person who holds TOTP for a code, even in a group that must use two factors; one who holds none signs in with the password', async () => {
    const org = await newOrg(server, 'mfa-hosted');
    const person = await personWithPassword(org, 'cid@example.com', PASSWORD);
    await personWithPassword(org, 'dee@example.com', PASSWORD);
    const secret = await enrollWithMintedToken(org, person);
    await inGroup(org, person, 'admins');
    await configure(org, { second_factor_required_groups: ['admins'] });
    clock.advance(30_000);
    const REDIRECT = 'https://app.example/cb';
    const client = expectResult<{ client_id: string }>(await org.admin.post('/oauth2/clients', { client_name: 'Web app', scopes: ['openid'], grant_types: ['authorization_code'], redirect_uris: [REDIRECT], public: true }), 201);
    const config = await oidc.discovery(new URL(server.service.issuer), client.client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const url = async () =>
      oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', state: oidc.randomState(), code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256' });
    const holder = new Browser();
    const asked = await holder.signIn(await holder.get(await url()), server.base, 'cid@example.com', PASSWORD);
    assert.equal(asked.status, 200, asked.html);
    assert.equal(asked.location, undefined);
    assert.match(asked.html, /name="code"/);
    const signedIn = await holder.submit(asked, server.base, { code: oathtool(secret, clock.nowMs()) });
    assert.equal(signedIn.status, 302, signedIn.html);
    assert.deepEqual((events(org.id, 'AuthenticationSucceeded_v1').at(-1) as Record<string, any>)['authenticated_methods'], ['password', 'totp']);
    const other = new Browser();
    const done = await other.signIn(await other.get(await url()), server.base, 'dee@example.com', PASSWORD);
    assert.equal(done.status, 302, done.html);
    await Promise.all([holder.close(), other.close()]);
  });
});
