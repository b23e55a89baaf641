// DPoP (RFC 9449) on the real server: openid-client binds client_credentials and a person's tokens to its key,
// introspection names the key (cnf), userinfo takes the token only with a proof of that key; the negatives
// of the RFC's checks (typ, alg, a private jwk, htm, htu, iat, a reused jti, ath, another key) at the token
// endpoint and at userinfo; a bound token presented as a bearer token refused; and server nonces.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import * as oidc from 'openid-client';
import { expectResult } from '../support/expect.js';
import { newOrg, personWithPassword, type Org } from '../support/auth.js';
import { Browser } from '../support/oauth-browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

const REDIRECT = 'https://app.example/cb';
const EMAIL = 'alan@example.com';
const PASSWORD = 'correct horse battery staple';
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString());

interface ProofKey {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}

async function proofKey(alg = 'ES256'): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
}

/** A proof as RFC 9449 4.2 shapes it; each override replaces (undefined removes) a claim or header member. */
function proof(key: ProofKey, htm: string, htu: string, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> {
  const all: Record<string, unknown> = { jti: randomUUID(), htm, htu, iat: Math.floor(Date.now() / 1000), ...claims };
  for (const [k, v] of Object.entries(all)) if (v === undefined) delete all[k];
  return new SignJWT(all).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk, ...header }).sign(key.privateKey);
}
const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

