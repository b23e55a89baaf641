// Two organizations side by side: no route, and no cursor, lets one read or change the other's data.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectError, expectNoContent, expectResult, readAll } from '../support/expect.js';
import { routeCases } from '../support/routes.js';
import { Client, email, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let root: Client;
let sub: Client;

interface Seeded {
  person: string;
  group: string;
  webhook: string;
  role: string;
  permission: string;
  credential: string;
  oauthClient: string;
  /** an identity token of the person */
  token: string;
  mitmToken: string;
  /** the consistency token a write of the organization answered */
  consistencyToken: string;
  /** strings that appear only in this organization's data */
  marks: string[];
}
let rootData: Seeded;
let subData: Seeded;

async function seed(c: Client, tag: string): Promise<Seeded> {
  const group = `${tag}-only-group`;
  await c.post('/groups', { name: group });
  await c.post('/groups', { name: 'shared-name' });
  const created = await c.post('/persons', { ...email(`${tag}@example.com`), groups: [group, 'shared-name'] });
  const p = expectResult(created, 201);
  const consistencyToken = created.headers.get('service-consistency-token') as string;
  assert.ok(consistencyToken, 'a write answers a consistency token');
  expectNoContent(await c.put(`/persons/${p.person_id}/attributes/end_user_read_write`, { mark: `${tag}-person-secret` }));
  expectNoContent(await c.put('/organizations/attributes/end_user_read_write', { mark: `${tag}-org-secret` }));
  const hook = { name: `${tag}-hook`, target_url: `https://${tag}-hooks.example.com/in`, custom_headers: { 'X-Mark': [`${tag}-header-secret`] } };
  const w = expectResult(await c.post('/organizations/webhooks', hook), 201);
  await c.post(`/organizations/webhooks/${w.id}/triggers`, { trigger_type: 'event', trigger_name: 'PersonCreated_v1' });
  const permission = `${tag}:only-permission`;
  const role = `${tag}-only-role`;
  expectNoContent(await c.post('/rbac/permissions', { name: permission, description: `${tag}-permission-secret` }));
  expectNoContent(await c.post('/rbac/roles', { name: role, description: `${tag}-role-secret`, permissions: [permission] }));
  expectNoContent(await c.put(`/persons/${p.person_id}/roles`, { roles: [role] }));
  const credential = `${tag}-client`;
  const sso = { client_id: credential, client_secret: `${tag}-client-secret`, provider: 'google', label: `${tag}-sso-label` };
  assert.equal((await c.post('/organizations/sso/oidc/provider-credentials', sso)).status, 201);
  const oauthClient = expectResult(await c.post('/oauth2/clients', { client_name: `${tag}-oauth-name`, scopes: [`${tag}.scope`], grant_types: ['client_credentials'] }), 201).client_id;
  const token = expectResult(await c.post(`/persons/${p.person_id}/mint-token`), 201) as string;
  const mitmToken = expectResult(await c.post('/organizations/mitm-tokens', { allowed_domains: [`${tag}-shop.example`], tag: `${tag}-mitm-tag` }), 201).token as string;
  return {
    mitmToken,
    oauthClient,
    token,
    consistencyToken,
    person: p.person_id,
    group,
    webhook: w.id,
    role,
    permission,
    credential,
    marks: [p.person_id, `${tag}@example.com`, group, `${tag}-person-secret`, `${tag}-org-secret`, w.id, `${tag}-hooks.example.com`, `${tag}-header-secret`,
      permission, role, `${tag}-permission-secret`, `${tag}-role-secret`, credential, `${tag}-client-secret`, `${tag}-sso-label`,
      oauthClient, `${tag}-oauth-name`, `${tag}.scope`, mitmToken, `${tag}-shop.example`, `${tag}-mitm-tag`],
  };
}

before(async () => {
  server = await startTestServer();
  root = server.client;
  const created = expectResult(await root.post('/organizations/suborganizations', { sub_org_name: 'tenant' }), 200);
  sub = root.as(created.id, created.api_key);
  rootData = await seed(root, 'root');
  subData = await seed(sub, 'sub');
});
after(() => server.stop());

/** Every route, called by `actor` at the other organization's person and group; the other reads back unchanged. */
async function sweep(actor: Client, setActor: (c: Client) => void, victim: Client, target: Seeded): Promise<void> {
  const before = await readAll(victim);
  for (const r of routeCases({ person: target.person, group: target.group, webhook: target.webhook, role: target.role, permission: target.permission, credential: target.credential, oauthClient: target.oauthClient, token: target.token, mitmToken: target.mitmToken, consistencyToken: target.consistencyToken })) {
    const res = await actor.request(r.method, r.path, r.body, r.headers);
    const where = `${r.method} ${r.route}`;
    // cloud: the sample connection exists in neither organization, and the sample POST is refused before any provider call
    if (r.route.startsWith('/cloud/connections/')) expectError(res, 404, 'cloud connection');
    else if (r.route === '/cloud/connections' && r.method === 'POST') expectError(res, 400, 'endpoint');
    else if (r.route.includes('{person_id}')) expectError(res, 404, target.person);
    else if (r.route.includes('{group_name}')) expectError(res, 404, target.group);
    else if (r.route.includes('{webhook_id}')) expectError(res, 404, target.webhook);
    else if (r.route.includes('{role_name}')) expectError(res, 404, target.role);
    else if (r.route.includes('{permission_name}')) expectError(res, 404, target.permission);
    else if (r.route === '/rbac/check') expectError(res, 404, target.person);
    else if (r.route === '/token/revoke') expectError(res, 400, 'another organization');
    else if (r.route === '/consistency/{token}') expectError(res, 400, 'another organization');
    else if (r.route === '/oauth2/tokens/mint') expectError(res, 404, target.oauthClient);
    else if (r.route.startsWith('/oauth2/clients/')) expectError(res, 404, target.oauthClient);
    else if (r.route === '/organizations/mitm-tokens/{token}') expectError(res, 404, target.mitmToken);
    else if (r.route === '/oauth2/registration-tokens/{token_id}') expectError(res, 404, 'registration token');
    else if (r.route.includes('{oauth_client_id}')) expectError(res, 404, target.credential);
    else assert.ok(res.status < 300, `${where}: ${res.status} ${res.text}`);
    // a 404 echoes what was asked for; anything else must hold nothing of the other organization
    if (res.status !== 404) for (const mark of target.marks) assert.ok(!res.text.includes(mark), `${where} leaked ${mark}: ${res.text}`);
    if (r.route === '/organizations/api-keys') {
      const next = actor.as(actor.orgId, res.body.result.api_key);
      setActor(next);
      actor = next;
    }
  }
  assert.deepEqual(await readAll(victim), before, 'the other organization changed');
  assert.equal(expectResult(await victim.as('', '').post('/token/validate', { token: target.token }), 200).valid, true, "the other organization's token stays valid");
}

describe('isolation', () => {
  test('a suborganization reaches nothing of its parent, on any route', async () => {
    await sweep(sub, (c) => (sub = c), root, rootData);
  });

  test('the parent reaches nothing of its suborganization with its own key, on any route', async () => {
    await sweep(root, (c) => (root = c), sub, subData);
  });

  test('handles are unique per organization only, and equal group names are separate groups', async () => {
    const again = expectResult(await sub.post('/persons', email('root@example.com')), 201);
    assert.notEqual(again.person_id, rootData.person);
    const [rootMembers, subMembers] = await Promise.all([root.get('/groups/shared-name/persons'), sub.get('/groups/shared-name/persons')]);
    assert.deepEqual(expectResult(rootMembers, 200), [rootData.person]);
    assert.deepEqual(expectResult(subMembers, 200), [subData.person]);
    assert.equal((await sub.delete('/groups/shared-name')).status, 200);
    assert.equal(expectResult(await root.get('/groups/shared-name'), 200).members_count, 1);
    assert.deepEqual(expectResult(await root.get(`/persons/${rootData.person}/groups`), 200), ['root-only-group', 'shared-name']);
    assert.deepEqual(expectResult(await root.get(`/persons?handle=email_address:root@example.com`), 200).map((p: any) => p.person_id), [rootData.person]);
  });

  test("a cursor of one organization is refused (400) by the other, even for a list of the same name", async () => {
    await root.post('/groups', { name: 'cursor-group' });
    await sub.post('/groups', { name: 'cursor-group' });
    for (const c of [root, sub]) {
      for (let i = 0; i < 3; i++) {
        const p = expectResult(await c.post('/persons', email(`cursor${i}@${c.orgId}.example.com`.toLowerCase())), 201);
        await c.put(`/persons/${p.person_id}/groups`, { groups: ['cursor-group'] });
      }
    }
    for (const list of ['/persons', '/groups/cursor-group/persons']) {
      const first = await root.get(`${list}?paging=cursor&limit=1`);
      expectResult(first, 200);
      const page = first.body.meta.cursor_pagination;
      for (const cursor of [page.next_cursor, page.last_cursor]) {
        assert.equal(typeof cursor, 'string');
        expectError(await sub.get(`${list}?cursor=${encodeURIComponent(cursor)}`), 400, 'cursor');
        assert.equal((await root.get(`${list}?cursor=${encodeURIComponent(cursor)}`)).status, 200);
      }
    }
  });
});
