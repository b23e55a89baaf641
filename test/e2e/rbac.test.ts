// Roles and permissions over HTTP on a real server: the statuses of API.md, idempotent creates that emit
// nothing the second time, 409 for a permission in use, role deletion revoking it, effective permissions and
// the check, paging, suborganizations, tokens carrying roles (verified with jose), the events in both forms
// (the plain twin held back while a replication link is cut), and a restart from snapshot and log.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { validateEvent } from '../../src/events/validate.js';
import { newOrg, personWithPassword, recordEvents, signIn, verifyIdentityToken, type Org } from '../support/auth.js';
import { expectError, expectNoContent, expectResult, offsets, unchanged } from '../support/expect.js';
import { caughtUp, setLink, startRegionServer, waitFor } from '../support/regions.js';
import { email, removeDir, ROOT_ORG, startTestServer, tempDir, type TestServer } from '../support/server.js';
import { Subscriber, type JsonFrame } from '../support/ws.js';

const PASSWORD = 'correct horse battery';

/** The event's fields besides event_metadata, after checking it against the catalog. */
function body(event: Record<string, any>): Record<string, unknown> {
  const { event_metadata, ...rest } = event;
  assert.equal(validateEvent(event_metadata.event_name, event), null, event_metadata.event_name);
  return rest;
}

