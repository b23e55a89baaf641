// The caller's organization, suborganizations and API key rotation over HTTP.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectResult, unchanged } from '../support/expect.js';
import { ROOT_KEY, ROOT_ORG, startTestServer, type Client, type TestServer } from '../support/server.js';

let server: TestServer;
let root: Client;

before(async () => {
  server = await startTestServer();
  root = server.client;
});
after(() => server.stop());

async function createSub(parent: Client, name: string): Promise<{ id: string; api_key: string; client: Client }> {
  const sub = expectResult(await parent.post('/organizations/suborganizations', { sub_org_name: name }), 200);
  assert.deepEqual(Object.keys(sub).sort(), ['api_key', 'id', 'org_name', 'parent_id']);
  assert.equal(sub.parent_id, parent.orgId);
  assert.equal(sub.org_name, name);
  assert.ok(sub.api_key.length >= 32);
  return { id: sub.id, api_key: sub.api_key, client: parent.as(sub.id, sub.api_key) };
}

test('GET /organizations answers the caller: id, org_name, parent_id (null at the root)', async () => {
  assert.deepEqual(expectResult(await root.get('/organizations'), 200), { id: ROOT_ORG, org_name: 'root', parent_id: null, tenant_name: 'root', persons_pool_org_ids: [ROOT_ORG], group_pool_org_ids: [ROOT_ORG] });
});

describe('suborganizations', () => {
  test('a child answers GET /organizations with its parent; its key is its own', async () => {
    const child = await createSub(root, 'Child One');
    assert.deepEqual(expectResult(await child.client.get('/organizations'), 200), { id: child.id, org_name: 'Child One', parent_id: ROOT_ORG, tenant_name: 'root', persons_pool_org_ids: [child.id], group_pool_org_ids: [child.id] });
    expectError(await root.as(ROOT_ORG, child.api_key).get('/organizations'), 403);
  });

  test('GET /organizations/suborganizations lists every descendant, grandchildren included, and only those', async () => {
    const fresh = await createSub(root, 'Branch');
    const a = await createSub(fresh.client, 'A');
    const b = await createSub(fresh.client, 'B');
    const a1 = await createSub(a.client, 'A1');
    const a1x = await createSub(a1.client, 'A1x');
    const list = async (c: Client) => expectResult<string[]>(await c.get('/organizations/suborganizations'), 200);
    assert.deepEqual((await list(fresh.client)).sort(), [a.id, b.id, a1.id, a1x.id].sort());
    assert.deepEqual((await list(a.client)).sort(), [a1.id, a1x.id].sort());
    assert.deepEqual(await list(b.client), []);
    assert.deepEqual(await list(a1x.client), []);
    const all = await list(root);
    for (const id of [fresh.id, a.id, b.id, a1.id, a1x.id]) assert.ok(all.includes(id), id);
    assert.ok(!all.includes(ROOT_ORG));
    // ancestors are not descendants: the grandchild's parent chain stays out of its list
    const grandchild = expectResult(await a1.client.get('/organizations'), 200);
    assert.equal(grandchild.parent_id, a.id);
    assert.equal(grandchild.tenant_name, 'root', 'the tenant is the top of the hierarchy');
  });

  test('bad bodies are a 400 naming the field, and no organization is created', async () => {
    const before = expectResult<string[]>(await root.get('/organizations/suborganizations'), 200);
    await unchanged(root, async () => {
      for (const body of [{}, { sub_org_name: '' }, { sub_org_name: '   ' }, { sub_org_name: 5 }, { sub_org_name: 'x'.repeat(201) }, { sub_org_name: 'ok', parent: 'x' }]) {
        const r = await root.post('/organizations/suborganizations', body);
        expectError(r, 400, Object.keys(body).find((k) => k !== 'sub_org_name') ?? 'sub_org_name');
      }
      expectError(await root.post('/organizations/suborganizations', '{"sub_org_name":'), 400, 'JSON');
    }, server);
    assert.deepEqual(expectResult(await root.get('/organizations/suborganizations'), 200), before);
  });
});

describe('PUT /organizations/api-keys', () => {
  test('the old key stops working at once (401), the new one works; other organizations keep theirs', async () => {
    const org = await createSub(root, 'Rotating');
    const sibling = await createSub(root, 'Sibling');
    const rotated = expectResult(await org.client.put('/organizations/api-keys'), 200);
    assert.deepEqual(Object.keys(rotated), ['api_key']);
    assert.notEqual(rotated.api_key, org.api_key);
    expectError(await org.client.get('/organizations'), 401, 'API key');
    expectError(await org.client.put('/organizations/api-keys'), 401);
    const renewed = org.client.as(org.id, rotated.api_key);
    assert.equal(expectResult(await renewed.get('/organizations'), 200).id, org.id);
    assert.equal(expectResult(await sibling.client.get('/organizations'), 200).id, sibling.id);
    assert.equal(expectResult(await root.get('/organizations'), 200).id, ROOT_ORG);
    // the new key belongs to that organization alone
    expectError(await root.as(sibling.id, rotated.api_key).get('/organizations'), 403);
    // and the old one is not "another organization's key" either
    expectError(await root.as(sibling.id, org.api_key).get('/organizations'), 401);
  });

  test('rotating twice leaves only the latest key working', async () => {
    const org = await createSub(root, 'Twice');
    const k1 = expectResult(await org.client.put('/organizations/api-keys'), 200).api_key;
    const k2 = expectResult(await org.client.as(org.id, k1).put('/organizations/api-keys'), 200).api_key;
    expectError(await org.client.as(org.id, k1).get('/organizations'), 401);
    expectError(await org.client.get('/organizations'), 401);
    assert.equal((await org.client.as(org.id, k2).get('/organizations')).status, 200);
  });

  test('the root key still works after the other rotations', async () => {
    assert.equal((await root.as(ROOT_ORG, ROOT_KEY).get('/organizations')).status, 200);
  });
});
