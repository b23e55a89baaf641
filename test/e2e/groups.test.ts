// Groups over HTTP, and the seed's four rules for setting a person's groups.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectBare, expectError, expectResult, unchanged } from '../support/expect.js';
import { email, startTestServer, type Client, type TestServer } from '../support/server.js';

let server: TestServer;
let c: Client;

before(async () => {
  server = await startTestServer();
  c = server.client;
});
after(() => server.stop());

let n = 0;
async function person(groups?: string[]): Promise<string> {
  const body = groups === undefined ? email(`member${++n}@example.com`) : { ...email(`member${++n}@example.com`), groups };
  return expectResult(await c.post('/persons', body), 201).person_id;
}

async function groupsOf(id: string): Promise<string[]> {
  const listed = expectResult<string[]>(await c.get(`/persons/${id}/groups`), 200);
  assert.deepEqual(expectResult(await c.get(`/persons/${id}`), 200).groups, listed, 'GET /persons/{id} and /groups disagree');
  return listed;
}

async function membersOf(name: string): Promise<string[]> {
  const members = expectResult<string[]>(await c.get(`/groups/${name}/persons`), 200);
  assert.equal(expectResult(await c.get(`/groups/${name}`), 200).members_count, members.length);
  return members;
}

describe('POST, GET and DELETE /groups', () => {
  test('POST answers 201 with a bare envelope; GET /groups/{name} the group; an existing name changes nothing', async () => {
    expectBare(await c.post('/groups', { name: 'editors', description: 'may edit' }), 201);
    const g = expectResult(await c.get('/groups/editors'), 200);
    assert.deepEqual(Object.keys(g).sort(), ['created', 'description', 'members_count', 'name']);
    assert.equal(g.name, 'editors');
    assert.equal(g.description, 'may edit');
    assert.equal(g.members_count, 0);
    assert.ok(!Number.isNaN(Date.parse(g.created)) && g.created.endsWith('Z'), g.created);
    await unchanged(c, async () => expectBare(await c.post('/groups', { name: 'editors', description: 'other' }), 201), server);
    expectBare(await c.post('/groups', { name: 'readers' }), 201);
    assert.equal(expectResult(await c.get('/groups/readers'), 200).description, '');
  });

  test('GET /groups is the sorted array of names; names are case-sensitive', async () => {
    expectBare(await c.post('/groups', { name: 'Zeta' }), 201);
    expectBare(await c.post('/groups', { name: 'zeta' }), 201);
    const names = expectResult<string[]>(await c.get('/groups'), 200);
    assert.deepEqual(names, [...names].sort());
    assert.ok(names.includes('Zeta') && names.includes('zeta'));
  });

  test('names: 100 characters and the expression are allowed; 101, or off the expression, a 400 naming the field', async () => {
    const long = 'g'.repeat(99) + '1';
    expectBare(await c.post('/groups', { name: long }), 201);
    assert.equal(expectResult(await c.get(`/groups/${long}`), 200).name, long);
    for (const name of ['a.b', 'a-b', 'a_b', 'A.b-C_9', '12']) {
      expectBare(await c.post('/groups', { name }), 201);
      assert.equal(expectResult(await c.get(`/groups/${name}`), 200).name, name);
    }
    await unchanged(c, async () => {
      expectError(await c.post('/groups', { name: 'g'.repeat(101) }), 400, 'name', '100');
      for (const name of ['a', '', '-ab', 'ab-', '.ab', 'ab_', 'a b', 'a/b', 'a@b', 'naïve', 'ab\t']) {
        expectError(await c.post('/groups', { name }), 400, 'name');
      }
      expectError(await c.post('/groups', {}), 400, 'name');
      expectError(await c.post('/groups', { name: 7 }), 400, 'name');
      expectError(await c.post('/groups', { name: 'okay', owner: 'me' }), 400, 'owner');
      expectError(await c.post('/groups', { name: 'okay', description: 5 }), 400, 'description');
      expectError(await c.post('/groups', '{"name":"okay"'), 400, 'JSON');
    }, server);
  });

  test('an unknown group is a 404 naming it', async () => {
    await unchanged(c, async () => {
      expectError(await c.get('/groups/ghost'), 404, 'ghost');
      expectError(await c.get('/groups/ghost/persons'), 404, 'ghost');
      expectError(await c.delete('/groups/ghost'), 404, 'ghost');
    }, server);
  });

  test('DELETE answers 200 with a bare envelope and takes the group from every member', async () => {
    expectBare(await c.post('/groups', { name: 'doomed' }), 201);
    expectBare(await c.post('/groups', { name: 'kept' }), 201);
    const a = await person(['doomed', 'kept']);
    const b = await person(['doomed']);
    expectBare(await c.delete('/groups/doomed'), 200);
    expectError(await c.get('/groups/doomed'), 404);
    assert.ok(!expectResult<string[]>(await c.get('/groups'), 200).includes('doomed'));
    assert.deepEqual(await groupsOf(a), ['kept']);
    assert.deepEqual(await groupsOf(b), []);
    // a group created again under the name starts empty
    expectBare(await c.post('/groups', { name: 'doomed' }), 201);
    assert.deepEqual(await membersOf('doomed'), []);
  });
});

