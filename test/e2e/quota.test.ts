// GET /organizations/quota/usage (the hierarchy's persons, groups, webhooks, OAuth clients and suborganizations)
// and GET /persons/{person_id}/organizations (the organizations that hold a person).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectResult, unchanged } from '../support/expect.js';
import { ROOT_ORG, startTestServer, type TestServer } from '../support/server.js';
import { newOrg, type Org } from '../support/auth.js';
import { assertOriginalShape } from '../support/original.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

async function usage(o: Org) {
  const r = await o.admin.get('/organizations/quota/usage');
  assertOriginalShape('GET /organizations/quota/usage', r.status, r.body);
  return expectResult(r, 200);
}

async function populate(o: Org, n: { persons: number; groups: number; webhooks: number; clients: number }) {
  for (let i = 0; i < n.persons; i++) assert.equal((await o.admin.post('/persons', { handles: [{ type: 'username', value: `p${i}` }] })).status, 201);
  for (let i = 0; i < n.groups; i++) assert.equal((await o.admin.post('/groups', { name: `group${i}` })).status, 201);
  for (let i = 0; i < n.webhooks; i++) assert.equal((await o.admin.post('/organizations/webhooks', { name: `w${i}`, target_url: `https://hooks.example.com/${o.id}/${i}` })).status, 201);
  for (let i = 0; i < n.clients; i++) assert.equal((await o.admin.post('/oauth2/clients', { client_name: `c${i}`, scopes: ['a.read'], grant_types: ['client_credentials'] })).status, 201);
}

/** A suborganization of `parent`, reached with its own key. */
async function subOf(parent: Org, name: string): Promise<Org> {
  const r = expectResult(await parent.admin.post('/organizations/suborganizations', { sub_org_name: name }), 200);
  return { id: r.id, admin: parent.admin.as(r.id, r.api_key), user: parent.admin.as(r.id, '') };
}

describe('GET /organizations/quota/usage', () => {
  test('counts the caller and every organization below it, at any depth, not those above or beside it', async () => {
    const top = await newOrg(server, 'top');
    const empty = await usage(top);
    assert.deepEqual(empty, { num_suborganizations: 0, num_persons: 0, num_groups: 0, num_webhooks: 0, num_oauth_clients: 0 });
    const child = await subOf(top, 'child');
    const grandchild = await subOf(child, 'grandchild');
    const sibling = await newOrg(server, 'sibling');
    await populate(top, { persons: 2, groups: 1, webhooks: 1, clients: 1 });
    await populate(child, { persons: 1, groups: 2, webhooks: 0, clients: 1 });
    await populate(grandchild, { persons: 3, groups: 0, webhooks: 2, clients: 0 });
    await populate(sibling, { persons: 5, groups: 5, webhooks: 1, clients: 1 });
    assert.deepEqual(await usage(top), { num_suborganizations: 2, num_persons: 6, num_groups: 3, num_webhooks: 3, num_oauth_clients: 2 });
    assert.deepEqual(await usage(child), { num_suborganizations: 1, num_persons: 4, num_groups: 2, num_webhooks: 2, num_oauth_clients: 1 });
    assert.deepEqual(await usage(grandchild), { num_suborganizations: 0, num_persons: 3, num_groups: 0, num_webhooks: 2, num_oauth_clients: 0 });
    const deleted = expectResult(await top.admin.get('/persons'), 200)[0].person_id as string;
    assert.equal((await top.admin.delete(`/persons/${deleted}`)).status, 204);
    assert.equal((await usage(top)).num_persons, 5);
  });

  test('refusals: no key 401, a query parameter 400', async () => {
    const o = await newOrg(server, 'refused');
    await unchanged(o.admin, async () => {
      expectError(await o.user.get('/organizations/quota/usage'), 401);
      expectError(await o.admin.get('/organizations/quota/usage?tier=free'), 400, 'tier');
    }, server);
  });
});

describe('GET /persons/{person_id}/organizations', () => {
  test("the person's organization, with its parent and the hierarchy's root as tenant_name", async () => {
    const o = await newOrg(server, 'holder');
    const person = expectResult(await o.admin.post('/persons', { handles: [{ type: 'username', value: 'ada' }] }), 201).person_id as string;
    const r = await o.admin.get(`/persons/${person}/organizations`);
    assertOriginalShape('GET /persons/{person_id}/organizations', r.status, r.body);
    assert.deepEqual(expectResult(r, 200), [{ id: o.id, org_name: 'holder', parent_id: ROOT_ORG, tenant_name: 'root' }]);

    const rootPerson = expectResult(await server.client.post('/persons', { handles: [{ type: 'username', value: 'root-ada' }] }), 201).person_id as string;
    const root = await server.client.get(`/persons/${rootPerson}/organizations`);
    assertOriginalShape('GET /persons/{person_id}/organizations', root.status, root.body);
    assert.deepEqual(expectResult(root, 200), [{ id: ROOT_ORG, org_name: 'root', tenant_name: 'root' }], 'a root organization has no parent_id');
  });

  test("refusals: a person of another organization or none 404, no key 401; nothing changes", async () => {
    const o = await newOrg(server, 'asker');
    const other = await newOrg(server, 'other');
    const theirs = expectResult(await other.admin.post('/persons', { handles: [{ type: 'username', value: 'eve' }] }), 201).person_id as string;
    await unchanged(o.admin, async () => {
      expectError(await o.admin.get(`/persons/${theirs}/organizations`), 404, theirs);
      expectError(await o.admin.get('/persons/nobody/organizations'), 404, 'nobody');
      expectError(await o.user.get(`/persons/${theirs}/organizations`), 401);
    }, server);
  });
});
