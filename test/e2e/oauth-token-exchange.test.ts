// Token exchange (RFC 8693) on the real server, with openid-client as the exchanging client: a person's access
// token and an identity token exchanged for a narrower access token for another audience, delegation with an
// actor token (act), and the refusals oidc-provider's tests make: a target the policy does not allow, a token
// of the wrong kind, a revoked or foreign subject, a wider scope, a client without a policy.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, createLocalJWKSet, decodeJwt, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import { expectResult } from '../support/expect.js';
import { movableClock } from '../support/clock.js';
import { newOrg, personWithPassword, type Org } from '../support/auth.js';
import { startTestServer, type TestServer } from '../support/server.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const ID = 'urn:ietf:params:oauth:token-type:id_token';
const ORDERS = 'https://orders.example.com/';
const STOCK = 'https://stock.example.com/';

interface Registered {
  client_id: string;
  client_secret: string;
}

describe('token exchange (RFC 8693)', () => {
  const clock = movableClock();
  let server: TestServer;
  let org: Org;
  let other: Org;
  let personId: string;
  /** the application the person signed in to: its tokens are the subjects */
  let app: Registered;
  /** the API that exchanges them to call the orders service */
  let gateway: Registered;
  /** a client with the grant type but no policy */
  let bare: Registered;

  const configFor = (c: Registered) =>
    oidc.discovery(new URL(server.base), c.client_id, undefined, oidc.ClientSecretBasic(c.client_secret), { execute: [oidc.allowInsecureRequests] });
  /** openid-client's answer, or its RFC 6749 5.2 error */
  const exchange = async (by: Registered, params: Record<string, string>) => {
    try {
      return { ok: true as const, tokens: await oidc.genericGrantRequest(await configFor(by), GRANT, params) };
    } catch (error) {
      if (!(error instanceof oidc.ResponseBodyError)) throw error;
      return { ok: false as const, status: error.status, error: error.error, description: error.error_description ?? '' };
    }
  };
  const refused = (r: Awaited<ReturnType<typeof exchange>>, error: string, mention: RegExp) => {
    assert.equal(r.ok, false, 'the exchange should be refused');
    if (r.ok) return;
    assert.equal(r.status, 400);
    assert.equal(r.error, error, r.description);
    assert.match(r.description, mention);
  };
  /** a person's access token of the app, as a sign-in would give */
  const personToken = async (scopes = ['orders.read', 'orders.write']) =>
    expectResult<{ access_token: string }>(await org.admin.post('/oauth2/tokens/mint', { person_id: personId, client_id: app.client_id, scopes }), 200).access_token;

  before(async () => {
    server = await startTestServer({}, { clock });
    org = await newOrg(server, 'Exchange Org');
    other = await newOrg(server, 'Other Org');
    personId = await personWithPassword(org, 'ada@example.com', 'correct horse battery staple');
    app = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'app', scopes: ['orders.read', 'orders.write'], grant_types: ['client_credentials'] }), 201);
    gateway = expectResult(
      await org.admin.post('/oauth2/clients', {
        client_name: 'gateway',
        scopes: ['orders.read'],
        grant_types: ['client_credentials', GRANT],
        token_exchange: { audiences: [ORDERS], subject_clients: [app.client_id], identity_tokens: true },
      }),
      201,
    );
    bare = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'bare', scopes: [], grant_types: [GRANT] }), 201);
  });
  after(() => server.stop());

  test('the client shows its policy; discovery lists the grant type', async () => {
    const shown = expectResult(await org.admin.get(`/oauth2/clients/${gateway.client_id}`), 200);
    assert.deepEqual(shown.token_exchange, { audiences: [ORDERS], subject_clients: [app.client_id], identity_tokens: true });
    assert.equal(expectResult(await org.admin.get(`/oauth2/clients/${app.client_id}`), 200).token_exchange, undefined);
    const config = await configFor(gateway);
    assert.ok(config.serverMetadata().grant_types_supported?.includes(GRANT));
  });

  test("a person's access token becomes a narrower token for the orders service, verified by the published keys", async () => {
    const subject = await personToken();
    const r = await exchange(gateway, { subject_token: subject, subject_token_type: ACCESS, audience: ORDERS, scope: 'orders.read' });
    assert.ok(r.ok, r.ok ? '' : `${r.error}: ${r.description}`);
    assert.equal(r.tokens.issued_token_type, ACCESS);
    assert.equal(r.tokens.token_type.toLowerCase(), 'bearer');
    assert.equal(r.tokens.scope, 'orders.read');
    const jwks = createLocalJWKSet((await server.client.as('', '').get('/.well-known/jwks.json')).body);
    const { payload, protectedHeader } = await jwtVerify(r.tokens.access_token, jwks, { issuer: server.base, audience: ORDERS, typ: 'at+jwt' });
    assert.equal(protectedHeader.typ, 'at+jwt');
    assert.equal(payload.sub, personId);
    assert.equal(payload['client_id'], gateway.client_id);
    assert.equal(payload['act'], undefined, 'no actor token: no act');
    assert.equal(payload['sid'], decodeJwt(subject)['sid'], "the person's grant it descends from");
    assert.ok((payload.exp as number) <= (decodeJwt(subject).exp as number), 'never outlives the subject token');
  });

  test('delegation: the actor token names the gateway in act, nested below it the chain of earlier actors', async () => {
    const subject = await personToken();
    // The gateway names itself with its own token, which its policy need not list.
    const gatewayToken = (await oidc.clientCredentialsGrant(await configFor(gateway), {})).access_token;
    const first = await exchange(gateway, { subject_token: subject, subject_token_type: ACCESS, actor_token: gatewayToken, actor_token_type: ACCESS, audience: ORDERS });
    assert.ok(first.ok, first.ok ? '' : first.description);
    const claims = decodeJwt(first.tokens.access_token);
    assert.deepEqual(claims['act'], { sub: gateway.client_id, client_id: gateway.client_id });
    assert.equal(claims.sub, personId);
    assert.equal(claims['scope'], 'orders.read orders.write', "no scope asked: the subject's");

    // The orders service passes the person on to the stock service, acting in turn: the gateway is nested below it.
    const orders: Registered = expectResult(
      await org.admin.post('/oauth2/clients', { client_name: 'orders', scopes: [], grant_types: ['client_credentials', GRANT], token_exchange: { audiences: [STOCK], subject_clients: [gateway.client_id] } }),
      201,
    );
    const ordersToken = (await oidc.clientCredentialsGrant(await configFor(orders), {})).access_token;
    const second = await exchange(orders, { subject_token: first.tokens.access_token, subject_token_type: ACCESS, actor_token: ordersToken, actor_token_type: ACCESS, resource: STOCK, scope: 'orders.read' });
    assert.ok(second.ok, second.ok ? '' : second.description);
    const chained = decodeJwt(second.tokens.access_token);
    assert.equal(chained.sub, personId);
    assert.equal(chained.aud, STOCK);
    assert.deepEqual(chained['act'], { sub: orders.client_id, client_id: orders.client_id, act: { sub: gateway.client_id, client_id: gateway.client_id } });

    // Another client's token as actor needs the policy: the app's is listed, a stranger's is not.
    const stranger: Registered = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'stranger', scopes: [], grant_types: ['client_credentials'] }), 201);
    const strangerToken = (await oidc.clientCredentialsGrant(await configFor(stranger), {})).access_token;
    refused(await exchange(gateway, { subject_token: subject, subject_token_type: ACCESS, actor_token: strangerToken, actor_token_type: ACCESS, audience: ORDERS }), 'invalid_request', /actor_token: .*does not take tokens of client/);
    refused(await exchange(gateway, { subject_token: subject, subject_token_type: ACCESS, actor_token: gatewayToken, audience: ORDERS }), 'invalid_request', /actor_token_type is required/);
  });

  test('an expired subject token is refused; the exchanged token never outlives its subject', async () => {
    const subject = await personToken();
    const r = await exchange(gateway, { subject_token: subject, subject_token_type: ACCESS, audience: ORDERS });
    assert.ok(r.ok);
    assert.ok((decodeJwt(r.tokens.access_token).exp as number) <= (decodeJwt(subject).exp as number));
    clock.advance(3601_000);
    refused(await exchange(gateway, { subject_token: subject, subject_token_type: ACCESS, audience: ORDERS }), 'invalid_request', /not an active access token/);
  });

  test("an identity token of the organization's person is exchanged when the policy takes them; it has no scope, so the client's applies", async () => {
    const identity = expectResult<string>(await org.admin.post(`/persons/${personId}/mint-token`), 201);
    const r = await exchange(gateway, { subject_token: identity, subject_token_type: ID, resource: ORDERS });
    assert.ok(r.ok, r.ok ? '' : r.description);
    const claims = decodeJwt(r.tokens.access_token);
    assert.equal(claims.sub, personId);
    assert.equal(claims.aud, ORDERS);
    assert.equal(claims['scope'], 'orders.read');
  });

  test('an audience the policy does not list is invalid_target; none at all is invalid_request', async () => {
    const subject = await personToken();
    refused(await exchange(gateway, { subject_token: subject, subject_token_type: ACCESS, audience: 'https://payroll.example.com/' }), 'invalid_target', /not an audience the client's token exchange policy allows/);
    refused(await exchange(gateway, { subject_token: subject, subject_token_type: ACCESS, audience: ORDERS, resource: 'https://payroll.example.com/' }), 'invalid_target', /different targets/);
    refused(await exchange(gateway, { subject_token: subject, subject_token_type: ACCESS }), 'invalid_request', /audience or resource is required/);
    refused(await exchange(bare, { subject_token: subject, subject_token_type: ACCESS, audience: ORDERS }), 'invalid_target', /policy/);
  });

  test('a token of the wrong kind is refused: an access token declared an identity token, and the other way round', async () => {
    const subject = await personToken();
    const identity = expectResult<string>(await org.admin.post(`/persons/${personId}/mint-token`), 201);
    refused(await exchange(gateway, { subject_token: subject, subject_token_type: ID, audience: ORDERS }), 'invalid_request', /not a valid identity token/);
    refused(await exchange(gateway, { subject_token: identity, subject_token_type: ACCESS, audience: ORDERS }), 'invalid_request', /not an active access token/);
    refused(await exchange(gateway, { subject_token: subject, subject_token_type: 'urn:ietf:params:oauth:token-type:saml2', audience: ORDERS }), 'invalid_request', /subject_token_type: must be/);
    refused(await exchange(gateway, { subject_token: subject, audience: ORDERS }), 'invalid_request', /subject_token_type is required/);
    refused(await exchange(gateway, { subject_token: 'not.a.token', subject_token_type: ACCESS, audience: ORDERS }), 'invalid_request', /not an active access token/);
  });

  test('a revoked subject token, or one whose grant was revoked, is refused; so is a revoked identity token', async () => {
    const subject = await personToken();
    const revoke = await fetch(`${server.base}/oauth2/tokens/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}` },
      body: new URLSearchParams({ token: subject }).toString(),
    });
    assert.equal(revoke.status, 200);
    refused(await exchange(gateway, { subject_token: subject, subject_token_type: ACCESS, audience: ORDERS }), 'invalid_request', /revoked/);

    const identity = expectResult<string>(await org.admin.post(`/persons/${personId}/mint-token`), 201);
    assert.equal((await org.admin.post('/token/revoke', { token: identity })).status, 204);
    refused(await exchange(gateway, { subject_token: identity, subject_token_type: ID, audience: ORDERS }), 'invalid_request', /not a valid identity token/);
  });

  test("an exchanged token ends with the person's grant it descends from", async () => {
    const subject = await personToken();
    const r = await exchange(gateway, { subject_token: subject, subject_token_type: ACCESS, audience: ORDERS });
    assert.ok(r.ok);
    const introspect = async (token: string) =>
      (await fetch(`${server.base}/oauth2/tokens/introspect`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}` },
        body: new URLSearchParams({ token }).toString(),
      }).then((res) => res.json())) as { active: boolean };
    assert.equal((await introspect(r.tokens.access_token)).active, true);
    const revokeAll = await fetch(`${server.base}/oauth2/tokens/revoke-all`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}` },
      body: new URLSearchParams({ person_id: personId }).toString(),
    });
    assert.equal(revokeAll.status, 200);
    assert.equal((await introspect(r.tokens.access_token)).active, false);
  });

  test("the subject's client must be in the policy, and in the same organization; a wider scope is invalid_scope", async () => {
    const own = (await oidc.clientCredentialsGrant(await configFor(gateway), {})).access_token;
    refused(await exchange(gateway, { subject_token: own, subject_token_type: ACCESS, audience: ORDERS }), 'invalid_request', /does not take tokens of client/);
    const foreignClient: Registered = expectResult(await other.admin.post('/oauth2/clients', { client_name: 'foreign', scopes: ['orders.read'], grant_types: ['client_credentials'] }), 201);
    const foreign = (await oidc.clientCredentialsGrant(await configFor(foreignClient), {})).access_token;
    refused(await exchange(gateway, { subject_token: foreign, subject_token_type: ACCESS, audience: ORDERS }), 'invalid_request', /of this organization/);
    const subject = await personToken(['orders.read']);
    refused(await exchange(gateway, { subject_token: subject, subject_token_type: ACCESS, audience: ORDERS, scope: 'orders.read orders.write' }), 'invalid_scope', /orders\.write/);
  });

  test('registration: a public client may not exchange, a policy needs the grant type, and dropping the grant type drops the policy', async () => {
    const pub = await org.admin.post('/oauth2/clients', { client_name: 'pub', scopes: [], grant_types: [GRANT], public: true });
    assert.equal(pub.status, 400);
    assert.match(pub.text, /public client .* token exchange/);
    const noGrant = await org.admin.post('/oauth2/clients', { client_name: 'x', scopes: [], grant_types: ['client_credentials'], token_exchange: { audiences: [ORDERS], subject_clients: [] } });
    assert.equal(noGrant.status, 400);
    assert.match(noGrant.text, /token_exchange: needs/);
    const c = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'y', scopes: [], grant_types: ['client_credentials', GRANT], token_exchange: { audiences: [ORDERS], subject_clients: [] } }), 201);
    assert.deepEqual(c.token_exchange, { audiences: [ORDERS], subject_clients: [], identity_tokens: false });
    // a change of how it authenticates keeps the policy
    const { publicKey } = await generateKeyPair('ES256', { extractable: true });
    const signing = expectResult(await org.admin.patch(`/oauth2/clients/${c.client_id}`, { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [await exportJWK(publicKey)] } }), 200);
    assert.deepEqual([signing.token_endpoint_auth_method, signing.token_exchange], ['private_key_jwt', { audiences: [ORDERS], subject_clients: [], identity_tokens: false }]);
    const patched = expectResult(await org.admin.patch(`/oauth2/clients/${c.client_id}`, { grant_types: ['client_credentials'] }), 200);
    assert.equal(patched.token_exchange, undefined);
  });

  test('with a DPoP proof the exchanged token is bound to the proof\'s key (RFC 9449 5), as every grant\'s token is', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(publicKey);
    const url = `${server.base}/oauth2/tokens`;
    // the proof's iat on the server's clock, which earlier tests moved
    const proof = await new SignJWT({ jti: randomUUID(), htm: 'POST', htu: url, iat: Math.floor(clock.nowMs() / 1000) }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).sign(privateKey);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${gateway.client_id}:${gateway.client_secret}`).toString('base64')}`, DPoP: proof },
      body: new URLSearchParams({ grant_type: GRANT, subject_token: await personToken(['orders.read']), subject_token_type: ACCESS, audience: ORDERS }).toString(),
    });
    const body = (await res.json()) as { access_token: string; token_type: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.token_type, 'DPoP');
    assert.deepEqual(decodeJwt(body.access_token)['cnf'], { jkt: await calculateJwkThumbprint(jwk) });
  });
});
