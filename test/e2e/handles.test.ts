// A person's handles over HTTP: add, list, remove one; the organization's handle index follows, restarts keep it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectNoContent, expectResult, unchanged } from '../support/expect.js';
import { email, removeDir, startTestServer, tempDir, type Client, type TestServer } from '../support/server.js';
import { newOrg, signIn } from '../support/auth.js';

let server: TestServer;
let c: Client;
const dir = tempDir();

before(async () => {
  server = await startTestServer({ SERVICE_SNAPSHOT_INTERVAL: '3' }, {}, dir);
  c = server.client;
});
after(async () => {
  await server.stop();
  removeDir(dir);
});

async function person(value: string): Promise<string> {
  return expectResult(await c.post('/persons', email(value)), 201).person_id as string;
}
const handlesOf = async (id: string) => expectResult(await c.get(`/persons/${id}/handles`), 200);
const path = (id: string, type: string, value: string) => `/persons/${id}/handles/${encodeURIComponent(`${type}:${value}`)}`;

describe('POST and GET /persons/{person_id}/handles', () => {
  test('the original body (an array) adds handles: 204, then GET, the person and the ?handle= filter see them', async () => {
    const id = await person('ada@example.com');
    const added = [{ type: 'phone_number', value: '+15551230001' }, { type: 'username', value: 'ada' }];
    expectNoContent(await c.post(`/persons/${id}/handles`, added));
    assert.deepEqual(await handlesOf(id), [{ type: 'email_address', value: 'ada@example.com' }, ...added]);
    assert.deepEqual(expectResult(await c.get(`/persons/${id}`), 200).handles, await handlesOf(id));
    const found = expectResult(await c.get(`/persons?handle=${encodeURIComponent('phone_number:+15551230001')}`), 200);
    assert.deepEqual(found.map((p: { person_id: string }) => p.person_id), [id]);
  });

  test('a handle the person holds already is left alone; the whole request is idempotent', async () => {
    const id = await person('bob@example.com');
    await unchanged(c, async () => expectNoContent(await c.post(`/persons/${id}/handles`, [{ type: 'email_address', value: 'BOB@example.com' }])), server);
    assert.deepEqual(await handlesOf(id), [{ type: 'email_address', value: 'bob@example.com' }]);
  });

  test('a handle of another person is a 409 naming it, email addresses without regard to case; nothing changes', async () => {
    const a = await person('carol@example.com');
    const b = await person('dave@example.com');
    await unchanged(c, async () => {
      expectError(await c.post(`/persons/${b}/handles`, [{ type: 'username', value: 'dave' }, { type: 'email_address', value: 'CAROL@example.com' }]), 409, 'CAROL@example.com');
    }, server);
    assert.deepEqual(await handlesOf(b), [{ type: 'email_address', value: 'dave@example.com' }]);
    assert.deepEqual(await handlesOf(a), [{ type: 'email_address', value: 'carol@example.com' }]);
  });

  test('bad bodies are a 400 naming the problem, an unknown person a 404; nothing changes', async () => {
    const id = await person('erin@example.com');
    await unchanged(c, async () => {
      expectError(await c.post(`/persons/${id}/handles`, []), 400);
      expectError(await c.post(`/persons/${id}/handles`, { handles: [{ type: 'username', value: 'x' }] }), 400);
      expectError(await c.post(`/persons/${id}/handles`, [{ type: 'fax', value: '1' }]), 400, 'type');
      expectError(await c.post(`/persons/${id}/handles`, [{ type: 'email_address', value: 'not-an-email' }]), 400, 'not-an-email');
      expectError(await c.post(`/persons/${id}/handles`, [{ type: 'phone_number', value: '12' }]), 400, 'phone');
      expectError(await c.post('/persons/no-such-person/handles', [{ type: 'username', value: 'nobody' }]), 404, 'no-such-person');
      expectError(await c.get('/persons/no-such-person/handles'), 404, 'no-such-person');
    }, server);
  });
});

