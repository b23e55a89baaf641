import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { email, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

test('a person created is read back, and survives a restart', async () => {
  const created = await server.client.post('/persons', email('ada@example.com'));
  assert.equal(created.status, 201);
  const id = created.body.result.person_id as string;
  const read = await server.client.get(`/persons/${id}`);
  assert.equal(read.status, 200);
  assert.deepEqual(read.body.result.handles, [{ type: 'email_address', value: 'ada@example.com' }]);

  await server.stop();
  server = await startTestServer({}, {}, server.dataDir);
  const again = await server.client.get(`/persons/${id}`);
  assert.equal(again.status, 200);
  assert.equal(again.body.result.person_id, id);
});

test('health reports the native HTTP engine', async () => {
  const r = await server.client.get('/health');
  assert.equal(r.status, 200);
  assert.equal(r.body.result.native_http, true);
});
