// Persons over HTTP: create, create-or-update by handle, list, read, activate, delete.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectNoContent, expectResult, offsets, unchanged } from '../support/expect.js';
import { email, startTestServer, type Client, type TestServer } from '../support/server.js';

let server: TestServer;
let c: Client;

before(async () => {
  server = await startTestServer();
  c = server.client;
});
after(() => server.stop());

const PERSON_KEYS = ['active', 'groups', 'handles', 'person_id', 'person_type', 'region'];

async function create(body: unknown): Promise<any> {
  return expectResult(await c.post('/persons', body), 201);
}

describe('POST /persons', () => {
  test('201 with exactly the PersonRet fields; GET answers the same', async () => {
    const p = await create(email('grace@example.com'));
    assert.deepEqual(Object.keys(p).sort(), PERSON_KEYS);
    assert.match(p.person_id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(p, { person_id: p.person_id, active: true, person_type: 'regular', region: 'europe-belgium', handles: [{ type: 'email_address', value: 'grace@example.com' }], groups: [] });
    assert.deepEqual(expectResult(await c.get(`/persons/${p.person_id}`), 200), p);
  });

  test('with groups, attributes, active and every handle type', async () => {
    await c.post('/groups', { name: 'pilots' });
    const handles = [
      { type: 'email_address', value: 'amelia@example.com' },
      { type: 'phone_number', value: '+15551234567' },
      { type: 'username', value: 'amelia' },
    ];
    const p = await create({ handles, groups: ['pilots'], active: false, region: 'europe-belgium', attributes: { end_user_read_only: { plane: 'Electra' } } });
    assert.deepEqual(p.handles, handles);
    assert.deepEqual(p.groups, ['pilots']);
    assert.equal(p.active, false);
    assert.deepEqual(expectResult(await c.get(`/persons/${p.person_id}/attributes`), 200), { end_user_read_only: { plane: 'Electra' } });
    assert.deepEqual(expectResult(await c.get('/groups/pilots/persons'), 200), [p.person_id]);
  });

  test('a handle that exists is a 409 naming it, email addresses without regard to case; nothing changes', async () => {
    await create(email('Hopper@Example.com'));
    await unchanged(c, async () => {
      expectError(await c.post('/persons', email('hopper@example.COM')), 409, 'hopper@example.COM');
      expectError(await c.post('/persons', { handles: [{ type: 'username', value: 'fresh-name' }, { type: 'email_address', value: 'HOPPER@EXAMPLE.COM' }] }), 409);
    }, server);
    // usernames are compared exactly
    await create({ handles: [{ type: 'username', value: 'Amelia' }] });
  });

  test('bad input is a 400 naming the field, and nothing changes', async () => {
    const cases: Array<[unknown, string]> = [
      ['{"handles": [', 'malformed JSON'],
      ['[]', 'body'],
      ['"x"', 'body'],
      ['null', 'body'],
      [{}, 'handles'],
      [{ handles: 'ada@example.com' }, 'handles'],
      [{ handles: [] }, 'handles'],
      [{ handles: [{ type: 'email_address' }] }, 'handles[0].value'],
      [{ handles: [{ type: 'email_address', value: 42 }] }, 'handles[0].value'],
      [{ handles: [{ type: 'fax', value: '123' }] }, 'handles[0].type'],
      [{ handles: [{ type: 'EmailAddress', value: 'a@example.com' }] }, 'handles[0].type'],
      [{ handles: [{ type: 'email_address', value: 'a@example.com', primary: true }] }, 'handles[0].primary'],
      [{ ...email('a@example.com'), nickname: 'x' }, 'nickname'],
      [{ ...email('a@example.com'), active: 'yes' }, 'active'],
      [{ ...email('a@example.com'), region: 'mars-north' }, 'region'],
      [{ ...email('a@example.com'), region: 'us-iowa' }, 'us-iowa'],
      [{ ...email('a@example.com'), groups: ['nope1'] }, 'nope1'],
      [{ ...email('a@example.com'), groups: 'pilots' }, 'groups'],
      [{ ...email('a@example.com'), attributes: { mine: { a: 1 } } }, 'mine'],
      [{ ...email('a@example.com'), attributes: { end_user_read_write: { ['x'.repeat(71)]: 1 } } }, '70'],
      [{ ...email('a@example.com'), attributes: { end_user_read_write: 5 } }, 'attributes.end_user_read_write'],
      [email('not an email'), 'handles[0].value'],
      [{ handles: [{ type: 'phone_number', value: '555-1234' }] }, 'handles[0].value'],
      [{ handles: [{ type: 'username', value: 'has space' }] }, 'handles[0].value'],
    ];
    await unchanged(c, async () => {
      for (const [body, mention] of cases) {
        expectError(await c.post('/persons', body), 400, mention);
        expectError(await c.put('/persons', body), 400, mention);
      }
    }, server);
  });
});

describe('PUT /persons', () => {
  test('idempotent create-or-update: 201, then 200 with the same person', async () => {
    const body = { handles: [{ type: 'email_address', value: 'lovelace@example.com' }] };
    const first = await c.put('/persons', body);
    const created = expectResult(first, 201);
    const second = await c.put('/persons', { handles: [{ type: 'email_address', value: 'LOVELACE@example.com' }] });
    assert.deepEqual(expectResult(second, 200), created);
    const listed = expectResult<any[]>(await c.get('/persons?handle=email_address:lovelace@example.com'), 200);
    assert.deepEqual(listed.map((p) => p.person_id), [created.person_id]);
  });

  test('the same body again writes nothing, attributes and groups included', async () => {
    await c.post('/groups', { name: 'repeaters' });
    const body = { handles: [{ type: 'username', value: 'repeat' }], groups: ['repeaters'], active: true, attributes: { end_user_read_write: { a: 1, b: { c: [1, 2] } } } };
    const first = expectResult(await c.put('/persons', body), 201);
    const before = offsets(server);
    assert.deepEqual(expectResult(await c.put('/persons', body), 200), first);
    assert.deepEqual(offsets(server), before);
  });

  test('updates the person found by a handle: new handles, groups, active', async () => {
    await c.post('/groups', { name: 'analysts' });
    const p = expectResult(await c.put('/persons', email('babbage@example.com')), 201);
    const updated = expectResult(await c.put('/persons', { handles: [{ type: 'email_address', value: 'babbage@example.com' }, { type: 'username', value: 'charles' }], groups: ['analysts'], active: false }), 200);
    assert.equal(updated.person_id, p.person_id);
    assert.deepEqual(updated.handles, [{ type: 'email_address', value: 'babbage@example.com' }, { type: 'username', value: 'charles' }]);
    assert.deepEqual(updated.groups, ['analysts']);
    assert.equal(updated.active, false);
    assert.deepEqual(expectResult(await c.get(`/persons/${p.person_id}`), 200), updated);
    // the new handle is taken now
    expectError(await c.post('/persons', { handles: [{ type: 'username', value: 'charles' }] }), 409);
  });

  test('handles of two different persons are a 409, and nothing changes', async () => {
    await create({ handles: [{ type: 'username', value: 'one' }] });
    await create({ handles: [{ type: 'username', value: 'two' }] });
    await unchanged(c, async () => {
      expectError(await c.put('/persons', { handles: [{ type: 'username', value: 'one' }, { type: 'username', value: 'two' }] }), 409, 'handles');
    }, server);
  });
});

describe('concurrent writes', () => {
  test('the same handle posted ten times at once: one 201, nine 409', async () => {
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => c.post('/persons', email(i % 2 ? 'race@example.com' : 'RACE@example.com'))));
    assert.deepEqual(replies.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    assert.equal(expectResult<any[]>(await c.get('/persons?handle=email_address:race@example.com'), 200).length, 1);
  });

  test('the same PUT ten times at once: one 201, nine 200, all the same person', async () => {
    const replies = await Promise.all(Array.from({ length: 10 }, () => c.put('/persons', email('put-race@example.com'))));
    assert.deepEqual(replies.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    assert.equal(new Set(replies.map((r) => r.body.result.person_id)).size, 1);
  });
});

describe('GET /persons', () => {
  test('list items carry the person fields, and handles/groups/attributes on request', async () => {
    const p = await create({ handles: [{ type: 'username', value: 'listed' }], attributes: { end_user_no_access: { k: 1 } } });
    const plain = expectResult<any[]>(await c.get('/persons?handle=username:listed'), 200);
    assert.deepEqual(plain, [{ person_id: p.person_id, active: true, person_type: 'regular', region: 'europe-belgium' }]);
    const full = expectResult<any[]>(await c.get('/persons?handle=username:listed&fields=handles,groups,attributes'), 200);
    assert.deepEqual(full, [{ person_id: p.person_id, active: true, person_type: 'regular', region: 'europe-belgium', handles: p.handles, groups: [], attributes: { end_user_no_access: { k: 1 } } }]);
    const r = await c.get('/persons?handle=username:nobody');
    assert.deepEqual(r.body, { result: [], meta: { pagination: { limit: 100, offset: 0, total_count: 0 } } });
  });

  test('bad filters are a 400 naming the parameter', async () => {
    expectError(await c.get('/persons?handle=listed'), 400, 'handle');
    expectError(await c.get('/persons?handle=fax:123'), 400, 'handle');
    expectError(await c.get('/persons?fields=handles,password'), 400, 'fields', 'password');
    expectError(await c.get('/persons?sort=name'), 400, 'sort');
  });
});

describe('PATCH and DELETE /persons/{person_id}', () => {
  test('PATCH {active} answers the person and is read back', async () => {
    const p = await create(email('turing@example.com'));
    const off = expectResult(await c.patch(`/persons/${p.person_id}`, { active: false }), 200);
    assert.deepEqual(off, { ...p, active: false });
    assert.deepEqual(expectResult(await c.get(`/persons/${p.person_id}`), 200), off);
    assert.deepEqual(expectResult(await c.patch(`/persons/${p.person_id}`, { active: true }), 200), p);
  });

  test('PATCH with a bad body is a 400 naming the field, and nothing changes', async () => {
    const p = await create(email('patch-bad@example.com'));
    await unchanged(c, async () => {
      expectError(await c.patch(`/persons/${p.person_id}`, { active: 'no' }), 400, 'active');
      expectError(await c.patch(`/persons/${p.person_id}`, {}), 400, 'active');
      expectError(await c.patch(`/persons/${p.person_id}`, { active: false, region: 'us-iowa' }), 400, 'region');
      expectError(await c.patch(`/persons/${p.person_id}`, '{"active": fals'), 400, 'JSON');
    }, server);
  });

  test('DELETE answers 204 without a body, frees the handles and removes the person from its groups', async () => {
    await c.post('/groups', { name: 'leavers' });
    const p = await create({ ...email('gone@example.com'), groups: ['leavers'] });
    expectNoContent(await c.delete(`/persons/${p.person_id}`));
    expectError(await c.get(`/persons/${p.person_id}`), 404, p.person_id);
    expectError(await c.delete(`/persons/${p.person_id}`), 404, p.person_id);
    assert.deepEqual(expectResult(await c.get('/groups/leavers/persons'), 200), []);
    assert.equal(expectResult(await c.get('/groups/leavers'), 200).members_count, 0);
    const again = await create(email('GONE@example.com'));
    assert.notEqual(again.person_id, p.person_id);
    assert.deepEqual(again.groups, []);
  });

  test('an unknown person is a 404 naming it on every person route, and nothing changes', async () => {
    const id = '01890000-0000-7000-8000-000000000000';
    await unchanged(c, async () => {
      expectError(await c.get(`/persons/${id}`), 404, id);
      expectError(await c.patch(`/persons/${id}`, { active: false }), 404, id);
      expectError(await c.delete(`/persons/${id}`), 404, id);
      expectError(await c.get(`/persons/${id}/groups`), 404, id);
      expectError(await c.put(`/persons/${id}/groups`, { groups: [] }), 404, id);
      expectError(await c.get(`/persons/${id}/attributes`), 404, id);
      expectError(await c.put(`/persons/${id}/attributes/end_user_read_write`, { a: 1 }), 404, id);
      expectError(await c.patch(`/persons/${id}/attributes/end_user_read_write`, { a: 1 }), 404, id);
      expectError(await c.get(`/persons/${id}/attributes/end_user_read_write`), 404, id);
      expectError(await c.delete(`/persons/${id}/attributes/end_user_read_write`), 404, id);
    }, server);
  });
});
