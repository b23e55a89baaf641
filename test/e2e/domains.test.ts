// The organization's allowed origin domains: GET/POST/DELETE /organizations/config/domains, kept through restarts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { expectError, expectNoContent, expectResult, offsets, unchanged } from '../support/expect.js';
import { assertOriginalRequest, assertOriginalShape } from '../support/original.js';

const PATH = '/organizations/config/domains';
let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

async function domains(s: TestServer): Promise<string[]> {
  const r = await s.client.get(PATH);
  assertOriginalShape(`GET ${PATH}`, 200, r.body);
  return expectResult(r, 200);
}

test('POST appends (lower case, duplicates ignored), ?overwrite=true replaces, DELETE removes one or all', async () => {
  const c = server.client;
  assert.deepEqual(await domains(server), []);
  const body = { domains: ['XYZ.com', '*.xyz.com'] };
  assertOriginalRequest(`POST ${PATH}`, body);
  const r = await c.post(PATH, body);
  expectNoContent(r);
  assertOriginalShape(`POST ${PATH}`, 204, undefined);
  expectNoContent(await c.post(PATH, { domains: ['xyz.com', 'app.example.org'] }));
  assert.deepEqual(await domains(server), ['xyz.com', '*.xyz.com', 'app.example.org']);

  expectNoContent(await c.delete(`${PATH}?domain=app.example.org`));
  assertOriginalShape(`DELETE ${PATH}`, 204, undefined);
  // a domain not in the list: no action, still a success
  const offset = offsets(server);
  expectNoContent(await c.delete(`${PATH}?domain=absent.example`));
  assert.deepEqual(offsets(server), offset);
  assert.deepEqual(await domains(server), ['xyz.com', '*.xyz.com']);

  expectNoContent(await c.post(`${PATH}?overwrite=true`, { domains: ['*.example.com', 'example.com'] }));
  assert.deepEqual(await domains(server), ['*.example.com', 'example.com']);
});

test('the list survives a restart (state through the WAL)', async () => {
  const dir = server.dataDir;
  await server.stop();
  server = await startTestServer({}, {}, dir);
  assert.deepEqual(await domains(server), ['*.example.com', 'example.com']);
  expectNoContent(await server.client.delete(`${PATH}?deleteAll=true`));
  assert.deepEqual(await domains(server), []);
  expectNoContent(await server.client.post(PATH, { domains: ['kept.example'] }));
});

test('refusals change nothing: malformed domains, both or neither DELETE parameter, a bad body', async () => {
  const c = server.client;
  const before = await domains(server);
  await unchanged(c, async () => {
    expectError(await c.post(PATH, { domains: ['ok.example', 'https://x.example'] }), 400, 'domains[1]', 'https://x.example');
    expectError(await c.post(PATH, { domains: ['a..b'] }), 400, 'domains[0]');
    expectError(await c.post(PATH, { domains: ['x.example:8080'] }), 400, 'domains[0]');
    expectError(await c.post(PATH, { domains: [''] }), 400, 'domains[0]');
    expectError(await c.post(PATH, { domains: ['*'] }), 400, 'domains[0]', 'every origin');
    expectError(await c.post(PATH, { domains: 'x.example' }), 400, 'domains');
    expectError(await c.post(`${PATH}?overwrite=maybe`, { domains: ['x.example'] }), 400, 'overwrite');
    expectError(await c.post(PATH, { domains: Array.from({ length: 101 }, (_, i) => `d${i}.example`) }), 400, 'domains');
    expectError(await c.delete(`${PATH}?domain=kept.example&deleteAll=true`), 400, 'domain', 'deleteAll');
    expectError(await c.delete(PATH), 400, 'deleteAll');
  }, server);
  assert.deepEqual(await domains(server), before);
});
