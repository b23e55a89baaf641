// Every write whose path names a person answers 404 naming them when they do not exist, whatever the body,
// the query or the consistency headers hold, and writes nothing: the table is every such route the service
// serves (from its OpenAPI document), each with its sample request, an empty body, a wrong one and none.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectBare, expectResult, unchanged } from '../support/expect.js';
import { routeCases, type RouteCase } from '../support/routes.js';
import { email, startTestServer, type Client, type Reply, type TestServer } from '../support/server.js';

let server: TestServer;
let c: Client;
let person: string;
let cases: RouteCase[];

before(async () => {
  server = await startTestServer();
  c = server.client;
  expectBare(await c.post('/groups', { name: 'staff' }), 201);
  person = expectResult(await c.post('/persons', { ...email('present@example.com'), groups: ['staff'] }), 201).person_id;
  cases = routeCases({ person, group: 'staff', webhook: 'unused' });
});
after(() => server.stop());

/** Ids no person has; the encoded ones must not reach another route or a file (a%2Fb, %00, ..%2F..%2Fhealth). */
const GHOSTS = ['0190e0c5-0000-7000-8000-000000000000', 'no-such-person', 'a/b', '\0', '../../health', '%', ' '];

const BODIES: Array<[string, unknown]> = [
  ['no body', undefined],
  ['{}', {}],
  ['[]', []],
  ['a number', 7],
  ['malformed JSON', '{"unterminated'],
];

test('every person-scoped write: 404 naming the person when they do not exist, whatever the body, and nothing written', async () => {
  const doc = (await c.get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops)
      .filter((m) => ['post', 'put', 'patch', 'delete'].includes(m) && path.includes('{person_id}'))
      .map((m) => `${m.toUpperCase()} ${path}`),
  );
  assert.ok(routes.length >= 20, `only ${routes.length} person-scoped writes: ${routes.join(', ')}`);
  await unchanged(c, async () => {
    for (const name of routes) {
      const sample = cases.find((r) => `${r.method} ${r.route}` === name);
      if (sample === undefined) assert.fail(`${name}: no sample request in test/support/routes.ts`);
      for (const ghost of GHOSTS) {
        const path: string = sample.path.replace(encodeURIComponent(person), encodeURIComponent(ghost));
        for (const [label, body] of [['its sample body', sample.body] as [string, unknown], ...BODIES]) {
          const r: Reply = await c.request(sample.method, path, body, { ...sample.headers, 'Service-Required-Consistency': 'all_regions' });
          const what: string = `${name} ${path} with ${label}`;
          assert.equal(r.status, 404, `${what}: ${r.text}`);
          assert.equal(r.body.errors?.[0]?.message, `person ${JSON.stringify(ghost)} not found`, what);
        }
      }
    }
  }, server);
});

test('the multi-bucket writes of the report: PUT and PATCH /persons/{id}/attributes with {} for a missing person', async () => {
  for (const id of ['nobody', 'a%2Fb', '%00', '..%2F..%2Fhealth']) {
    for (const method of ['PUT', 'PATCH']) {
      const r = await c.request(method, `/persons/${id}/attributes`, {});
      assert.equal(r.status, 404, `${method} ${id}: ${r.text}`);
      assert.match(r.body.errors[0].message, /^person ".*" not found$/);
    }
  }
  // The person who exists is still served.
  assert.equal((await c.put(`/persons/${person}/attributes`, {})).status, 204);
});

test('writes that name the person in the body: 404 naming them too', async () => {
  const client = expectResult(await c.post('/oauth2/clients', { client_name: 'mint', scopes: ['a'], grant_types: ['client_credentials'] }), 201).client_id as string;
  await unchanged(c, async () => {
    for (const [path, body] of [
      ['/groups/staff/persons', { persons: [person, 'nobody'] }],
      ['/oauth2/tokens/mint', { person_id: 'nobody', client_id: client }],
    ] as const) {
      const r = await c.post(path, body);
      assert.equal(r.status, 404, `${path}: ${r.text}`);
      assert.equal(r.body.errors[0].message, 'person "nobody" not found');
    }
  }, server);
});
