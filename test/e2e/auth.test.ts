// Service-OrgID and Service-API-Key on every route, in the contract's order: 400, 404, 401, 403.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectNoContent, expectResult, offsets, unchanged } from '../support/expect.js';
import { routeCases, type RouteCase } from '../support/routes.js';
import { Client, ROOT_KEY, ROOT_ORG, email, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let root: Client;
let sub: { id: string; api_key: string };
let cases: RouteCase[];

before(async () => {
  server = await startTestServer();
  root = server.client;
  sub = expectResult(await root.post('/organizations/suborganizations', { sub_org_name: 'other' }), 200);
  const person = expectResult(await root.post('/persons', email('ada@example.com')), 201);
  expectNoContent(await root.put(`/persons/${person.person_id}/attributes/end_user_read_write`, { a: 1 }));
  await root.post('/groups', { name: 'staff' });
  await root.put(`/persons/${person.person_id}/groups`, { groups: ['staff'] });
  await root.put('/organizations/attributes/end_user_read_only', { plan: 'pro' });
  const webhook = expectResult(await root.post('/organizations/webhooks', { name: 'auth', target_url: 'https://hooks.example.com/auth' }), 201).id;
  cases = routeCases({ person: person.person_id, group: 'staff', webhook });
});
after(() => server.stop());

const call = (client: Client, r: RouteCase, headers: Record<string, string> = {}) => client.request(r.method, r.path, r.body, { ...r.headers, ...headers });
const label = (r: RouteCase) => `${r.method} ${r.route}`;

/** Each check runs on every route: none may write anything, and the organization reads back the same. */
async function sweep(check: (r: RouteCase) => Promise<void>): Promise<void> {
  await unchanged(
    root,
    async () => {
      for (const r of cases) {
        const before = offsets(server);
        try {
          await check(r);
          assert.deepEqual(offsets(server), before, 'a WAL entry was written');
        } catch (error) {
          (error as Error).message = `${label(r)}: ${(error as Error).message}`;
          throw error;
        }
      }
    },
    server,
  );
}

describe('Service-OrgID', () => {
  test('missing: 400 naming the header, on every route', () =>
    sweep(async (r) => {
      expectError(await call(root.as('', ROOT_KEY), r), 400, 'Service-OrgID');
    }));

  test('malformed: 400 naming the header, on every route', () =>
    sweep(async (r) => {
      for (const bad of ['root org', 'root/org', 'root.org', 'r?ot', 'x'.repeat(65)]) {
        expectError(await call(root.as(bad, ROOT_KEY), r), 400, 'Service-OrgID');
      }
    }));

  test('an organization that does not exist: 404 whatever the key, on every route', () =>
    sweep(async (r) => {
      for (const key of [ROOT_KEY, 'wrong-key', '']) expectError(await call(root.as('no-such-org', key), r), 404, 'no-such-org');
    }));
});

describe('Service-API-Key', () => {
  test('missing: 401 naming the header, on every route', () =>
    sweep(async (r) => {
      expectError(await call(root.as(ROOT_ORG, ''), r), 401, 'Service-API-Key');
    }));

  test('wrong: 401, on every route', () =>
    sweep(async (r) => {
      for (const key of ['wrong-key', ROOT_KEY + 'x', ROOT_KEY.slice(0, -1)]) expectError(await call(root.as(ROOT_ORG, key), r), 401, 'API key');
    }));

  test("another organization's valid key: 403, both ways, on every route", () =>
    sweep(async (r) => {
      expectError(await call(root.as(ROOT_ORG, sub.api_key), r), 403, 'organization');
      expectError(await call(root.as(sub.id, ROOT_KEY), r), 403, 'organization');
    }));

  test('checks come in order: a malformed org with a wrong key is a 400, an unknown org without a key a 404', async () => {
    const r = cases[0] as RouteCase;
    expectError(await call(root.as('bad org', ''), r), 400, 'Service-OrgID');
    expectError(await call(root.as('nobody', ''), r), 404);
    expectError(await call(root.as(sub.id, ''), r), 401);
  });

  test('auth comes before the body: bad credentials with a malformed body are still 401', async () => {
    expectError(await root.as(ROOT_ORG, 'wrong').post('/persons', '{not json'), 401);
    expectError(await root.as(ROOT_ORG, 'wrong').put('/persons/x/groups', { groups: 'nope' }), 401);
  });
});

test('the public routes need no headers at all', async () => {
  const bare = root.as('', '');
  assert.equal((await bare.get('/health')).status, 200);
  assert.equal((await bare.get('/metrics')).status, 200);
  assert.equal((await bare.get('/openapi.json')).status, 200);
});
