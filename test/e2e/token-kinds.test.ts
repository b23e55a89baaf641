// The service's keys sign three kinds of token: a person's identity token (typ JWT, aud the organization),
// an OAuth access token (typ at+jwt) and an OAuth ID token (typ JWT, aud the client). A third-party client
// holds the last two; neither may pass where a person's own identity token is asked for: POST /token/validate,
// POST /token/revoke, the end-user bearer routes and Gate's validate-jwt. And a revoked grant's tokens are
// accepted nowhere.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProtectedHeader } from 'jose';
import { expectResult } from '../support/expect.js';
import { gateDoc, startEchoUpstream, startTestGate, type EchoUpstream } from '../support/gate.js';
import { email, startTestServer, type TestServer } from '../support/server.js';

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('token kinds: each validator accepts only its own', () => {
  let server: TestServer;
  let upstream: EchoUpstream;
  let gate: Awaited<ReturnType<typeof startTestGate>>;
  let web: { client_id: string; client_secret: string };
  let machine: { client_id: string; client_secret: string };
  let person: string;
  let identity: string;
  let oauth: { access_token: string; id_token: string };
  let clientToken: string;

  const form = async (path: string, body: Record<string, string>, headers: Record<string, string> = {}) => {
    const res = await fetch(server.base + path, { method: 'POST', headers: { ...FORM, ...headers }, body: new URLSearchParams(body).toString() });
    const text = await res.text();
    return { status: res.status, text, body: text === '' ? undefined : JSON.parse(text) };
  };
  const validate = async (token: string) => expectResult<{ valid: boolean; invalidity_reason?: string }>(await server.client.post('/token/validate', { token }), 200);
  // an end user's call: the bearer token alone, no organization header or API key
  const endUser = () => server.client.as('', '');
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  const throughGate = async (token: string) => (await fetch(`${gate.base}/api/x`, { headers: { authorization: `Bearer ${token}` } })).status;

  before(async () => {
    server = await startTestServer();
    upstream = await startEchoUpstream();
    gate = await startTestGate(
      gateDoc(server.base, {
        default: { target: upstream.base },
        plugins: [{ id: 'jwt', type: 'validate-jwt', parameters: { jwks_refetch_interval: '0s' } }],
      }),
    );
    web = expectResult(await server.client.post('/oauth2/clients', { client_name: 'third-party app', scopes: ['openid'], grant_types: ['authorization_code', 'refresh_token'], redirect_uris: ['https://app.example.com/cb'] }), 201);
    machine = expectResult(await server.client.post('/oauth2/clients', { client_name: 'machine', scopes: ['reports'], grant_types: ['client_credentials'] }), 201);
    person = expectResult(await server.client.post('/persons', email('kinds@example.com')), 201).person_id;
    identity = expectResult(await server.client.post(`/persons/${person}/mint-token`, {}), 201);
    oauth = expectResult(await server.client.post('/oauth2/tokens/mint', { person_id: person, client_id: web.client_id, scopes: ['openid'] }), 200);
    const cc = await form('/oauth2/tokens', { grant_type: 'client_credentials' }, { Authorization: basic(machine.client_id, machine.client_secret) });
    assert.equal(cc.status, 200, cc.text);
    clientToken = cc.body.access_token;
    assert.equal(decodeProtectedHeader(oauth.access_token).typ, 'at+jwt');
    assert.equal(decodeProtectedHeader(oauth.id_token).typ, 'JWT');
  });
  after(async () => {
    await gate.close();
    await upstream.close();
    await server.stop();
  });

  test('the identity token passes everywhere a person\'s own token is asked for', async () => {
    assert.equal((await validate(identity)).valid, true);
    assert.equal((await endUser().get('/consent/gdpr', bearer(identity))).status, 200);
    assert.equal((await endUser().put('/attributes/end_user_read_write', { a: 'b' }, bearer(identity))).status, 204);
    assert.equal(await throughGate(identity), 200);
  });

  test('OAuth access and ID tokens, and a client\'s own token, are not identity tokens', async () => {
    for (const [kind, token] of [['access token', oauth.access_token], ['ID token', oauth.id_token], ['client_credentials token', clientToken]] as const) {
      const verdict = await validate(token);
      assert.equal(verdict.valid, false, `/token/validate accepted the ${kind}`);
      assert.equal(verdict.invalidity_reason, 'invalid_token_content');
      assert.equal((await endUser().get('/consent/gdpr', bearer(token))).status, 401, `GET /consent/gdpr accepted the ${kind}`);
      assert.equal((await endUser().post('/consent/gdpr', { consent_levels: ['analytics'] }, bearer(token))).status, 401, `POST /consent/gdpr accepted the ${kind}`);
      assert.equal((await endUser().put('/attributes/end_user_read_write', { taken: 'over' }, bearer(token))).status, 401, `PUT /attributes accepted the ${kind}`);
      assert.equal(await throughGate(token), 401, `Gate's validate-jwt admitted the ${kind}`);
      const revoke = await server.client.post('/token/revoke', { token });
      assert.equal(revoke.status, 400, `/token/revoke took the ${kind} for an identity token: ${revoke.text}`);
    }
    // nothing the tokens tried was written
    const attributes = expectResult(await server.client.get(`/persons/${person}/attributes/end_user_read_write`), 200);
    assert.equal(attributes.taken, undefined);
  });

  test('the identity token is not an access token: introspection and userinfo refuse it', async () => {
    const introspected = await form('/oauth2/tokens/introspect', { token: identity }, { Authorization: basic(machine.client_id, machine.client_secret) });
    assert.deepEqual(introspected.body, { active: false });
    const userinfo = await fetch(`${server.base}/oauth2/userinfo`, { headers: { authorization: `Bearer ${identity}` } });
    assert.equal(userinfo.status, 401);
  });

  test('a revoked grant\'s access token is accepted nowhere', async () => {
    const minted = expectResult<{ access_token: string }>(await server.client.post('/oauth2/tokens/mint', { person_id: person, client_id: web.client_id, scopes: ['openid'] }), 200);
    const revoked = await form('/oauth2/tokens/revoke-all', { person_id: person }, { Authorization: basic(web.client_id, web.client_secret) });
    assert.equal(revoked.status, 200, revoked.text);
    const introspected = await form('/oauth2/tokens/introspect', { token: minted.access_token }, { Authorization: basic(machine.client_id, machine.client_secret) });
    assert.deepEqual(introspected.body, { active: false });
    assert.equal((await validate(minted.access_token)).valid, false);
    assert.equal((await endUser().get('/consent/gdpr', bearer(minted.access_token))).status, 401);
    assert.equal(await throughGate(minted.access_token), 401);
    const userinfo = await fetch(`${server.base}/oauth2/userinfo`, { headers: { authorization: `Bearer ${minted.access_token}` } });
    assert.equal(userinfo.status, 401);
  });
});
