// The organization's token template through the real server: its claims in mint-token and password sign-in
// tokens and the OAuth ID token (verified against the published keys), the refusals at PUT, JSON escaping of values, a rendering
// that fails for one person, and removal.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { Browser } from '../support/oauth-browser.js';
import { newOrg, personWithPassword, signIn, verifyIdentityToken, type Org } from '../support/auth.js';
import { expectError, expectNoContent, expectResult } from '../support/expect.js';
import { removeDir, startTestServer, type TestServer } from '../support/server.js';

const PASSWORD = 'correct horse battery';
const PATH = '/organizations/config/token-template';

describe('the token template', () => {
  let server: TestServer;
  const warnings: string[] = [];
  before(async () => {
    server = await startTestServer({}, { warn: (m) => warnings.push(m) });
  });
  after(async () => {
    await server.stop();
    removeDir(server.dataDir);
  });

  async function mint(org: Org, personId: string, body: unknown = {}) {
    const r = await org.admin.post(`/persons/${personId}/mint-token`, body);
    assert.equal(r.status, 201, r.text);
    return verifyIdentityToken(server, r.body.result as string);
  }

  async function signedIn(org: Org, email: string) {
    const r = await signIn(org, email, PASSWORD);
    assert.equal(r.status, 200, r.text);
    return verifyIdentityToken(server, r.body.result.token as string);
  }

  const put = (org: Org, content: string) => org.admin.put(PATH, { content });

  test('its claims reach mint-token and sign-in tokens; removed, they are gone', async () => {
    const org = await newOrg(server, 'Acme');
    assert.deepEqual(expectResult(await org.admin.get(PATH), 200), { content: '' });
    assert.equal((await org.admin.post('/groups', { name: 'staff' })).status, 201);
    const id = await personWithPassword(org, 'ada@example.com', PASSWORD);
    assert.equal((await org.admin.put(`/persons/${id}/groups`, { groups: ['staff'] })).status, 200);
    assert.equal((await org.admin.put(`/persons/${id}/attributes/end_user_read_only`, { tier: 'gold', score: 7 })).status, 204);
    assert.equal((await org.admin.put(`/persons/${id}/attributes/end_user_no_access`, { secret: 'hidden' })).status, 204);

    const template = [
      '{',
      '  "org_name": "{{organization.name}}",',
      '  "pid": "{{person.person_id}}",',
      '  "home": "{{person.region}}",',
      '  "email": "{{#person.handles}}{{#value}}{{value}}{{/value}}{{/person.handles}}",',
      '  "teams": {{person.groups}},',
      '  "tier": "{{person.attributes.end_user_read_only.tier}}",',
      '  "score": {{person.attributes.end_user_read_only.score}}{{^person.attributes.end_user_read_only.score}}0{{/person.attributes.end_user_read_only.score}},',
      '  "secret": "{{person.attributes.end_user_no_access.secret}}"',
      '}',
    ].join('\n');
    expectNoContent(await put(org, template));
    assert.deepEqual(expectResult(await org.admin.get(PATH), 200), { content: template });

    const expected = { org_name: 'Acme', pid: id, email: 'ada@example.com', teams: ['staff'], tier: 'gold', score: 7, secret: '' };
    for (const claims of [await mint(org, id), await signedIn(org, 'ada@example.com')]) {
      for (const [name, value] of Object.entries(expected)) assert.deepEqual(claims[name], value, name);
      assert.equal(claims['home'], claims['region']);
      assert.deepEqual(claims['groups'], ['staff'], 'the token still carries its own groups claim');
    }

    // The API's custom claims win over the template's of the same name.
    assert.equal((await mint(org, id, { custom_claims: { tier: 'platinum' } }))['tier'], 'platinum');

    expectNoContent(await put(org, '  \n'));
    assert.deepEqual(expectResult(await org.admin.get(PATH), 200), { content: '' });
    for (const claims of [await mint(org, id), await signedIn(org, 'ada@example.com')]) {
      for (const name of Object.keys(expected)) assert.equal(name in claims, false, name);
    }
  });

  test('its claims reach the OAuth ID token of the authorization code flow, not the access token', async () => {
    const org = await newOrg(server);
    const id = await personWithPassword(org, 'di@example.com', PASSWORD);
    expectNoContent(await put(org, '{"pid_again": "{{person.person_id}}", "org_name": "{{organization.name}}"}'));
    const redirect = 'https://app.example/cb';
    const client = expectResult(await org.admin.post('/oauth2/clients', { client_name: 'Web app', scopes: ['openid'], grant_types: ['authorization_code'], redirect_uris: [redirect] }), 201);
    const config = await oidc.discovery(new URL(server.service.issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: redirect, scope: 'openid', state, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const browser = new Browser();
    try {
      const done = await browser.signIn(await browser.get(url), server.base, 'di@example.com', PASSWORD);
      assert.equal(done.status, 302, done.html);
      const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location as string), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
      const claims = tokens.claims();
      assert.equal(claims?.['pid_again'], id);
      assert.equal(claims?.['org_name'], 'test');
      const jwks = createLocalJWKSet((await server.client.get('/.well-known/jwks.json')).body);
      const { payload: access } = await jwtVerify(tokens.access_token, jwks, { issuer: server.service.issuer, typ: 'at+jwt' });
      assert.equal(access.sub, id);
      assert.equal('pid_again' in access, false);
    } finally {
      await browser.close();
    }
  });

  test('reserved claim names are refused at PUT, the groups claim name among them', async () => {
    const org = await newOrg(server);
    await personWithPassword(org, 'bo@example.com', PASSWORD);
    for (const reserved of ['sub', 'groups', 'person_id', 'exp']) {
      expectError(await put(org, `{"plan": "pro", "${reserved}": "forged"}`), 400, `"${reserved}"`, 'reserved');
    }
    assert.equal((await org.admin.patch('/organizations/config', { groups_claim_name: 'teams' })).status, 200);
    expectError(await put(org, '{"teams": {{person.groups}}}'), 400, '"teams"', 'reserved');
    assert.deepEqual(expectResult(await org.admin.get(PATH), 200), { content: '' }, 'nothing was stored');
  });

  test('a template rendering invalid JSON is refused with its line; so are unescaped tags and bad syntax', async () => {
    const org = await newOrg(server);
    expectError(await put(org, '{\n  "a": "{{person.person_id}}",\n  "b": \n}'), 400, 'invalid JSON', 'line 4');
    expectError(await put(org, '{\n  "a": 1,\n  "b": 2,\n}'), 400, 'invalid JSON', 'line 4');
    // A trailing comma only a person with groups renders.
    expectError(await put(org, '{\n "g": [{{#person.groups}}"{{.}}",{{/person.groups}}]\n}'), 400, 'invalid JSON', 'line 2', 'sample person');
    expectError(await put(org, '["not", "an", "object"]'), 400, 'not an object');
    expectError(await put(org, '{"a": "{{{person.person_id}}}"}'), 400, 'unescaped');
    expectError(await put(org, '{"a": "{{&person.person_id}}"}'), 400, 'unescaped');
    expectError(await put(org, '{"a": "{{#person.groups}}"}'), 400, 'Mustache');
    assert.deepEqual(expectResult(await org.admin.get(PATH), 200), { content: '' }, 'nothing was stored');
  });

  test('values are JSON-escaped: a handle with a quote cannot break out of its string', async () => {
    const org = await newOrg(server);
    const hostile = 'eve","sub":"admin","x":"\\@example.com';
    const created = await org.admin.post('/persons', { handles: [{ type: 'username', value: hostile }] });
    assert.equal(created.status, 201, created.text);
    const id = created.body.result.person_id as string;
    expectNoContent(await put(org, '{"name": "{{#person.handles}}{{value}}{{/person.handles}}"}'));
    const claims = await mint(org, id);
    assert.equal(claims['name'], hostile);
    assert.equal(claims['sub'], id);
    assert.equal(claims['x'], undefined);
  });

  test("an end user's own object in a writable bucket, written inside a string, is its JSON text there: the template's other claims stay", async () => {
    const org = await newOrg(server);
    const id = await personWithPassword(org, 'obj@example.com', PASSWORD);
    expectNoContent(await put(org, '{"nick": "{{person.attributes.end_user_read_write.nick}}", "tenant": "{{organization.id}}", "friends": {{person.attributes.end_user_read_write.friends}}{{^person.attributes.end_user_read_write.friends}}[]{{/person.attributes.end_user_read_write.friends}}}'));
    // the person writes the bucket themselves, with their own identity token
    const own = (await signIn(org, 'obj@example.com', PASSWORD)).body.result.token as string;
    const wrote = await server.client.as('', '').put('/attributes/end_user_read_write', { nick: { a: 1, '"': '\\' }, friends: ['ann', { b: '"' }] }, { Authorization: `Bearer ${own}` });
    assert.equal(wrote.status, 204, wrote.text);
    const before = warnings.length;
    const claims = await mint(org, id);
    assert.equal(claims['tenant'], org.id, 'the template\'s claims were all dropped');
    assert.equal(claims['nick'], JSON.stringify({ a: 1, '"': '\\' }));
    // outside a string an array or object is still written as JSON
    assert.deepEqual(claims['friends'], ['ann', { b: '"' }]);
    assert.equal(warnings.length, before);
  });

  test('a template writing a value right after a backslash inside a string is refused: the backslash would escape the value', async () => {
    const org = await newOrg(server);
    expectError(await put(org, '{"path": "C:\\\\{{person.person_id}}", "bad": "x\\{{person.person_id}}"}'), 400, 'backslash');
  });

  test('at issue time a failing rendering leaves the token without the claims and warns; a reserved name only a person renders is dropped', async () => {
    const org = await newOrg(server);
    const id = await personWithPassword(org, 'cy@example.com', PASSWORD);
    // Valid for the sample persons (who have no "flag" attribute); invalid for a person who has one.
    expectNoContent(await put(org, '{"plan": "pro" {{#person.attributes.end_user_read_write.flag}}oops{{/person.attributes.end_user_read_write.flag}}}'));
    assert.equal((await mint(org, id))['plan'], 'pro');
    assert.equal((await org.admin.put(`/persons/${id}/attributes/end_user_read_write`, { flag: true })).status, 204);
    const before = warnings.length;
    const claims = await signedIn(org, 'cy@example.com');
    assert.equal(claims['sub'], id, 'the sign-in succeeds');
    assert.equal('plan' in claims, false);
    assert.ok(warnings.slice(before).some((w) => w.includes(org.id) && w.includes('token template') && w.includes('invalid JSON')), warnings.join('\n'));

    expectNoContent(await put(org, '{"plan": "pro", "{{person.attributes.end_user_read_write.name}}": "forged"}'));
    assert.equal((await org.admin.put(`/persons/${id}/attributes/end_user_read_write`, { name: 'sub' })).status, 204);
    const dropped = await mint(org, id);
    assert.equal(dropped['sub'], id);
    assert.equal(dropped['plan'], 'pro');
  });
});
