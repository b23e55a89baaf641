// Step-up for applications, with openid-client as the relying party: acr_values asking for the multi-factor
// level makes a one-factor session sign in again, where the hosted page asks for the person's TOTP code
// (oathtool's); ID tokens carry amr (RFC 8176 values) and acr, and discovery lists the acr values.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { expectResult } from '../support/expect.js';
import { movableClock } from '../support/clock.js';
import { newOrg, personWithPassword, type Org } from '../support/auth.js';
import { Browser } from '../support/oauth-browser.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { ACR_MULTI_FACTOR, ACR_ONE_FACTOR } from '../../src/oauth/acr.js';

const REDIRECT = 'https://app.example/cb';
const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery staple';
const clock = movableClock();

const oathtool = (secret: string, epochMs: number) =>
  execFileSync('oathtool', ['--totp', '--base32', secret, '--now', `@${Math.floor(epochMs / 1000)}`], { encoding: 'utf8' }).trim();

describe('step-up: acr_values, amr and acr', () => {
  let server: TestServer;
  let org: Org;
  let person: string;
  let config: oidc.Configuration;
  const dataDir = tempDir();

  before(async () => {
    server = await startTestServer({ SERVICE_SECRETS_KEY: randomBytes(32).toString('hex') }, { clock }, dataDir);
    org = await newOrg(server);
    person = await personWithPassword(org, EMAIL, PASSWORD);
    const client = expectResult<{ client_id: string; client_secret: string }>(
      await org.admin.post('/oauth2/clients', { client_name: 'Bank', scopes: ['openid'], grant_types: ['authorization_code'], redirect_uris: [REDIRECT] }),
      201,
    );
    config = await oidc.discovery(new URL(server.service.issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), { execute: [oidc.allowInsecureRequests] });
  });
  after(async () => {
    await server.stop();
    removeDir(dataDir);
  });

  async function request(extra: Record<string, string> = {}) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...extra });
    return { url, checks: { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true } };
  }
  const idToken = async (location: string, checks: Awaited<ReturnType<typeof request>>['checks']) =>
    decodeJwt((await oidc.authorizationCodeGrant(config, new URL(location), checks)).id_token as string);

  test('discovery lists both acr values', () => {
    const meta = config.serverMetadata();
    assert.deepEqual(meta.acr_values_supported, [ACR_ONE_FACTOR, ACR_MULTI_FACTOR]);
    assert.ok(meta.claims_supported?.includes('acr'));
  });

  test('a password session is one factor; asking for the multi-factor acr signs in again with TOTP', async () => {
    const browser = new Browser();
    const first = await request();
    const done = await browser.signIn(await browser.get(first.url), server.base, EMAIL, PASSWORD);
    assert.equal(done.status, 302, done.html);
    const one = await idToken(done.location as string, first.checks);
    assert.deepEqual([one['amr'], one['acr']], [['pwd'], ACR_ONE_FACTOR]);

    // The person enrolls TOTP meanwhile; the session stands.
    const headers = { authorization: `Bearer ${expectResult<string>(await org.admin.post(`/persons/${person}/mint-token`, {}), 201)}` };
    const enrollment = expectResult<{ credential_id: string; key_uri: string }>(await org.user.post('/register/totp', {}, headers), 201);
    const secret = new URL(enrollment.key_uri).searchParams.get('secret') as string;
    clock.advance(35_000 - (clock.nowMs() % 30_000));
    expectResult(await org.user.post('/register/totp/confirm', { credential_id: enrollment.credential_id, code: oathtool(secret, clock.nowMs()) }, headers), 200);
    clock.advance(30_000);

    // The one-factor level, or none asked: the session answers at once.
    for (const extra of [{}, { acr_values: ACR_ONE_FACTOR }] as Record<string, string>[]) {
      const again = await request(extra);
      const direct = await browser.get(again.url);
      assert.equal(direct.status, 302, direct.html);
      assert.equal((await idToken(direct.location as string, again.checks))['acr'], ACR_ONE_FACTOR);
    }
    // prompt=none cannot step up.
    const silent = await request({ acr_values: ACR_MULTI_FACTOR, prompt: 'none' });
    const refused = await browser.get(silent.url);
    assert.equal(new URL(refused.location as string).searchParams.get('error'), 'login_required');

    // The multi-factor level: the sign-in page, the password, the code.
    const step = await request({ acr_values: ACR_MULTI_FACTOR });
    const page = await browser.get(step.url);
    assert.equal(page.status, 200, 'a one-factor session signs in again');
    const asked = await browser.signIn(page, server.base, EMAIL, PASSWORD);
    assert.match(asked.html, /name="code"/);
    const stepped = await browser.submit(asked, server.base, { code: oathtool(secret, clock.nowMs()) });
    assert.equal(stepped.status, 302, stepped.html);
    const two = await idToken(stepped.location as string, step.checks);
    assert.deepEqual([two['amr'], two['acr']], [['pwd', 'otp', 'mfa'], ACR_MULTI_FACTOR]);

    // The two-factor session now meets the multi-factor level without a sign-in.
    const later = await request({ acr_values: ACR_MULTI_FACTOR });
    const direct = await browser.get(later.url);
    assert.equal(direct.status, 302, direct.html);
    assert.equal((await idToken(direct.location as string, later.checks))['acr'], ACR_MULTI_FACTOR);
    await browser.close();
  });
});
