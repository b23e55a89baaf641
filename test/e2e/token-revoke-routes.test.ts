// A revoked identity token is refused by every route that accepts a person's token, not only /token/validate:
// the end-user routes, the SDK's events, the anonymous upgrade; and so it stays after a restart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { expectNoContent } from '../support/expect.js';
import { removeDir, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { newOrg, personWithPassword, sameOrgOn, signIn, type Org } from '../support/auth.js';
import { PERSON_TOKEN_ROUTES } from '../support/routes.js';

const dir = tempDir();
const env = { SERVICE_ISSUER: 'https://id.example' };
let server: TestServer;
let org: Org;
let person: string;
let revoked: string;
let anonymousRevoked: string;

before(async () => {
  server = await startTestServer(env, {}, dir);
  org = await newOrg(server, 'revocation');
  person = await personWithPassword(org, 'ada@example.com', 'correct horse battery staple');
  const signedIn = await signIn(org, 'ada@example.com', 'correct horse battery staple');
  assert.equal(signedIn.status, 200, signedIn.text);
  revoked = signedIn.body.result.token as string;
  const anonymous = await org.user.post('/persons/anonymous', {});
  assert.equal(anonymous.status, 201, anonymous.text);
  anonymousRevoked = anonymous.body.result as string;
});
after(async () => {
  await server.stop();
  removeDir(dir);
});

const bearer = (token: string) => ({ Authorization: `Bearer ${token}`, 'Service-OrgID': '', 'Service-API-Key': '' });

/** Every route taking a person's token, with that token: [what, status]. */
async function answers(token: string): Promise<Array<[string, number]>> {
  const out: Array<[string, number]> = [];
  for (const route of PERSON_TOKEN_ROUTES) {
    const [method, template] = route.split(' ') as [string, string];
    const path = template.replace('{bucket_name}', 'end_user_read_write');
    const body = method === 'GET' || method === 'DELETE' ? undefined : path.startsWith('/consent') ? { consent_levels: ['analytics'] } : { color: 'teal' };
    out.push([route, (await server.client.request(method, path, body, bearer(token))).status]);
  }
  const sdk = await server.client.request(
    'POST',
    '/actions/sdk',
    { organization_id: org.id, analytics_correlation_id: randomUUID(), window_location: 'https://shop.example/', user_agent: 'test', event_data: { event_name: 'VirtualPageLoaded_v1', person_id: person } },
    bearer(token),
  );
  out.push(['POST /actions/sdk', sdk.status]);
  return out;
}

describe('a revoked identity token', () => {
  test('works everywhere before it is revoked', async () => {
    for (const [route, status] of await answers(revoked)) assert.ok(status < 300, `${route} answered ${status}`);
  });

  test('is refused with a 401 by every route that takes a person\'s token once revoked', async () => {
    expectNoContent(await org.admin.post('/token/revoke', { token: revoked }));
    for (const [route, status] of await answers(revoked)) assert.equal(status, 401, route);
    assert.equal((await server.client.post('/token/validate', { token: revoked })).body.result.revoked, true);
  });

  test('a revoked anonymous token cannot be upgraded by registration (400), and the person it named stays anonymous', async () => {
    expectNoContent(await org.admin.post('/token/revoke', { token: anonymousRevoked }));
    const r = await org.user.post('/register/password', { handle: { type: 'email_address', value: 'grace@example.com' }, password: 'another good passphrase' }, { Authorization: `Bearer ${anonymousRevoked}` });
    assert.equal(r.status, 400, r.text);
  });

  test('after a restart it is refused the same way', async () => {
    await server.stop();
    server = await startTestServer(env, {}, dir);
    org = sameOrgOn(server, org);
    for (const [route, status] of await answers(revoked)) assert.equal(status, 401, route);
  });
});