describe('roles and permissions on one region', () => {
  let server: TestServer;
  let events: ReturnType<typeof recordEvents>;
  let org: Org;
  const named = (name: string) => events(org.id, name).map(body);

  before(async () => {
    server = await startTestServer();
    events = recordEvents(server);
    org = await newOrg(server, 'rbac');
  });
  after(() => server.stop());

  test('permissions: create 204 and idempotent by name, emitting nothing the second time; get, patch, list', async () => {
    const c = org.admin;
    expectNoContent(await c.post('/rbac/permissions', { name: 'documents:read', description: 'read documents' }));
    const walAfterFirst = offsets(server)[org.id];
    expectNoContent(await c.post('/rbac/permissions', { name: 'documents:read', description: 'something else' }));
    assert.equal(offsets(server)[org.id], walAfterFirst, 'the second create writes nothing');
    assert.deepEqual(named('PermissionCreated_InRegion_v1'), [{ permission_name: 'documents:read', description: 'read documents', region: 'europe-belgium' }]);
    assert.deepEqual(named('PermissionCreated_v1'), [{ permission_name: 'documents:read', description: 'read documents' }]);

    const got = expectResult(await c.get('/rbac/permissions/documents:read'), 200);
    assert.deepEqual(Object.keys(got), ['name', 'description', 'created']);
    assert.equal(got.description, 'read documents');
    assert.match(got.created, /^\d{4}-\d\d-\d\dT/);
    expectNoContent(await c.patch('/rbac/permissions/documents:read', { description: 'read every document' }));
    assert.equal(expectResult(await c.get('/rbac/permissions/documents%3Aread'), 200).description, 'read every document');
    assert.deepEqual(named('PermissionUpdated_InRegion_v1'), [{ permission_name: 'documents:read', description: 'read every document', region: 'europe-belgium' }]);
    assert.deepEqual(named('PermissionUpdated_v1'), [{ permission_name: 'documents:read', description: 'read every document' }]);

    // a name with "/" inside travels percent-encoded in the path
    expectNoContent(await c.post('/rbac/permissions', { name: 'api/v1.write' }));
    assert.equal(expectResult(await c.get('/rbac/permissions/api%2Fv1.write'), 200).name, 'api/v1.write');
    expectError(await c.get('/rbac/permissions/nope'), 404, 'nope');
    expectError(await c.patch('/rbac/permissions/nope', { description: 'x' }), 404, 'nope');
    expectError(await c.delete('/rbac/permissions/nope'), 404, 'nope');

    await unchanged(c, async () => {
      expectError(await c.post('/rbac/permissions', { name: 'a' }), 400, 'name');
      expectError(await c.post('/rbac/permissions', { name: 'x'.repeat(1025) }), 400, 'name');
      expectError(await c.post('/rbac/permissions', { name: 'has space' }), 400, 'name');
      expectError(await c.post('/rbac/permissions', { description: 'no name' }), 400, 'name');
      expectError(await c.post('/rbac/permissions', { name: 'ok.name', extra: 1 }), 400, 'extra');
    }, server);
    expectNoContent(await c.post('/rbac/permissions', { name: 'x'.repeat(1024) }));
    expectNoContent(await c.delete(`/rbac/permissions/${'x'.repeat(1024)}`));
    assert.deepEqual(named('PermissionDeleted_v1'), [{ permission_name: 'x'.repeat(1024) }]);
  });

  test('roles: permissions must exist (400, nothing stored); 409 deleting a permission a role includes', async () => {
    const c = org.admin;
    expectNoContent(await c.post('/rbac/permissions', { name: 'documents:write' }));
    await unchanged(c, async () => {
      expectError(await c.post('/rbac/roles', { name: 'editor', permissions: ['documents:read', 'ghost:perm'] }), 400, 'permissions[1]', 'ghost:perm');
      expectError(await c.post('/rbac/roles', { name: 'bad:role' }), 400, 'name');
    }, server);
    expectNoContent(await c.post('/rbac/roles', { name: 'editor', description: 'edits', permissions: ['documents:write', 'documents:read', 'documents:read'] }));
    expectNoContent(await c.post('/rbac/roles', { name: 'editor', description: 'other', permissions: [] }));
    assert.deepEqual(expectResult(await c.get('/rbac/roles/editor'), 200), {
      name: 'editor', description: 'edits', created: expectResult(await c.get('/rbac/roles/editor'), 200).created, permissions: ['documents:read', 'documents:write'],
    });
    assert.deepEqual(named('RoleCreated_InRegion_v1'), [{ role_name: 'editor', description: 'edits', permissions: ['documents:read', 'documents:write'], region: 'europe-belgium' }]);
    assert.deepEqual(named('RoleCreated_v1'), [{ role_name: 'editor', description: 'edits', permissions: ['documents:read', 'documents:write'] }]);

    await unchanged(c, () => c.delete('/rbac/permissions/documents:write').then((r) => expectError(r, 409, 'documents:write', 'editor')), server);
    expectNoContent(await c.patch('/rbac/roles/editor', { permissions: ['documents:read'] }));
    assert.deepEqual(named('RoleUpdated_v1'), [{ role_name: 'editor', description: 'edits', permissions: ['documents:read'] }]);
    expectNoContent(await c.delete('/rbac/permissions/documents:write'));
    expectError(await c.patch('/rbac/roles/editor', { permissions: ['documents:write'] }), 400, 'documents:write');
    expectError(await c.get('/rbac/roles/ghost'), 404, 'ghost');
  });

  test("a person's roles and additional permissions: replace-set rules, 204, events with new and old, effective set, check", async () => {
    const c = org.admin;
    expectNoContent(await c.post('/rbac/permissions', { name: 'reports:view' }));
    expectNoContent(await c.post('/rbac/roles', { name: 'viewer', permissions: ['reports:view'] }));
    const id = expectResult(await c.post('/persons', email('ada@example.com')), 201).person_id as string;
    assert.deepEqual(expectResult(await c.get(`/persons/${id}/roles`), 200), []);
    assert.deepEqual(expectResult(await c.get(`/persons/${id}/permissions`), 200), []);

    expectNoContent(await c.put(`/persons/${id}/roles`, { roles: ['viewer', 'editor', 'viewer'] }));
    assert.deepEqual(expectResult(await c.get(`/persons/${id}/roles`), 200), ['editor', 'viewer']);
    const wal = offsets(server)[org.id];
    expectNoContent(await c.put(`/persons/${id}/roles`, { roles: ['editor', 'viewer'] }));
    assert.equal(offsets(server)[org.id], wal, 'the same set again writes nothing');
    await unchanged(c, async () => {
      expectError(await c.put(`/persons/${id}/roles`, { roles: ['editor', 'nobody'] }), 400, 'roles[1]', 'nobody');
      expectError(await c.put(`/persons/${id}/additional-permissions`, { permissions: ['ghost:perm'] }), 400, 'permissions[0]', 'ghost:perm');
      expectError(await c.put('/persons/no-such-person/roles', { roles: [] }), 404, 'no-such-person');
      expectError(await c.put(`/persons/${id}/roles`, {}), 400, 'roles');
    }, server);

    expectNoContent(await c.post('/rbac/permissions', { name: 'billing:admin' }));
    expectNoContent(await c.put(`/persons/${id}/additional-permissions`, { permissions: ['billing:admin', 'reports:view'] }));
    assert.deepEqual(expectResult(await c.get(`/persons/${id}/additional-permissions`), 200), ['billing:admin', 'reports:view']);
    assert.deepEqual(expectResult(await c.get(`/persons/${id}/permissions`), 200), ['billing:admin', 'documents:read', 'reports:view']);

    assert.deepEqual(named('RolesSetToPerson_InRegion_v1'), [{ new_roles: ['editor', 'viewer'], old_roles: [], person_id: id, region: 'europe-belgium' }]);
    assert.deepEqual(named('RolesSetToPerson_v1'), [{ new_roles: ['editor', 'viewer'], old_roles: [], person_id: id }]);
    assert.deepEqual(named('PermissionsSetToPerson_InRegion_v1'), [{ new_permissions: ['billing:admin', 'reports:view'], old_permissions: [], person_id: id, region: 'europe-belgium' }]);
    assert.deepEqual(named('PermissionsSetToPerson_v1'), [{ new_permissions: ['billing:admin', 'reports:view'], old_permissions: [], person_id: id }]);

    // the check is a read of memory: no WAL entry, no event, whatever it answers
    const check = (permission_name: string, person_id = id) => c.post('/rbac/check', { person_id, permission_name });
    await unchanged(c, async () => {
      assert.deepEqual(expectResult(await check('documents:read'), 200), { granted: true });
      assert.deepEqual(expectResult(await check('billing:admin'), 200), { granted: true });
      assert.deepEqual(expectResult(await check('documents:write'), 200), { granted: false });
      assert.deepEqual(expectResult(await check('never.defined'), 200), { granted: false });
      expectError(await check('documents:read', 'no-such-person'), 404, 'no-such-person');
      expectError(await check('bad name'), 400, 'permission_name');
      expectError(await c.post('/rbac/check', { person_id: id }), 400, 'permission_name');
    }, server);

    expectNoContent(await c.put(`/persons/${id}/additional-permissions`, { permissions: [] }));
    assert.deepEqual(named('PermissionsSetToPerson_v1').at(-1), { new_permissions: [], old_permissions: ['billing:admin', 'reports:view'], person_id: id });
    assert.deepEqual(expectResult(await check('billing:admin'), 200), { granted: false });
  });

  test('deleting a role revokes it from every person holding it, RolesSetToPerson for each changed person', async () => {
    const c = org.admin;
    expectNoContent(await c.post('/rbac/roles', { name: 'temp' }));
    const ids: string[] = [];
    for (const [i, roles] of [['temp', 'viewer'], ['viewer'], ['temp']].entries()) {
      const id = expectResult(await c.post('/persons', email(`holder${i}@example.com`)), 201).person_id as string;
      expectNoContent(await c.put(`/persons/${id}/roles`, { roles }));
      ids.push(id);
    }
    const before = named('RolesSetToPerson_v1').length;
    expectNoContent(await c.delete('/rbac/roles/temp'));
    assert.deepEqual(named('RolesSetToPerson_v1').slice(before), [
      { new_roles: ['viewer'], old_roles: ['temp', 'viewer'], person_id: ids[0] },
      { new_roles: [], old_roles: ['temp'], person_id: ids[2] },
    ]);
    assert.deepEqual(named('RoleDeleted_InRegion_v1'), [{ role_name: 'temp', region: 'europe-belgium' }]);
    assert.deepEqual(named('RoleDeleted_v1'), [{ role_name: 'temp' }]);
    assert.deepEqual(expectResult(await c.get(`/persons/${ids[0]}/roles`), 200), ['viewer']);
    assert.deepEqual(expectResult(await c.get(`/persons/${ids[2]}/roles`), 200), []);
    expectError(await c.delete('/rbac/roles/temp'), 404, 'temp');
  });

  test('/openapi.json lists every route with its statuses', async () => {
    const r = await server.client.as('', '').get('/openapi.json');
    assert.equal(r.status, 200);
    const paths = r.body.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
    const expected: Array<[string, string, string]> = [
      ['post', '/rbac/permissions', '204'], ['get', '/rbac/permissions', '200'],
      ['get', '/rbac/permissions/{permission_name}', '200'], ['patch', '/rbac/permissions/{permission_name}', '204'], ['delete', '/rbac/permissions/{permission_name}', '409'],
      ['post', '/rbac/roles', '204'], ['get', '/rbac/roles', '200'],
      ['get', '/rbac/roles/{role_name}', '200'], ['patch', '/rbac/roles/{role_name}', '204'], ['delete', '/rbac/roles/{role_name}', '204'],
      ['get', '/persons/{person_id}/roles', '200'], ['put', '/persons/{person_id}/roles', '204'],
      ['get', '/persons/{person_id}/additional-permissions', '200'], ['put', '/persons/{person_id}/additional-permissions', '204'],
      ['get', '/persons/{person_id}/permissions', '200'], ['post', '/rbac/check', '200'],
    ];
    for (const [method, path, status] of expected) assert.ok(paths[path]?.[method]?.responses[status], `${method.toUpperCase()} ${path} ${status}`);
  });

  test('lists page by offset and by cursor, in name order', async () => {
    const o = await newOrg(server, 'paging');
    const names = ['p.c', 'p.a', 'p.e', 'p.b', 'p.d'];
    for (const name of names) expectNoContent(await o.admin.post('/rbac/permissions', { name }));
    for (const name of names) expectNoContent(await o.admin.post('/rbac/roles', { name: name.replace('.', '-') }));
    const offsetPage = await o.admin.get('/rbac/permissions?limit=2&offset=1');
    assert.deepEqual(expectResult(offsetPage, 200), ['p.b', 'p.c']);
    assert.deepEqual(offsetPage.body.meta.pagination, { limit: 2, offset: 1, total_count: 5 });
    for (const [list, expected] of [['/rbac/permissions', [...names].sort()], ['/rbac/roles', [...names].sort().map((n) => n.replace('.', '-'))]] as const) {
      const walked: string[] = [];
      let r = await o.admin.get(`${list}?paging=cursor&limit=2`);
      assert.equal(r.body.meta.cursor_pagination.total_count, 5);
      for (;;) {
        walked.push(...expectResult<string[]>(r, 200));
        const next = r.body.meta.cursor_pagination.next_cursor as string | undefined;
        if (next === undefined) break;
        r = await o.admin.get(`${list}?cursor=${encodeURIComponent(next)}`);
      }
      assert.deepEqual(walked, expected);
    }
    // the lists hold names, as the original's; each name's details are one GET away
    const [first] = expectResult<string[]>(await o.admin.get('/rbac/roles?limit=1'), 200);
    assert.deepEqual(Object.keys(expectResult(await o.admin.get(`/rbac/roles/${first}`), 200)), ['name', 'description', 'created', 'permissions']);
    // a cursor of one list is refused by another
    const cursor = (await o.admin.get('/rbac/roles?paging=cursor&limit=1')).body.meta.cursor_pagination.next_cursor as string;
    expectError(await o.admin.get(`/rbac/permissions?cursor=${encodeURIComponent(cursor)}`), 400, 'cursor');
  });

  test('suborganizations see only their own roles and permissions: a name used in the parent is free in a child', async () => {
    const parent = await newOrg(server, 'parent');
    const created = expectResult(await parent.admin.post('/organizations/suborganizations', { sub_org_name: 'child' }), 200);
    const child = { id: created.id as string, admin: parent.admin.as(created.id, created.api_key) };
    expectNoContent(await parent.admin.post('/rbac/permissions', { name: 'shared.name', description: 'parent' }));
    expectNoContent(await parent.admin.post('/rbac/roles', { name: 'shared-role', permissions: ['shared.name'] }));
    expectError(await child.admin.get('/rbac/permissions/shared.name'), 404);
    assert.deepEqual(expectResult(await child.admin.get('/rbac/roles'), 200), []);
    expectError(await child.admin.post('/rbac/roles', { name: 'r1', permissions: ['shared.name'] }), 400, 'shared.name');
    expectNoContent(await child.admin.post('/rbac/permissions', { name: 'shared.name', description: 'child' }));
    assert.equal(events(child.id, 'PermissionCreated_v1').length, 1, 'the child emitted its own create');
    expectNoContent(await child.admin.post('/rbac/roles', { name: 'shared-role' }));
    assert.equal(expectResult(await parent.admin.get('/rbac/permissions/shared.name'), 200).description, 'parent');
    assert.deepEqual(expectResult(await parent.admin.get('/rbac/roles/shared-role'), 200).permissions, ['shared.name']);
    assert.deepEqual(expectResult(await child.admin.get('/rbac/roles/shared-role'), 200).permissions, []);
    expectNoContent(await child.admin.delete('/rbac/roles/shared-role'));
    expectNoContent(await child.admin.delete('/rbac/permissions/shared.name'));
    expectResult(await parent.admin.get('/rbac/roles/shared-role'), 200);
    expectResult(await parent.admin.get('/rbac/permissions/shared.name'), 200);
  });

  test('issued tokens carry the roles: mint-token and password sign-in, verified with jose; none without roles', async () => {
    const o = await newOrg(server, 'tokens');
    const id = await personWithPassword(o, 'bo@example.com', PASSWORD);
    const mint = async () => expectResult<string>(await o.admin.post(`/persons/${id}/mint-token`, {}), 201);

    assert.equal((await verifyIdentityToken(server, await mint()))['roles'], undefined, 'no roles claim without roles');
    expectNoContent(await o.admin.post('/rbac/roles', { name: 'viewer' }));
    expectNoContent(await o.admin.post('/rbac/roles', { name: 'admin' }));
    expectNoContent(await o.admin.put(`/persons/${id}/roles`, { roles: ['viewer', 'admin'] }));

    const minted = await verifyIdentityToken(server, await mint());
    assert.deepEqual(minted['roles'], ['admin', 'viewer']);
    const signedIn = await signIn(o, 'bo@example.com', PASSWORD);
    assert.equal(signedIn.status, 200, signedIn.text);
    const claims = await verifyIdentityToken(server, signedIn.body.result.token);
    assert.deepEqual(claims['roles'], ['admin', 'viewer']);
    assert.deepEqual(claims.authenticated_methods, ['password']);

    // roles stays reserved for custom claims
    expectError(await o.admin.post(`/persons/${id}/mint-token`, { custom_claims: { roles: ['root'] } }), 400, 'roles');
    expectNoContent(await o.admin.delete('/rbac/roles/admin'));
    assert.deepEqual(decodeJwt(await mint())['roles'], ['viewer'], 'a deleted role leaves the next token');
    expectNoContent(await o.admin.put(`/persons/${id}/roles`, { roles: [] }));
    assert.equal(decodeJwt(await mint())['roles'], undefined);

    // POST /persons takes roles too; they must exist
    expectError(await o.admin.post('/persons', { ...email('cy@example.com'), roles: ['nobody'] }), 400, 'roles[0]', 'nobody');
    const cy = expectResult(await o.admin.post('/persons', { ...email('cy@example.com'), roles: ['viewer'] }), 201).person_id as string;
    assert.deepEqual(expectResult(await o.admin.get(`/persons/${cy}/roles`), 200), ['viewer']);
    assert.deepEqual(events(o.id, 'RolesSetToPerson_v1').map(body).at(-1), { new_roles: ['viewer'], old_roles: [], person_id: cy });
    const token = expectResult<string>(await o.admin.post(`/persons/${cy}/mint-token`), 201);
    assert.deepEqual((await verifyIdentityToken(server, token))['roles'], ['viewer']);
  });
});

