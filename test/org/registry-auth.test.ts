// API-key authentication as the registry answers it, repeated so that keys come from its digest cache:
// 404 for an unknown organization, 401 for a bad key, 403 for another organization's key, and a rotated key
// refused at once even after it authenticated many times.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Registry } from '../../src/org/registry.js';
import { expectResult } from '../support/expect.js';
import { removeDir, ROOT_KEY, ROOT_ORG, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let registry: Registry;
before(async () => {
  server = await startTestServer();
  registry = server.service.registry;
});
after(async () => {
  await server.stop();
  removeDir(server.dataDir);
});

const status = (orgId: string, key: string | undefined) => {
  const r = registry.authenticate(orgId, key);
  return r.ok ? r.actor.id : r.error.status;
};

test('the order of answers holds for keys seen before, and a rotated key stops at once', async () => {
  const sub = expectResult(await server.client.post('/organizations/suborganizations', { sub_org_name: 'Cached' }), 200);
  for (let i = 0; i < 3; i++) {
    assert.equal(status(ROOT_ORG, ROOT_KEY), ROOT_ORG);
    assert.equal(status(sub.id, sub.api_key), sub.id);
    assert.equal(status(ROOT_ORG, sub.api_key), 403);
    assert.equal(status(sub.id, ROOT_KEY), 403);
    assert.equal(status(sub.id, `${sub.api_key}x`), 401);
    assert.equal(status(sub.id, ''), 401);
    assert.equal(status(sub.id, undefined), 401);
    assert.equal(status('no-such-org', sub.api_key), 404);
  }

  const rotated = expectResult(await server.client.as(sub.id, sub.api_key).put('/organizations/api-keys'), 200).api_key as string;
  assert.equal(status(sub.id, sub.api_key), 401, 'the old key, though seen before, is refused');
  assert.equal(status(ROOT_ORG, sub.api_key), 401, 'and is not another organization\'s key either');
  assert.equal(status(sub.id, rotated), sub.id);
  assert.equal(status(ROOT_ORG, rotated), 403);
  assert.equal(status(ROOT_ORG, ROOT_KEY), ROOT_ORG);
});