describe('PUT /persons/{person_id}/groups (seed rules 1-4)', () => {
  before(async () => {
    for (const name of ['red', 'green', 'blue']) await c.post('/groups', { name });
  });

  test('rule 1: the person is in exactly the listed groups afterwards; 200 with the array of names', async () => {
    const id = await person(['red', 'green']);
    const other = await person(['red']);
    const r = await c.put(`/persons/${id}/groups`, { groups: ['blue', 'green'] });
    assert.deepEqual(expectResult(r, 200), ['blue', 'green']);
    assert.deepEqual(await groupsOf(id), ['blue', 'green']);
    assert.ok(!(await membersOf('red')).includes(id));
    assert.ok((await membersOf('red')).includes(other));
    assert.ok((await membersOf('blue')).includes(id));
  });

  test('rule 2: every group must exist; otherwise a 400 naming it, and nothing changes', async () => {
    const id = await person(['red']);
    await unchanged(c, async () => {
      expectError(await c.put(`/persons/${id}/groups`, { groups: ['green', 'purple'] }), 400, 'purple');
      expectError(await c.put(`/persons/${id}/groups`, { groups: ['Red'] }), 400, 'Red');
    }, server);
    assert.deepEqual(await groupsOf(id), ['red']);
  });

  test('rule 3: duplicates are ignored', async () => {
    const id = await person();
    assert.deepEqual(expectResult(await c.put(`/persons/${id}/groups`, { groups: ['green', 'red', 'green', 'green'] }), 200), ['green', 'red']);
    assert.deepEqual(await groupsOf(id), ['green', 'red']);
    assert.equal((await membersOf('green')).filter((m) => m === id).length, 1);
  });

  test('rule 4: an empty list removes the person from every group', async () => {
    const id = await person(['red', 'green', 'blue']);
    assert.deepEqual(expectResult(await c.put(`/persons/${id}/groups`, { groups: [] }), 200), []);
    assert.deepEqual(await groupsOf(id), []);
    for (const g of ['red', 'green', 'blue']) assert.ok(!(await membersOf(g)).includes(id));
  });

  test('bad bodies are a 400 naming the field; an unknown person a 404; nothing changes', async () => {
    const id = await person(['red']);
    await unchanged(c, async () => {
      expectError(await c.put(`/persons/${id}/groups`, {}), 400, 'groups');
      expectError(await c.put(`/persons/${id}/groups`, { groups: 'red' }), 400, 'groups');
      expectError(await c.put(`/persons/${id}/groups`, { groups: [1] }), 400, 'groups[0]');
      expectError(await c.put(`/persons/${id}/groups`, { groups: ['red', '-bad-'] }), 400, 'groups[1]');
      expectError(await c.put(`/persons/${id}/groups`, { groups: ['x'.repeat(101)] }), 400, 'groups[0]');
      expectError(await c.put(`/persons/${id}/groups`, { groups: [], extra: true }), 400, 'extra');
      expectError(await c.put(`/persons/${id}/groups`, ['red']), 400, 'body');
      expectError(await c.put(`/persons/${id}/groups`, '{"groups": [red]}'), 400, 'JSON');
      expectError(await c.put('/persons/nobody/groups', { groups: ['red'] }), 404, 'nobody');
    }, server);
  });
});