describe('roles and permissions across a restart', () => {
  test('state comes back from a snapshot and from the log tail', async () => {
    const dataDir = tempDir();
    try {
      // a snapshot every 5 entries: the state below spans a snapshot and a tail after it
      const env = { SERVICE_SNAPSHOT_INTERVAL: '5' };
      let server = await startTestServer(env, {}, dataDir);
      const c = server.client;
      expectNoContent(await c.post('/rbac/permissions', { name: 'a:read', description: 'A' }));
      expectNoContent(await c.post('/rbac/permissions', { name: 'b:read' }));
      expectNoContent(await c.post('/rbac/roles', { name: 'reader', description: 'R', permissions: ['a:read'] }));
      const id = expectResult(await c.post('/persons', email('kept@example.com')), 201).person_id as string;
      expectNoContent(await c.put(`/persons/${id}/roles`, { roles: ['reader'] }));
      expectNoContent(await c.put(`/persons/${id}/additional-permissions`, { permissions: ['b:read'] }));
      expectNoContent(await c.patch('/rbac/roles/reader', { description: 'readers' }));
      const read = async (s: TestServer) => ({
        permissions: expectResult(await s.client.get('/rbac/permissions'), 200),
        roles: expectResult(await s.client.get('/rbac/roles'), 200),
        effective: expectResult(await s.client.get(`/persons/${id}/permissions`), 200),
        roles_of: expectResult(await s.client.get(`/persons/${id}/roles`), 200),
      });
      const before = await read(server);
      assert.deepEqual(before.effective, ['a:read', 'b:read']);
      await server.stop();
      server = await startTestServer(env, {}, dataDir);
      try {
        assert.deepEqual(await read(server), before);
        assert.deepEqual(expectResult(await server.client.post('/rbac/check', { person_id: id, permission_name: 'a:read' }), 200), { granted: true });
      } finally {
        await server.stop();
      }
    } finally {
      removeDir(dataDir);
    }
  });
});

