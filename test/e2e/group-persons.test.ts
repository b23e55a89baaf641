// POST /groups/{group_name}/persons and DELETE /groups/{group_name}/persons/{person_id}, as the original answers them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { email, startTestServer, type TestServer } from '../support/server.js';
import { expectBare, expectError, expectResult, unchanged } from '../support/expect.js';
import { assertOriginalRequest, assertOriginalShape } from '../support/original.js';

let server: TestServer;
let ada: string;
let bob: string;
before(async () => {
  server = await startTestServer();
  const c = server.client;
  ada = expectResult(await c.post('/persons', email('ada-groups@example.com')), 201).person_id;
  bob = expectResult(await c.post('/persons', { ...email('bob-groups@example.com'), groups: [] }), 201).person_id;
  for (const name of ['staff', 'admins']) await c.post('/groups', { name });
});
after(() => server.stop());

test('POST adds every listed person in one entry (201 bare envelope); members stay; the persons read their groups', async () => {
  const c = server.client;
  await c.put(`/persons/${ada}/groups`, { groups: ['admins'] });
  const body = { persons: [ada, bob, ada] };
  assertOriginalRequest('POST /groups/{group_name}/persons', body);
  const offset = server.service.registry.get(c.orgId)?.state.offset ?? 0;
  const r = await c.post('/groups/staff/persons', body);
  expectBare(r, 201);
  assertOriginalShape('POST /groups/{group_name}/persons', 201, r.body);
  assert.equal(server.service.registry.get(c.orgId)?.state.offset, offset + 1);
  assert.deepEqual(expectResult(await c.get('/groups/staff/persons'), 200), [ada, bob].sort());
  assert.deepEqual(expectResult(await c.get(`/persons/${ada}/groups`), 200), ['admins', 'staff']);
  // adding members again is a success that writes nothing
  expectBare(await c.post('/groups/staff/persons', { persons: [bob] }), 201);
  assert.equal(server.service.registry.get(c.orgId)?.state.offset, offset + 1);
});

test('DELETE removes one person from the group (200 bare envelope), leaving their other groups', async () => {
  const c = server.client;
  const r = await c.delete(`/groups/staff/persons/${ada}`);
  expectBare(r, 200);
  assertOriginalShape('DELETE /groups/{group_name}/persons/{person_id}', 200, r.body);
  assert.deepEqual(expectResult(await c.get('/groups/staff/persons'), 200), [bob]);
  assert.deepEqual(expectResult(await c.get(`/persons/${ada}/groups`), 200), ['admins']);
});

test('refusals change nothing: an unknown group or person, an empty or malformed list, a person not in the group', async () => {
  const c = server.client;
  await unchanged(c, async () => {
    expectError(await c.post('/groups/nogroup/persons', { persons: [ada] }), 404, '"nogroup"');
    expectError(await c.post('/groups/staff/persons', { persons: [ada, 'nobody'] }), 404, '"nobody"');
    expectError(await c.post('/groups/staff/persons', { persons: [] }), 400, 'persons');
    expectError(await c.post('/groups/staff/persons', { persons: ada }), 400, 'persons');
    expectError(await c.post('/groups/staff/persons', {}), 400, 'persons');
    expectError(await c.delete(`/groups/staff/persons/${ada}`), 404, 'not in group', '"staff"');
    expectError(await c.delete(`/groups/nogroup/persons/${bob}`), 404, '"nogroup"');
    expectError(await c.delete('/groups/staff/persons/nobody'), 404, '"nobody"');
  }, server);
});
