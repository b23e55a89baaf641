// The end-user routes a person calls with their own token: the organization is the token's. A Service-OrgID
// that names another one is a 403 naming both, on every method, and nothing is written; the token's own
// organization, or no header at all, is served as before.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { newOrg, type Org } from '../support/auth.js';
import { expectResult, offsets } from '../support/expect.js';
import { PERSON_TOKEN_ROUTES } from '../support/routes.js';
import { email, startTestServer, type Client, type TestServer } from '../support/server.js';

let server: TestServer;
let a: Org;
let b: Org;
let browser: Client;
let personB: string;
let tokenB: string;

/** A request for each end-user route, with the status it answers when served. */
const SAMPLES: Record<string, { path: string; body?: unknown; served: number }> = {
  'GET /consent/gdpr': { path: '/consent/gdpr', served: 200 },
  'PUT /consent/gdpr': { path: '/consent/gdpr', body: { consent_levels: ['analytics'] }, served: 200 },
  'POST /consent/gdpr': { path: '/consent/gdpr', body: { consent_levels: ['marketing'] }, served: 201 },
  'DELETE /consent/gdpr': { path: '/consent/gdpr', served: 204 },
  'GET /attributes/{bucket_name}': { path: '/attributes/end_user_read_write', served: 200 },
  'PUT /attributes/{bucket_name}': { path: '/attributes/end_user_read_write', body: { colour: 'red' }, served: 204 },
  'PATCH /attributes/{bucket_name}': { path: '/attributes/end_user_read_write', body: { size: 'L' }, served: 204 },
  'DELETE /attributes/{bucket_name}': { path: '/attributes/end_user_read_write', served: 204 },
};

before(async () => {
  server = await startTestServer();
  a = await newOrg(server, 'a');
  b = await newOrg(server, 'b');
  browser = server.client.as('', '');
  // Both organizations hold a person, so a request served for the wrong one would show in either.
  const personA = expectResult(await a.admin.post('/persons', email('ada@example.com')), 201).person_id as string;
  expectResult(await a.admin.post(`/persons/${personA}/mint-token`), 201);
  personB = expectResult(await b.admin.post('/persons', email('bea@example.com')), 201).person_id as string;
  tokenB = expectResult(await b.admin.post(`/persons/${personB}/mint-token`), 201) as string;
  const kept = await b.admin.put(`/persons/${personB}/attributes/end_user_read_write`, { kept: true });
  assert.equal(kept.status, 204, kept.text);
  assert.equal((await b.admin.put(`/persons/${personB}/consent/gdpr`, { consent_levels: ['necessary'] })).status, 200);
});
after(() => server.stop());

test('the samples cover every route a person calls with their own token', () => {
  assert.deepEqual(Object.keys(SAMPLES).sort(), [...PERSON_TOKEN_ROUTES].sort());
});

test("a Service-OrgID other than the token's organization: 403 naming both, on every method, nothing written", async () => {
  const read = async () => ({
    attributes: (await b.admin.get(`/persons/${personB}/attributes`)).body.result,
    consents: (await b.admin.get(`/persons/${personB}/consent/gdpr`)).body.result,
  });
  const before = await read();
  for (const [name, s] of Object.entries(SAMPLES)) {
    const [method] = name.split(' ') as [string];
    // Another organization that exists, one that does not, and a value outside the header's grammar.
    for (const orgId of [a.id, 'no-such-org', 'not an org id']) {
      const walBefore = offsets(server);
      const r = await browser.request(method, s.path, s.body, { Authorization: `Bearer ${tokenB}`, 'Service-OrgID': orgId });
      assert.equal(r.status, 403, `${name} with Service-OrgID ${orgId}: ${r.text}`);
      const message = r.body.errors[0].message as string;
      assert.match(message, /^Service-OrgID: /, name);
      assert.ok(message.includes(JSON.stringify(orgId)) && message.includes(JSON.stringify(b.id)), `${name}: ${message}`);
      assert.deepEqual(offsets(server), walBefore, `${name}: a WAL entry was written`);
    }
  }
  assert.deepEqual(await read(), before, "the token's person is unchanged");
});

test("the token's own organization in Service-OrgID, or none, is served", async () => {
  for (const headers of [{ 'Service-OrgID': b.id }, {}] as Array<Record<string, string>>) {
    for (const [name, s] of Object.entries(SAMPLES)) {
      const [method] = name.split(' ') as [string];
      const r = await browser.request(method, s.path, s.body, { Authorization: `Bearer ${tokenB}`, ...headers });
      assert.equal(r.status, s.served, `${name} ${JSON.stringify(headers)}: ${r.text}`);
    }
  }
});
