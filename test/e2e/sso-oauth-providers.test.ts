// SSO sign-in through the plain OAuth 2.0 providers (github, bitbucket: no ID token), end to end against
// loopback stand-ins of their OAuth servers and user APIs, the service's calls rerouted to them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startTestServer, type TestServer } from '../support/server.js';
import { newOrg, recordEvents, verifyIdentityToken, type Org } from '../support/auth.js';
import { WalkingClient } from '../support/oidc-provider.js';
import { startOAuthStandIns, type OAuthStandIns, type StandInKind } from '../support/oauth-providers.js';

const APP = 'http://127.0.0.1:9/signed-in';

let server: TestServer;
let standIns: OAuthStandIns;
let events: ReturnType<typeof recordEvents>;
let callback: string;

before(async () => {
  standIns = await startOAuthStandIns();
  server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' }, { ssoReroute: standIns.reroute });
  events = recordEvents(server);
  callback = `${server.base}/authenticate/oidc/callback`;
});
after(async () => {
  await server.stop();
  await standIns.stop();
  removeDir(server.dataDir);
});

interface Setup {
  org: Org;
  browser: WalkingClient;
  startUrl: string;
}

async function setup(provider: StandInKind): Promise<Setup> {
  const org = await newOrg(server, provider);
  assert.equal((await org.admin.patch('/organizations/config', { sso_allowed_redirect_uris: [APP] })).status, 200);
  const cred = await org.admin.post('/organizations/sso/oidc/provider-credentials', { client_id: standIns.clientId, client_secret: standIns.clientSecret, provider });
  assert.equal(cred.status, 201, cred.text);
  return { org, browser: new WalkingClient(), startUrl: `${server.base}/authenticate/oidc/${standIns.clientId}/start?org_id=${org.id}&redirect_uri=${encodeURIComponent(APP)}` };
}

const fragment = (url: string) => new URLSearchParams(new URL(url).hash.slice(1));
const lastFailure = (org: Org) => events(org.id, 'AuthenticationFailed_v1').at(-1);

/** From the start, through the provider (its URLs rewritten to the stand-in), to the organization's page. */
async function signIn(s: Setup): Promise<URLSearchParams> {
  const walk = await s.browser.walk(s.startUrl, { stop: (u) => u.startsWith(APP), rewrite: (u) => standIns.rewrite(u) });
  assert.ok(walk.stoppedAt, `ended at ${walk.last.status} ${walk.last.url}: ${walk.last.body.slice(0, 300)}`);
  return fragment(walk.stoppedAt);
}

for (const provider of ['github', 'bitbucket'] as const) {
  describe(`SSO sign-in through ${provider} (OAuth 2.0 and its user API)`, () => {
    test('the verified email, primary first, signs the person in with method oidc; the start asks for the published endpoint', async () => {
      const s = await setup(provider);
      try {
        standIns.accounts[provider].emails = [
          { email: `unverified-${provider}@example.com`, verified: false, primary: false },
          { email: `other-${provider}@example.com`, verified: true, primary: false },
          { email: `main-${provider}@example.com`, verified: true, primary: true },
        ];
        const start = await s.browser.request(s.startUrl);
        assert.equal(start.status, 302, start.body);
        const authorize = new URL(start.location as string);
        const published = provider === 'github' ? 'https://github.com/login/oauth/authorize' : 'https://bitbucket.org/site/oauth2/authorize';
        assert.equal(`${authorize.origin}${authorize.pathname}`, published);
        assert.equal(authorize.searchParams.get('client_id'), standIns.clientId);
        assert.equal(authorize.searchParams.get('redirect_uri'), callback);
        assert.equal(authorize.searchParams.get('scope'), provider === 'github' ? 'read:user user:email' : 'account');
        assert.equal(authorize.searchParams.get('nonce'), null, 'no ID token, so no nonce');
        assert.equal(authorize.searchParams.get('code_challenge_method'), provider === 'github' ? 'S256' : null);

        const f = await signIn(s);
        const token = f.get('token');
        assert.ok(token, f.toString());
        const claims = await verifyIdentityToken(server, token);
        assert.deepEqual(claims['authenticated_methods'], ['oidc']);
        const created = events(s.org.id, 'PersonCreated_v1');
        assert.equal(created.length, 1);
        assert.deepEqual(created[0]?.['handles'], [{ type: 'EmailAddress', value: `main-${provider}@example.com` }]);
        assert.equal(claims.sub, created[0]?.['person_id']);
        assert.equal(events(s.org.id, 'AuthenticationSucceeded_v1').at(-1)?.['success_authn_method'], 'oidc');

        // How the client authenticated at the token endpoint: the secret in the body (GitHub) or HTTP Basic (Bitbucket).
        const sent = standIns.tokenRequests[0];
        assert.equal(sent?.kind, provider);
        if (provider === 'github') {
          assert.equal(sent?.fields['client_secret'], standIns.clientSecret);
          assert.ok((sent?.fields['code_verifier'] ?? '').length >= 43);
        } else {
          assert.match(sent?.authorization ?? '', /^Basic /);
          assert.equal(sent?.fields['client_secret'], undefined);
        }
        assert.equal(lastFailure(s.org), undefined);
      } finally {
        await s.browser.close();
      }
    });

    test('no verified email: AuthenticationFailed email_not_verified naming the user API, nobody registered', async () => {
      const s = await setup(provider);
      try {
        standIns.accounts[provider].emails = [{ email: `unverified-${provider}@example.com`, verified: false, primary: true }];
        const f = await signIn(s);
        assert.equal(f.get('token'), null);
        assert.equal(f.get('error'), 'access_denied');
        assert.match(f.get('error_description') ?? '', new RegExp(`^${provider} lists no verified email address for this account \\(GET /user/emails\\)`));
        const failed = lastFailure(s.org);
        assert.equal(failed?.['failure_reason'], 'email_not_verified');
        assert.equal(failed?.['failed_authn_method'], 'oidc');
        assert.match(failed?.['failure_detail'], /no verified email address/);
        assert.equal(events(s.org.id, 'PersonCreated_v1').length, 0);
      } finally {
        await s.browser.close();
      }
    });

    test("the provider's token error: AuthenticationFailed code_exchange_failed naming the provider's error", async () => {
      const s = await setup(provider);
      try {
        standIns.accounts[provider].emails = [{ email: `main-${provider}@example.com`, verified: true, primary: true }];
        const error = provider === 'github' ? 'bad_verification_code' : 'invalid_grant';
        standIns.failNextToken(provider, error);
        const f = await signIn(s);
        assert.equal(f.get('token'), null);
        assert.equal(f.get('error'), 'access_denied');
        assert.match(f.get('error_description') ?? '', new RegExp(`^the provider refused the code exchange: ${error}`));
        const failed = lastFailure(s.org);
        assert.equal(failed?.['failure_reason'], 'code_exchange_failed');
        assert.match(failed?.['failure_detail'], new RegExp(error));
        assert.equal(events(s.org.id, 'AuthenticationSucceeded_v1').length, 0);
      } finally {
        await s.browser.close();
      }
    });
  });
}
