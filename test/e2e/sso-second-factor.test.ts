// SSO sign-in through the admission step every method shares: the organization's second-factor policy holds
// for it as for a password. Against the loopback OpenID provider the SSO tests use, with the provider's groups
// claim naming the group that must use two factors, and TOTP codes made by Debian's oathtool for the service's
// clock (which the test moves; the provider and openid-client keep the wall clock).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { expectError, expectResult } from '../support/expect.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { movableClock } from '../support/clock.js';
import { recordEvents, verifyIdentityToken, type Org } from '../support/auth.js';
import { ssoSetup, type SsoSetup } from '../support/sso.js';

const APP = 'http://127.0.0.1:9/signed-in';
const clock = movableClock();
const dir = tempDir();
let server: TestServer;
let events: ReturnType<typeof recordEvents>;

const oathtool = (secret: string, epochMs: number) =>
  execFileSync('oathtool', ['--totp', '--base32', secret, '--now', `@${Math.floor(epochMs / 1000)}`], { encoding: 'utf8' }).trim();
const fragment = (url: string) => new URLSearchParams(new URL(url).hash.slice(1));
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

before(async () => {
  server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' }, { clock }, dir);
  events = recordEvents(server);
});
after(async () => {
  await server.stop();
  removeDir(dir);
});

/** A whole SSO sign-in as a browser makes it: the fragment the organization's page receives. */
async function ssoSignIn(s: SsoSetup): Promise<URLSearchParams> {
  const walk = await s.browser.walk(s.startUrl(), { stop: (u) => u.startsWith(APP) });
  assert.ok(walk.stoppedAt, `ended at ${walk.last.status} ${walk.last.url}: ${walk.last.body.slice(0, 300)}`);
  return fragment(walk.stoppedAt);
}

/** The person enrolls TOTP with their own token and confirms it with a first code; returns the secret. */
async function enrollTotp(org: Org, token: string): Promise<string> {
  const enrollment = expectResult<{ credential_id: string; key_uri: string }>(await org.user.post('/register/totp', {}, bearer(token)), 201);
  const secret = new URL(enrollment.key_uri).searchParams.get('secret') as string;
  // 5 s into a time step, so the code made now stays in its step while the test runs.
  clock.advance(35_000 - (clock.nowMs() % 30_000));
  expectResult(await org.user.post('/register/totp/confirm', { credential_id: enrollment.credential_id, code: oathtool(secret, clock.nowMs()) }, bearer(token)), 200);
  return secret;
}

describe('SSO sign-in and the second-factor policy', () => {
  test("a member of a group that must use two factors gets a challenge, not a token; TOTP answers it with a token listing oidc and totp", async () => {
    const s = await ssoSetup(server, 'sso-mfa', APP, { authorize_scopes: ['groups'], groups_claim: 'groups' });
    try {
      const { org } = s;
      assert.equal((await org.admin.post('/groups', { name: 'admins' })).status, 201);
      // Registered by a first SSO sign-in, before the policy names the group: one factor is enough then.
      const first = await ssoSignIn(s);
      const token = first.get('token') as string;
      assert.ok(token, first.toString());
      const person = (await verifyIdentityToken(server, token)).sub as string;
      const secret = await enrollTotp(org, token);
      assert.equal((await org.admin.patch('/organizations/config', { second_factor_required_groups: ['admins'] })).status, 200);

      // The provider now puts the person in the group; the policy is judged with the groups it names.
      (s.idp.accounts.get('ada') as { groups?: string[] }).groups = ['admins'];
      clock.advance(30_000);
      const challenged = await ssoSignIn(s);
      assert.equal(challenged.get('token'), null, 'no token before the second factor');
      const challenge = challenged.get('second_factor_challenge') as string;
      assert.ok(challenge, challenged.toString());
      assert.equal(challenged.get('second_factor_methods'), 'totp');
      assert.equal(challenged.get('expires_in'), '300');
      assert.deepEqual((await org.admin.get(`/persons/${person}/groups`)).body.result.map((g: { name?: string } | string) => (typeof g === 'string' ? g : g.name)), ['admins']);

      expectError(await org.user.post('/authenticate/totp', { challenge, code: oathtool(secret, clock.nowMs() - 90_000) }), 401, 'not valid');
      const answered = expectResult<{ token: string }>(await org.user.post('/authenticate/totp', { challenge, code: oathtool(secret, clock.nowMs()) }), 200);
      const claims = await verifyIdentityToken(server, answered.token);
      assert.equal(claims.sub, person);
      assert.deepEqual(claims['authenticated_methods'], ['oidc', 'totp']);
      const succeeded = events(org.id, 'AuthenticationSucceeded_v1').at(-1) as Record<string, unknown>;
      assert.equal(succeeded['success_authn_method'], 'totp');
      assert.deepEqual(succeeded['authenticated_methods'], ['oidc', 'totp']);
      assert.equal(events(org.id, 'PersonCreated_v1').length, 1);
    } finally {
      await s.close();
    }
  });

  test('the same challenge as password sign-in answers it: JSON {second_factor}; a person required to use two factors who holds none is refused (403, recorded)', async () => {
    const s = await ssoSetup(server, 'sso-mfa-all', APP);
    try {
      const { org } = s;
      const token = (await ssoSignIn(s)).get('token') as string;
      assert.equal((await org.admin.patch('/organizations/config', { second_factor_required: true })).status, 200);

      // Holds no second factor yet: no token, the error in the fragment, AuthenticationFailed recorded.
      const refused = await ssoSignIn(s);
      assert.equal(refused.get('token'), null);
      assert.equal(refused.get('error'), 'access_denied');
      assert.match(refused.get('error_description') ?? '', /second factor/);
      const failed = events(org.id, 'AuthenticationFailed_v1').at(-1) as Record<string, unknown>;
      assert.equal(failed['failed_authn_method'], 'oidc');
      assert.equal(failed['failure_reason'], 'second_factor_required');

      // The token of the first sign-in still enrolls; then the callback answers as /authenticate/password does.
      const secret = await enrollTotp(org, token);
      clock.advance(30_000);
      const at = await s.browser.walk(s.startUrl(), { stop: (u) => u.startsWith(`${server.base}/authenticate/oidc/callback`) });
      const res = await s.browser.request(at.stoppedAt as string, { headers: { accept: 'application/json' } });
      assert.equal(res.status, 200, res.body);
      const { second_factor } = JSON.parse(res.body).result as { second_factor: { challenge: string; methods: string[]; expires_in: number } };
      assert.deepEqual(second_factor.methods, ['totp']);
      assert.equal(second_factor.expires_in, 300);
      const answered = expectResult<{ token: string }>(await org.user.post('/authenticate/totp', { challenge: second_factor.challenge, code: oathtool(secret, clock.nowMs()) }), 200);
      assert.deepEqual((await verifyIdentityToken(server, answered.token))['authenticated_methods'], ['oidc', 'totp']);
    } finally {
      await s.close();
    }
  });
});