describe('regional twins of access-control events', () => {
  let server: TestServer;
  let sub: Subscriber;
  const dataDir = tempDir();
  before(async () => {
    server = await startRegionServer({}, dataDir);
    await waitFor(() => caughtUp(server.base), 30_000, 'the links to stream');
    sub = await Subscriber.open(server.base);
  });
  after(async () => {
    await sub.close();
    await server.stop();
    removeDir(dataDir);
  });

  const named = (name: string) => sub.frames.filter((f) => f.event.event_metadata.event_name === name);
  const owed = () => server.service.registry.get(ROOT_ORG)?.state.owed_twins ?? [];

  /** Appends a marker event and waits for it: every event committed before it has been received by then. */
  async function settle(): Promise<void> {
    const res = await server.client.post('/test-events', [{ event_name: 'ServiceSDKLoaded_v1' }]);
    assert.equal(res.status, 201, res.text);
    const offset = res.body.result[0].offset as number;
    await sub.waitUntil(() => sub.frames.some((f) => f.offset === offset), 30_000, `marker ${offset}`);
  }

  test('the plain twins are held while a link is cut and emitted exactly once after it heals, after their _InRegion forms', async () => {
    const c = server.client;
    const id = expectResult(await c.post('/persons', email('twin@example.com')), 201).person_id as string;
    assert.equal((await setLink(server.base, 'asia-japan', { link: 'cut' })).status, 200);

    expectNoContent(await c.post('/rbac/permissions', { name: 'twin:perm', description: 'd' }));
    expectNoContent(await c.post('/rbac/roles', { name: 'twin-role', permissions: ['twin:perm'] }));
    expectNoContent(await c.put(`/persons/${id}/roles`, { roles: ['twin-role'] }));
    expectNoContent(await c.put(`/persons/${id}/additional-permissions`, { permissions: ['twin:perm'] }));
    const iowa = server.service.regions.link('us-iowa');
    const last = owed().at(-1)?.offset as number;
    assert.equal(owed().length, 4);
    await waitFor(() => (iowa?.acked(ROOT_ORG) ?? 0) >= last, 30_000, 'us-iowa to acknowledge the entries');
    await settle();
    const kinds = ['PermissionCreated', 'RoleCreated', 'RolesSetToPerson', 'PermissionsSetToPerson'];
    for (const k of kinds) {
      assert.equal(named(`${k}_InRegion_v1`).length, 1, `${k}_InRegion_v1 at the local commit`);
      assert.deepEqual(named(`${k}_v1`), [], `no ${k}_v1 while asia-japan lacks the entry`);
    }

    assert.equal((await setLink(server.base, 'asia-japan', { link: 'up' })).status, 200);
    await sub.waitUntil(() => kinds.every((k) => named(`${k}_v1`).length >= 1), 30_000, 'the plain twins');
    // later writes acknowledged everywhere emit no twin again
    expectNoContent(await c.patch('/rbac/permissions/twin:perm', { description: 'later' }, { 'Service-Required-Consistency': 'all_regions' }));
    await settle();
    assert.deepEqual(owed(), []);

    const expected: Record<string, Record<string, unknown>> = {
      PermissionCreated: { permission_name: 'twin:perm', description: 'd' },
      RoleCreated: { role_name: 'twin-role', description: '', permissions: ['twin:perm'] },
      RolesSetToPerson: { new_roles: ['twin-role'], old_roles: [], person_id: id },
      PermissionsSetToPerson: { new_permissions: ['twin:perm'], old_permissions: [], person_id: id },
    };
    let previousPlain = 0;
    for (const k of kinds) {
      const [inRegion, plain] = [named(`${k}_InRegion_v1`), named(`${k}_v1`)] as [JsonFrame[], JsonFrame[]];
      assert.equal(inRegion.length, 1, k);
      assert.equal(plain.length, 1, `${k}_v1 exactly once`);
      assert.deepEqual(body(inRegion[0]!.event), { ...expected[k], region: 'europe-belgium' }, k);
      assert.deepEqual(body(plain[0]!.event), expected[k], k);
      assert.ok(inRegion[0]!.offset < plain[0]!.offset, `${k}: _InRegion first`);
      assert.ok(plain[0]!.offset > previousPlain, 'plain twins follow entry order');
      previousPlain = plain[0]!.offset;
    }
    assert.deepEqual(named('PermissionUpdated_v1').map((f) => body(f.event)), [{ permission_name: 'twin:perm', description: 'later' }]);
  });
});
