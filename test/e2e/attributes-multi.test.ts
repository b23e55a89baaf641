// The original's multi-bucket attribute routes: several buckets in one write, PUT replacing only the named buckets.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { email, startTestServer, type TestServer } from '../support/server.js';
import { expectError, expectNoContent, expectResult, unchanged } from '../support/expect.js';
import { assertOriginalRequest, assertOriginalShape } from '../support/original.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

test('organization: PUT replaces only the named buckets, PATCH merges, GET reads all or the named ones', async () => {
  const c = server.client;
  const put = { end_user_read_write: { theme: 'dark', size: 2 }, end_user_no_access: { secret_plan: 'gold' } };
  assertOriginalRequest('PUT /organizations/attributes', put);
  const w = await c.put('/organizations/attributes', put);
  expectNoContent(w);
  assertOriginalShape('PUT /organizations/attributes', 204, undefined);

  // PUT naming one bucket replaces its set and leaves the other bucket alone.
  expectNoContent(await c.put('/organizations/attributes', { end_user_read_write: { theme: 'light' } }));
  const patch = { end_user_no_access: { seats: 10 } };
  assertOriginalRequest('PATCH /organizations/attributes', patch);
  expectNoContent(await c.patch('/organizations/attributes', patch));
  assertOriginalShape('PATCH /organizations/attributes', 204, undefined);

  const all = await c.get('/organizations/attributes');
  assertOriginalShape('GET /organizations/attributes', 200, all.body);
  assert.deepEqual(expectResult(all, 200), { end_user_read_write: { theme: 'light' }, end_user_no_access: { secret_plan: 'gold', seats: 10 } });
  const named = await c.get('/organizations/attributes?buckets=end_user_no_access,end_user_read_only');
  assertOriginalShape('GET /organizations/attributes', 200, named.body);
  assert.deepEqual(expectResult(named, 200), { end_user_no_access: { secret_plan: 'gold', seats: 10 }, end_user_read_only: {} });
  // the single-bucket routes read the same sets
  assert.deepEqual(expectResult(await c.get('/organizations/attributes/end_user_read_write'), 200), { theme: 'light' });

  expectError(await c.get('/organizations/attributes?buckets=nope'), 404, '"nope"');
  expectError(await c.get('/organizations/attributes?buckets=end_user_read_write,,'), 400, 'buckets');
});

test('organization: a refused bucket or attribute refuses the whole request, nothing written', async () => {
  const c = server.client;
  await unchanged(c, async () => {
    expectError(await c.put('/organizations/attributes', { end_user_read_write: { ok: 1 }, no_such_bucket: { x: 1 } }), 404, '"no_such_bucket"');
    expectError(await c.patch('/organizations/attributes', { end_user_read_write: { ok: 1 }, end_user_no_access: { ['n'.repeat(71)]: 1 } }), 400, 'end_user_no_access', '70 bytes');
    expectError(await c.patch('/organizations/attributes', { end_user_read_write: { big: 'x'.repeat(70_000) } }), 400, 'end_user_read_write', 'big');
    expectError(await c.put('/organizations/attributes', { end_user_read_write: 'not a set' }), 400, 'end_user_read_write');
    expectError(await c.put('/organizations/attributes', [1]), 400);
  }, server);
});

test("person: PUT replaces only the named buckets and PATCH merges, in one commit; refusals change nothing", async () => {
  const c = server.client;
  const id = expectResult(await c.post('/persons', email('multi@example.com')), 201).person_id as string;
  const path = `/persons/${id}/attributes`;
  const put = { end_user_read_write: { a: 1, b: 2 }, 'person_pool-end_user_read_only': { tier: 'silver' } };
  assertOriginalRequest('PUT /persons/{person_id}/attributes', put);
  const before = server.service.registry.get(server.client.orgId)?.state.offset ?? 0;
  expectNoContent(await c.put(path, put));
  assertOriginalShape('PUT /persons/{person_id}/attributes', 204, undefined);
  assert.equal(server.service.registry.get(server.client.orgId)?.state.offset, before + 1, 'both buckets in one WAL entry');

  expectNoContent(await c.put(path, { end_user_read_write: { c: 3 } }));
  assertOriginalRequest('PATCH /persons/{person_id}/attributes', { 'person_pool-end_user_read_only': { level: 2 } });
  expectNoContent(await c.patch(path, { 'person_pool-end_user_read_only': { level: 2 } }));
  assertOriginalShape('PATCH /persons/{person_id}/attributes', 204, undefined);
  assert.deepEqual(expectResult(await c.get(path), 200), { end_user_read_write: { c: 3 }, 'person_pool-end_user_read_only': { tier: 'silver', level: 2 } });

  await unchanged(c, async () => {
    expectError(await c.put(path, { end_user_read_write: { ok: 1 }, bogus: {} }), 404, '"bogus"');
    expectError(await c.patch(path, { end_user_read_write: { __proto__x: 1, '': 2 } }), 400, 'end_user_read_write', 'empty');
    expectError(await c.put('/persons/nobody/attributes', { end_user_read_write: { a: 1 } }), 404, '"nobody"');
  }, server);
});
