// The hosted page of /oauth2/authorize only verifies the sign-in: it records AuthenticationSucceeded and no
// token, so the tokens a relying party gets at the token endpoint are the person's only new tokens, follow
// the person's token before the flow, say how the person signed in, and the next token follows them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { expectResult } from '../support/expect.js';
import { newOrg, personWithPassword, recordEvents, type Org } from '../support/auth.js';
import { Browser } from '../support/oauth-browser.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';

const REDIRECT = 'https://app.example/cb';
const EMAIL = 'grace@example.com';
const PASSWORD = 'correct horse battery staple';

describe('the hosted sign-in page verifies; the token endpoint issues', () => {
  let server: TestServer;
  let org: Org;
  let personId: string;
  let client: { client_id: string; client_secret: string };
  let events: ReturnType<typeof recordEvents>;
  const dataDir = tempDir();

  before(async () => {
    server = await startTestServer({}, {}, dataDir);
    events = recordEvents(server);
    org = await newOrg(server);
    personId = await personWithPassword(org, EMAIL, PASSWORD);
    client = expectResult(
      await org.admin.post('/oauth2/clients', { client_name: 'Web app', scopes: ['openid', 'email'], grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT] }),
      201,
    );
  });
  after(async () => {
    await server.stop();
    removeDir(dataDir);
  });

  const mintToken = async (): Promise<Record<string, unknown>> => decodeJwt(expectResult(await org.admin.post(`/persons/${personId}/mint-token`, {}), 201) as string);
  const minted = () => events(org.id, 'TokenMinted_v1');
  const configure = () => oidc.discovery(new URL(server.service.issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), { execute: [oidc.allowInsecureRequests] });

  /** A relying party's authorization request, the person through the hosted page; the callback with its code. */
  async function authorize(config: oidc.Configuration, email: string) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid email', state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const browser = new Browser();
    const page = await browser.get(url);
    assert.equal(page.status, 200, page.html);
    const done = await browser.signIn(page, server.base, email, PASSWORD);
    assert.equal(done.status, 302, done.html);
    await browser.close();
    return { callback: new URL(done.location as string), checks: { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true } };
  }

  test('no token for the hosted page, the real authenticated_methods, and an unbroken prev_token_id chain', async () => {
    const before = await mintToken();
    const mintedBefore = minted().length;
    const succeededBefore = events(org.id, 'AuthenticationSucceeded_v1').length;

    const config = await configure();
    const { callback, checks } = await authorize(config, EMAIL);

    // The sign-in is recorded, with its method; no token is, since none was handed out.
    const succeeded = events(org.id, 'AuthenticationSucceeded_v1').slice(succeededBefore);
    assert.equal(succeeded.length, 1);
    assert.equal(succeeded[0]?.['person_id'], personId);
    assert.deepEqual(succeeded[0]?.['authenticated_methods'], ['password']);
    assert.equal(minted().length, mintedBefore, 'the hosted page mints no token');

    const tokens = await oidc.authorizationCodeGrant(config, callback, checks);
    const access = decodeJwt(tokens.access_token);
    const id = decodeJwt(tokens.id_token as string);

    // Exactly the two tokens the client holds were recorded, each with the sign-in's authentications.
    const issued = minted().slice(mintedBefore);
    assert.deepEqual(issued.map((e) => e['token_id']), [access.jti, id.jti]);
    for (const e of issued) {
      assert.equal(e['person_id'], personId);
      assert.equal(e['mint_token_api'], false);
      assert.deepEqual(e['authentications'].map((a: Record<string, unknown>) => [a['method'], a['handle']]), [['password', { type: 'EmailAddress', value: EMAIL }]]);
    }
    for (const claims of [access, id]) {
      assert.deepEqual(claims['authenticated_methods'], ['password']);
      assert.deepEqual(claims['amr'], ['pwd']);
    }
    // Each follows the person's token before it: the one minted before the flow, then the access token.
    assert.equal(access['prev_token_id'], before.jti);
    assert.equal(id['prev_token_id'], access.jti);
    assert.equal((await mintToken())['prev_token_id'], id.jti, "the person's next identity token follows the last token handed out");

    // A refresh issues with the same sign-in's methods.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    assert.deepEqual(decodeJwt(refreshed.access_token)['authenticated_methods'], ['password']);
    const last = minted().at(-2);
    assert.equal(last?.['token_id'], decodeJwt(refreshed.access_token).jti);
    assert.deepEqual(last?.['authentications'].map((a: Record<string, unknown>) => a['method']), ['password']);
  });

  test("a person's first sign-in, on the hosted page: the first token they receive is their first_token", async () => {
    const email = 'first@example.com';
    const newcomer = await personWithPassword(org, email, PASSWORD);
    const config = await configure();
    const { callback, checks } = await authorize(config, email);
    const tokens = await oidc.authorizationCodeGrant(config, callback, checks);
    const access = decodeJwt(tokens.access_token);
    const id = decodeJwt(tokens.id_token as string);
    assert.equal(access.sub, newcomer);
    assert.deepEqual([access['first_token'], access['prev_token_id']], [true, undefined]);
    assert.deepEqual([id['first_token'], id['prev_token_id']], [false, access.jti]);
    const recorded = minted().filter((e) => e['person_id'] === newcomer);
    assert.deepEqual(recorded.map((e) => [e['token_id'], e['first_token']]), [[access.jti, true], [id.jti, false]]);
  });
});
