// The hosted page's authorization requests and codes outlive a restart: the request is sealed into the sign-in
// form (with a key derived from the stored cursor secret) and the code is organization state in the WAL, so a
// form rendered before a restart is submitted after it, and a code issued before one is redeemed after it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { expectResult } from '../support/expect.js';
import { newOrg, personWithPassword, sameOrgOn } from '../support/auth.js';
import { freePort } from '../support/free-port.js';
import { Browser } from '../support/oauth-browser.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';

const REDIRECT = 'https://app.example/cb';
const dir = tempDir();
after(() => removeDir(dir));

test('a sign-in form rendered before a restart is submitted after it, and its code is redeemed after another', async () => {
  // The same port, so that the issuer the relying party checks stays the same.
  const env = { SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_PORT: String(await freePort()) };
  let server: TestServer = await startTestServer(env, {}, dir);
  const browser = new Browser();
  try {
    let org = await newOrg(server);
    const personId = await personWithPassword(org, 'ada@example.com', 'correct horse battery staple');
    const client = expectResult<{ client_id: string; client_secret: string }>(
      await org.admin.post('/oauth2/clients', { client_name: 'Web app', scopes: ['openid', 'email'], grant_types: ['authorization_code'], redirect_uris: [REDIRECT] }),
      201,
    );
    const rp = () => oidc.discovery(new URL(server.service.issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(await rp(), { redirect_uri: REDIRECT, scope: 'openid email', state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const page = await browser.get(url);
    assert.equal(page.status, 200, page.html);

    await server.stop();
    server = await startTestServer(env, {}, dir);
    org = sameOrgOn(server, org);
    const done = await browser.signIn(page, server.base, 'ada@example.com', 'correct horse battery staple');
    assert.equal(done.status, 302, done.html);
    const callback = new URL(done.location as string);
    assert.ok(callback.searchParams.get('code'), callback.href);

    await server.stop();
    server = await startTestServer(env, {}, dir);
    const tokens = await oidc.authorizationCodeGrant(await rp(), callback, { pkceCodeVerifier: verifier, expectedState: state });
    assert.equal(tokens.claims()?.sub, personId);
  } finally {
    await browser.close();
    await server.stop();
  }
});
