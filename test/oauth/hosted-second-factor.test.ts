// The hosted sign-in page of /oauth2/authorize asks a person who holds TOTP for a code after their password
// (codes made by Debian's oathtool), then redirects with the authorization code; a wrong or reused code shows
// the form again, recorded; a recovery code does too; an expired challenge starts the sign-in again.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { expectResult } from '../support/expect.js';
import { movableClock } from '../support/clock.js';
import { newOrg, personWithPassword, recordEvents, type Org } from '../support/auth.js';
import { Browser, type Step } from '../support/oauth-browser.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';

const REDIRECT = 'https://app.example/cb';
const PASSWORD = 'correct horse battery staple';
const clock = movableClock();

const oathtool = (secret: string, epochMs: number) =>
  execFileSync('oathtool', ['--totp', '--base32', secret, '--now', `@${Math.floor(epochMs / 1000)}`], { encoding: 'utf8' }).trim();

/** Moves the clock to 5 s into a time step, so a code made now stays good while the test runs. */
const startOfStep = () => clock.advance(35_000 - (clock.nowMs() % 30_000));

describe('the hosted sign-in page asks for the second factor', () => {
  let server: TestServer;
  let org: Org;
  let events: ReturnType<typeof recordEvents>;
  let client: { client_id: string; client_secret: string };
  const dataDir = tempDir();

  before(async () => {
    server = await startTestServer({ SERVICE_SECRETS_KEY: randomBytes(32).toString('hex') }, { clock }, dataDir);
    events = recordEvents(server);
    org = await newOrg(server);
    client = expectResult(
      await org.admin.post('/oauth2/clients', { client_name: 'Web app', scopes: ['openid', 'email'], grant_types: ['authorization_code'], redirect_uris: [REDIRECT] }),
      201,
    );
  });
  after(async () => {
    await server.stop();
    removeDir(dataDir);
  });

  /** A person with a password and a confirmed TOTP credential: the secret and the recovery codes. */
  async function enrolled(email: string): Promise<{ person: string; secret: string; recovery: string[] }> {
    const person = await personWithPassword(org, email, PASSWORD);
    const headers = { authorization: `Bearer ${expectResult<string>(await org.admin.post(`/persons/${person}/mint-token`, {}), 201)}` };
    const enrollment = expectResult<{ credential_id: string; key_uri: string }>(await org.user.post('/register/totp', {}, headers), 201);
    const secret = new URL(enrollment.key_uri).searchParams.get('secret') as string;
    startOfStep();
    const { recovery_codes } = expectResult<{ recovery_codes: string[] }>(
      await org.user.post('/register/totp/confirm', { credential_id: enrollment.credential_id, code: oathtool(secret, clock.nowMs()) }, headers),
      200,
    );
    clock.advance(30_000);
    return { person, secret, recovery: recovery_codes };
  }

  const configure = () => oidc.discovery(new URL(server.service.issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), { execute: [oidc.allowInsecureRequests] });

  /** The relying party's request and the person's password on the hosted page: the page that follows. */
  async function passwordStep(config: oidc.Configuration, browser: Browser, email: string) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid email', state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const step = await browser.signIn(await browser.get(url), server.base, email, PASSWORD);
    return { step, checks: { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true } };
  }

  const lastFailure = () => events(org.id, 'AuthenticationFailed_v1').at(-1) as Record<string, any>;
  const isSecondStep = (step: Step) => step.html.includes('name="challenge"') && step.html.includes('name="code"');

  test("the password, then oathtool's code: the code redirects; the sign-in and the tokens list both factors", async () => {
    const { person, secret } = await enrolled('ada@example.com');
    const config = await configure();
    const browser = new Browser();
    const succeededBefore = events(org.id, 'AuthenticationSucceeded_v1').length;
    const { step, checks } = await passwordStep(config, browser, 'ada@example.com');
    assert.equal(step.status, 200, step.html);
    assert.ok(isSecondStep(step), step.html);
    assert.equal(step.location, undefined);
    assert.equal(events(org.id, 'AuthenticationSucceeded_v1').length, succeededBefore, 'the password alone signs nobody in');
    assert.match(step.headers.get('content-security-policy') ?? '', /form-action 'self' https:\/\/app\.example/);

    // Nothing typed: the form again, nothing recorded.
    const failuresBefore = events(org.id, 'AuthenticationFailed_v1').length;
    const empty = await browser.submit(step, server.base, { code: '', recovery_code: '' });
    assert.equal(empty.status, 400, empty.html);
    assert.ok(isSecondStep(empty));
    assert.equal(events(org.id, 'AuthenticationFailed_v1').length, failuresBefore);

    // A wrong code: the form again, 401, recorded as the TOTP factor's failure.
    startOfStep();
    const wrong = await browser.submit(step, server.base, { code: oathtool(secret, clock.nowMs() - 120_000) });
    assert.equal(wrong.status, 401, wrong.html);
    assert.ok(isSecondStep(wrong));
    assert.match(wrong.html, /class="error"/);
    assert.equal(lastFailure()['failed_authn_method'], 'totp');
    assert.equal(lastFailure()['failure_reason'], 'invalid_credentials');
    assert.equal(lastFailure()['person_id'], person);

    const code = oathtool(secret, clock.nowMs());
    const done = await browser.submit(wrong, server.base, { code });
    assert.equal(done.status, 302, done.html);
    const succeeded = events(org.id, 'AuthenticationSucceeded_v1').slice(succeededBefore);
    assert.equal(succeeded.length, 1);
    assert.deepEqual(succeeded[0]?.['authenticated_methods'], ['password', 'totp']);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location as string), checks);
    assert.equal(decodeJwt(tokens.id_token as string).sub, person);
    assert.deepEqual(decodeJwt(tokens.access_token)['authenticated_methods'], ['password', 'totp']);

    // The same code once more, in another browser: used, refused.
    const other = new Browser();
    const again = await passwordStep(config, other, 'ada@example.com');
    const reused = await other.submit(again.step, server.base, { code });
    assert.equal(reused.status, 401, reused.html);
    assert.equal(lastFailure()['failed_authn_method'], 'totp');
    await Promise.all([browser.close(), other.close()]);
  });

  test('a recovery code answers too, once', async () => {
    const { recovery } = await enrolled('bo@example.com');
    const config = await configure();
    const browser = new Browser();
    const { step, checks } = await passwordStep(config, browser, 'bo@example.com');
    const done = await browser.submit(step, server.base, { code: '', recovery_code: recovery[0] as string });
    assert.equal(done.status, 302, done.html);
    await oidc.authorizationCodeGrant(config, new URL(done.location as string), checks);
    const other = new Browser();
    const again = await passwordStep(config, other, 'bo@example.com');
    const used = await other.submit(again.step, server.base, { code: '', recovery_code: recovery[0] as string });
    assert.equal(used.status, 401, used.html);
    await Promise.all([browser.close(), other.close()]);
  });

  test('an expired challenge starts the sign-in again; a form from another browser is refused', async () => {
    const { secret } = await enrolled('cy@example.com');
    const config = await configure();
    const browser = new Browser();
    const { step } = await passwordStep(config, browser, 'cy@example.com');
    const stranger = new Browser();
    const forged = await stranger.submit(step, server.base, { code: oathtool(secret, clock.nowMs()) });
    assert.equal(forged.status, 400, forged.html);
    assert.match(forged.html, /did not come from this browser/);
    clock.advance(301_000);
    const late = await browser.submit(step, server.base, { code: oathtool(secret, clock.nowMs()) });
    assert.equal(late.status, 400, late.html);
    assert.ok(late.html.includes('name="password"'), 'the password form again');
    await Promise.all([browser.close(), stranger.close()]);
  });
});