describe('DELETE /persons/{person_id}/handles/{handle}', () => {
  test('{handle} is type:value percent-encoded: 204, and the handle is free for another person', async () => {
    const id = await person('frank@example.com');
    expectNoContent(await c.post(`/persons/${id}/handles`, [{ type: 'phone_number', value: '+15551230002' }]));
    expectNoContent(await c.delete(path(id, 'phone_number', '+15551230002')));
    assert.deepEqual(await handlesOf(id), [{ type: 'email_address', value: 'frank@example.com' }]);
    expectResult(await c.post('/persons', { handles: [{ type: 'phone_number', value: '+15551230002' }] }), 201);
    // email addresses compare without regard to case here too
    expectNoContent(await c.post(`/persons/${id}/handles`, [{ type: 'username', value: 'frank' }]));
    expectNoContent(await c.delete(path(id, 'email_address', 'FRANK@example.com')));
    assert.deepEqual(await handlesOf(id), [{ type: 'username', value: 'frank' }]);
    await person('frank@example.com');
  });

  test('a handle the person does not hold is a 404; a malformed one a 400; nothing changes', async () => {
    const id = await person('grace@example.com');
    await person('heidi@example.com');
    await unchanged(c, async () => {
      expectError(await c.delete(path(id, 'email_address', 'heidi@example.com')), 404, 'heidi@example.com');
      expectError(await c.delete(path(id, 'username', 'grace')), 404);
      expectError(await c.delete(`/persons/${id}/handles/grace`), 400, 'type:value');
      expectError(await c.delete(path(id, 'fax', '1')), 400, 'type:value');
      expectError(await c.delete(path('no-such-person', 'email_address', 'grace@example.com')), 404, 'no-such-person');
    }, server);
  });

  test('the last handle of a person with a password cannot go (409); of one without, it can', async () => {
    const org = await newOrg(server);
    const created = expectResult(await org.admin.post('/persons', { handles: [{ type: 'email_address', value: 'ivan@example.com' }] }), 201);
    const id = created.person_id as string;
    expectNoContent(await org.admin.put(`/persons/${id}/credentials/password`, { password: 'correct horse battery' }));
    await unchanged(org.admin, async () => expectError(await org.admin.delete(path(id, 'email_address', 'ivan@example.com')), 409, 'last handle'));
    // with a second handle, the first can go, and signing in with it stops working
    expectNoContent(await org.admin.post(`/persons/${id}/handles`, [{ type: 'email_address', value: 'ivan@example.org' }]));
    assert.equal((await signIn(org, 'ivan@example.com', 'correct horse battery')).status, 200);
    expectNoContent(await org.admin.delete(path(id, 'email_address', 'ivan@example.com')));
    assert.notEqual((await signIn(org, 'ivan@example.com', 'correct horse battery')).status, 200);
    assert.equal((await signIn(org, 'ivan@example.org', 'correct horse battery')).status, 200);

    const plain = await person('judy@example.com');
    expectNoContent(await c.delete(path(plain, 'email_address', 'judy@example.com')));
    assert.deepEqual(await handlesOf(plain), []);
  });

  test('added and removed handles survive a restart (snapshots and the WAL), the index with them', async () => {
    const id = await person('ken@example.com');
    expectNoContent(await c.post(`/persons/${id}/handles`, [{ type: 'username', value: 'ken' }, { type: 'phone_number', value: '+15551230003' }]));
    expectNoContent(await c.delete(path(id, 'username', 'ken')));
    await server.stop();
    server = await startTestServer({ SERVICE_SNAPSHOT_INTERVAL: '3' }, {}, dir);
    c = server.client;
    assert.deepEqual(await handlesOf(id), [{ type: 'email_address', value: 'ken@example.com' }, { type: 'phone_number', value: '+15551230003' }]);
    expectError(await c.post('/persons', { handles: [{ type: 'phone_number', value: '+15551230003' }] }), 409);
    expectResult(await c.post('/persons', { handles: [{ type: 'username', value: 'ken' }] }), 201);
  });
});