describe('DPoP (RFC 9449)', () => {
  let server: TestServer;
  let org: Org;
  let machine: { client_id: string; client_secret: string };
  let web: { client_id: string; client_secret: string };
  let key: ProofKey;

  const tokenUrl = () => `${server.base}/oauth2/tokens`;
  const userinfoUrl = () => `${server.base}/oauth2/userinfo`;
  const tokenRequest = async (dpop: string | undefined, c = machine) => {
    const res = await fetch(tokenUrl(), { method: 'POST', headers: { ...FORM, Authorization: basic(c.client_id, c.client_secret), ...(dpop !== undefined && { DPoP: dpop }) }, body: 'grant_type=client_credentials' });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, string> };
  };
  const userinfo = async (authorization: string, dpop?: string) => {
    const res = await fetch(userinfoUrl(), { headers: { Authorization: authorization, ...(dpop !== undefined && { DPoP: dpop }) } });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
  };
  const rp = (c: { client_id: string; client_secret: string }) => oidc.discovery(new URL(server.base), c.client_id, undefined, oidc.ClientSecretBasic(c.client_secret), { execute: [oidc.allowInsecureRequests] });

  /** A person's DPoP-bound access token through the hosted page and openid-client. */
  async function personToken(config: oidc.Configuration, dpop: oidc.DPoPHandle): Promise<oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers> {
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid email', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const browser = new Browser();
    const done = await browser.signIn(await browser.get(url), server.base, EMAIL, PASSWORD);
    await browser.close();
    return oidc.authorizationCodeGrant(config, new URL(done.location as string), { pkceCodeVerifier: verifier }, undefined, { DPoP: dpop });
  }

  before(async () => {
    server = await startTestServer();
    org = await newOrg(server);
    await personWithPassword(org, EMAIL, PASSWORD);
    machine = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'machine', scopes: ['reports.read'], grant_types: ['client_credentials'] }), 201);
    web = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'web', scopes: ['openid', 'email'], grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT] }), 201);
    key = await proofKey();
  });
  after(() => server.stop());

  test('discovery lists the proof algorithms, and openid-client reads them', async () => {
    const meta = (await rp(machine)).serverMetadata();
    assert.ok(meta.dpop_signing_alg_values_supported?.includes('ES256'));
    assert.ok(!meta.dpop_signing_alg_values_supported?.some((a) => a.startsWith('HS')));
  });

  test('client_credentials through openid-client: a DPoP token bound to the key (cnf.jkt), which introspection names', async () => {
    const config = await rp(machine);
    const pair = await oidc.randomDPoPKeyPair('ES256');
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'reports.read' }, { DPoP: oidc.getDPoPHandle(config, pair) });
    assert.equal(tokens.token_type.toLowerCase(), 'dpop');
    const jkt = await calculateJwkThumbprint(await exportJWK(pair.publicKey));
    assert.deepEqual(claimsOf(tokens.access_token).cnf, { jkt });
    const introspected = await oidc.tokenIntrospection(config, tokens.access_token);
    assert.deepEqual([introspected.active, introspected.token_type, introspected.cnf], [true, 'DPoP', { jkt }]);
    // without a proof, the same client gets a bearer token as before
    const plain = await oidc.clientCredentialsGrant(config);
    assert.equal(plain.token_type.toLowerCase(), 'bearer');
    assert.equal(claimsOf(plain.access_token).cnf, undefined);
    assert.equal((await oidc.tokenIntrospection(config, plain.access_token)).token_type, 'Bearer');
  });

  test("a person's tokens through openid-client: userinfo only with a proof of the token's key", async () => {
    const config = await rp(web);
    const pair = await oidc.randomDPoPKeyPair('ES256');
    const dpop = oidc.getDPoPHandle(config, pair);
    const tokens = await personToken(config, dpop);
    assert.equal(tokens.token_type.toLowerCase(), 'dpop');
    const sub = tokens.claims()?.sub as string;
    const info = await oidc.fetchUserInfo(config, tokens.access_token, sub, { DPoP: dpop });
    assert.equal(info['email'], EMAIL);
    // refreshed with a proof: bound again
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string, undefined, { DPoP: dpop });
    assert.equal(refreshed.token_type.toLowerCase(), 'dpop');
    assert.equal(claimsOf(refreshed.access_token).cnf.jkt, claimsOf(tokens.access_token).cnf.jkt);

    const at = refreshed.access_token;
    const asBearer = await userinfo(`Bearer ${at}`);
    assert.equal(asBearer.status, 401, 'a DPoP-bound token is no bearer token');
    assert.equal(asBearer.body.error, 'invalid_token');
    assert.match(asBearer.headers.get('www-authenticate') ?? '', /^DPoP .*algs=".*ES256/);
    const noProof = await userinfo(`DPoP ${at}`);
    assert.deepEqual([noProof.status, noProof.body.error], [401, 'invalid_dpop_proof']);
    const otherKey = await proofKey();
    const stranger = await userinfo(`DPoP ${at}`, await proof(otherKey, 'GET', userinfoUrl(), { ath: ath(at) }));
    assert.deepEqual([stranger.status, stranger.body.error], [401, 'invalid_dpop_proof'], 'a proof of another key');
    const unbound = (await oidc.clientCredentialsGrant(await rp(machine))).access_token;
    const bearerAsDpop = await userinfo(`DPoP ${unbound}`, await proof(key, 'GET', userinfoUrl(), { ath: ath(unbound) }));
    assert.equal(bearerAsDpop.status, 401);
  });

  test("a public client's refresh token is bound to its DPoP key (RFC 9449 5): refreshed only with a proof of that key", async () => {
    const spa = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'spa', scopes: ['openid', 'email'], grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT], public: true }), 201);
    const config = await oidc.discovery(new URL(server.base), spa.client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const pair = await oidc.randomDPoPKeyPair('ES256');
    const dpop = oidc.getDPoPHandle(config, pair);
    const tokens = await personToken(config, dpop);
    const refresh = tokens.refresh_token as string;
    const form = (token: string) => `grant_type=refresh_token&client_id=${spa.client_id}&refresh_token=${encodeURIComponent(token)}`;
    const post = async (body: string, proofHeader?: string) => {
      const res = await fetch(tokenUrl(), { method: 'POST', headers: { ...FORM, ...(proofHeader !== undefined && { DPoP: proofHeader }) }, body });
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    const bare = await post(form(refresh));
    assert.deepEqual([bare.status, bare.body['error']], [400, 'invalid_grant'], 'without a proof');
    assert.match(bare.body['error_description'] ?? '', /bound to a DPoP key/);
    const stranger = await post(form(refresh), await proof(await proofKey(), 'POST', tokenUrl()));
    assert.deepEqual([stranger.status, stranger.body['error']], [400, 'invalid_grant'], "with another key's proof");
    const own: ProofKey = { privateKey: pair.privateKey, jwk: await exportJWK(pair.publicKey), jkt: '' };
    const renewed = await post(form(refresh), await proof(own, 'POST', tokenUrl()));
    assert.equal(renewed.status, 200, JSON.stringify(renewed.body));
    assert.equal(renewed.body['token_type'], 'DPoP');
    // a confidential client's refresh token is not bound: it authenticates instead (RFC 9449 5)
    const webConfig = await rp(web);
    const webTokens = await personToken(webConfig, oidc.getDPoPHandle(webConfig, await oidc.randomDPoPKeyPair('ES256')));
    assert.equal((await oidc.refreshTokenGrant(webConfig, webTokens.refresh_token as string)).token_type.toLowerCase(), 'bearer');
  });

  test('userinfo checks the proof: ath, htm, htu, iat, and each proof once', async () => {
    const config = await rp(web);
    const handleKey = await oidc.randomDPoPKeyPair('ES256');
    const tokens = await personToken(config, oidc.getDPoPHandle(config, handleKey));
    const at = tokens.access_token;
    const signer: ProofKey = { privateKey: handleKey.privateKey, jwk: await exportJWK(handleKey.publicKey), jkt: '' };
    const good = await proof(signer, 'GET', userinfoUrl(), { ath: ath(at) });
    assert.equal((await userinfo(`DPoP ${at}`, good)).status, 200);
    const replayed = await userinfo(`DPoP ${at}`, good);
    assert.deepEqual([replayed.status, replayed.body.error], [401, 'invalid_dpop_proof']);
    assert.match(replayed.body.error_description, /used already/);
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ ath: ath('another token') }, 'GET', /ath/],
      [{ ath: undefined }, 'GET', /ath/],
      [{ ath: ath(at) }, 'POST', /htm/],
      [{ ath: ath(at), htu: `${server.base}/oauth2/tokens` }, 'GET', /htu/],
      [{ ath: ath(at), iat: Math.floor(Date.now() / 1000) - 600 }, 'GET', /iat/],
      [{ ath: ath(at), iat: Math.floor(Date.now() / 1000) + 600 }, 'GET', /iat/],
    ];
    for (const [claims, htm, why] of cases) {
      const r = await userinfo(`DPoP ${at}`, await proof(signer, htm, userinfoUrl(), claims));
      assert.deepEqual([r.status, r.body.error], [401, 'invalid_dpop_proof'], JSON.stringify(claims));
      assert.match(r.body.error_description, why);
    }
    // htu ignores the query and fragment (RFC 9449 4.3)
    assert.equal((await userinfo(`DPoP ${at}`, await proof(signer, 'GET', `${userinfoUrl()}?x=1#y`, { ath: ath(at) }))).status, 200);
  });

  test('the token endpoint refuses a bad proof with invalid_dpop_proof, and issues nothing', async () => {
    const url = tokenUrl();
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const privateJwk = await exportJWK(privateKey);
    const hmac = new TextEncoder().encode('a-shared-secret-that-is-long-enough-for-hs256');
    const now = Math.floor(Date.now() / 1000);
    const bad: Array<[string, Promise<string> | string]> = [
      ['typ', proof(key, 'POST', url, {}, { typ: 'JWT' })],
      ['htm', proof(key, 'GET', url)],
      ['htu', proof(key, 'POST', `${server.base}/oauth2/userinfo`)],
      ['htu', proof(key, 'POST', 'https://other.example/oauth2/tokens')],
      ['iat', proof(key, 'POST', url, { iat: now - 3600 })],
      ['jti', proof(key, 'POST', url, { jti: undefined })],
      ['public key', proof(key, 'POST', url, {}, { jwk: privateJwk })],
      ['jwk', proof(key, 'POST', url, {}, { jwk: undefined })],
      ['alg', new SignJWT({ jti: randomUUID(), htm: 'POST', htu: url, iat: now }).setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: key.jwk }).sign(hmac)],
      ['JWS', 'not.a.proof'],
    ];
    for (const [why, made] of bad) {
      const r = await tokenRequest(await made);
      assert.deepEqual([r.status, r.body.error], [400, 'invalid_dpop_proof'], `${why}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.error_description ?? '', new RegExp(why === 'public key' ? 'public key' : why === 'JWS' ? 'JWS' : why));
    }
    const once = await proof(key, 'POST', url);
    assert.equal((await tokenRequest(once)).status, 200);
    const again = await tokenRequest(once);
    assert.deepEqual([again.status, again.body.error], [400, 'invalid_dpop_proof'], 'a reused proof');
    // one proof header only
    const two = await tokenRequest(`${await proof(key, 'POST', url)}, ${await proof(key, 'POST', url)}`);
    assert.equal(two.status, 400);
  });
});

describe('DPoP server nonces (SERVICE_OAUTH_DPOP_NONCE)', () => {
  let server: TestServer;
  let org: Org;
  let machine: { client_id: string; client_secret: string };

  before(async () => {
    server = await startTestServer({ SERVICE_OAUTH_DPOP_NONCE: '1' });
    org = await newOrg(server);
    machine = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'machine', scopes: ['reports.read'], grant_types: ['client_credentials'] }), 201);
  });
  after(() => server.stop());

  test('a proof without the nonce is answered use_dpop_nonce with one; openid-client retries with it', async () => {
    const key = await proofKey();
    const url = `${server.base}/oauth2/tokens`;
    const post = (dpop: string) => fetch(url, { method: 'POST', headers: { ...FORM, Authorization: basic(machine.client_id, machine.client_secret), DPoP: dpop }, body: 'grant_type=client_credentials' });
    const first = await post(await proof(key, 'POST', url));
    assert.equal(first.status, 400);
    assert.equal(((await first.json()) as { error: string }).error, 'use_dpop_nonce');
    const nonce = first.headers.get('dpop-nonce');
    assert.ok(nonce);
    const wrong = await post(await proof(key, 'POST', url, { nonce: `${nonce}x` }));
    assert.equal(((await wrong.json()) as { error: string }).error, 'use_dpop_nonce');
    const ok = await post(await proof(key, 'POST', url, { nonce }));
    assert.equal(ok.status, 200);

    const config = await oidc.discovery(new URL(server.base), machine.client_id, undefined, oidc.ClientSecretBasic(machine.client_secret), { execute: [oidc.allowInsecureRequests] });
    const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    let tokens;
    try {
      tokens = await oidc.clientCredentialsGrant(config, {}, { DPoP: dpop });
    } catch (error) {
      // openid-client leaves the retry to its caller, with the nonce already remembered
      assert.ok(error instanceof oidc.ResponseBodyError && error.error === 'use_dpop_nonce', String(error));
      tokens = await oidc.clientCredentialsGrant(config, {}, { DPoP: dpop });
    }
    assert.equal(tokens.token_type.toLowerCase(), 'dpop');
  });
});
