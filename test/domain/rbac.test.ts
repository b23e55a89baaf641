import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/changes.js';
import { effectivePermissions, hasPermission } from '../../src/domain/rbac.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import type { Person } from '../../src/domain/state.js';
import { aPerson, fixedContext, given, GENESIS, NOW_MS, refused, when } from '../support/domain.js';

const CREATED = new Date(NOW_MS).toISOString();
const aPermission = (name: string, description = ''): Change => ({ t: 'PermissionCreated', permission: { name, description, created: GENESIS.created } });
const aRole = (name: string, permissions: string[] = [], description = ''): Change => ({ t: 'RoleCreated', role: { name, description, created: GENESIS.created, permissions } });
const names = (events: readonly { name: string }[]) => events.map((e) => e.name);
const owed = (changes: readonly Change[]) => changes.filter((c) => c.t === 'TwinOwed').map((c) => (c.t === 'TwinOwed' ? c.twin : undefined));
const person = (s: ReturnType<typeof given>, id: string) => s.persons.get(id) as Person;

describe('CreatePermission', () => {
  test('given none, when created, then PermissionCreated_InRegion now with the local region and the plain twin owed', () => {
    const { decision, after } = when(given(), { kind: 'CreatePermission', name: 'documents:read', description: 'read documents' });
    assert.deepEqual(decision.events, [{ name: 'PermissionCreated_InRegion_v1', body: { permission_name: 'documents:read', description: 'read documents', region: 'europe-belgium' } }]);
    assert.deepEqual(owed(decision.changes), [{ offset: 1, name: 'PermissionCreated_v1', body: { permission_name: 'documents:read', description: 'read documents' } }]);
    assert.deepEqual(after.permissions.get('documents:read'), { name: 'documents:read', description: 'read documents', created: CREATED });
  });

  test('with a single region, both forms come from the same decision, _InRegion first', () => {
    const ctx = { ...fixedContext(), regions: ['europe-belgium'] };
    const { decision } = when(given(), { kind: 'CreatePermission', name: 'p1' }, ctx);
    assert.deepEqual(decision.events, [
      { name: 'PermissionCreated_InRegion_v1', body: { permission_name: 'p1', description: '', region: 'europe-belgium' } },
      { name: 'PermissionCreated_v1', body: { permission_name: 'p1', description: '' } },
    ]);
    assert.deepEqual(owed(decision.changes), []);
  });

  test('given it exists, when created again with another description, then nothing changes and nothing is emitted', () => {
    const { decision, after } = when(given(aPermission('p1', 'first')), { kind: 'CreatePermission', name: 'p1', description: 'other' });
    assert.deepEqual(decision.changes, []);
    assert.deepEqual(decision.events, []);
    assert.equal(after.permissions.get('p1')?.description, 'first');
  });

  test('names: the group-name rule plus . / : inside, 2 to 1024 characters', () => {
    for (const name of ['ab', 'a'.repeat(1024), 'documents:read', 'api/v1.write', 'a.b-c_d', 'urn:x:y/z', 'A9']) {
      assert.equal(when(given(), { kind: 'CreatePermission', name }).decision.events.length, 1, name);
    }
    refused(given(), { kind: 'CreatePermission', name: 'a'.repeat(1025) }, 'ERR_BAD_REQUEST', 'name', '1024');
    for (const name of ['a', '', ':ab', 'ab:', '/ab', 'ab/', '.ab', 'a b', 'a;b', 'é1', 'ab\n']) {
      refused(given(), { kind: 'CreatePermission', name }, 'ERR_BAD_REQUEST', 'name:');
    }
  });
});

describe('UpdatePermission and DeletePermission', () => {
  test('a new description emits PermissionUpdated with both fields; the same one, nothing', () => {
    const { decision, after } = when(given(aPermission('p1', 'old')), { kind: 'UpdatePermission', name: 'p1', description: 'new' });
    assert.deepEqual(names(decision.events), ['PermissionUpdated_InRegion_v1']);
    assert.deepEqual(decision.events[0]?.body, { permission_name: 'p1', description: 'new', region: 'europe-belgium' });
    assert.equal(after.permissions.get('p1')?.description, 'new');
    assert.equal(after.permissions.get('p1')?.created, GENESIS.created);
    assert.deepEqual(when(given(aPermission('p1', 'old')), { kind: 'UpdatePermission', name: 'p1', description: 'old' }).decision.changes, []);
    refused(given(), { kind: 'UpdatePermission', name: 'p1', description: 'x' }, 'ERR_NOT_FOUND', 'p1');
  });

  test('a permission a role includes cannot be deleted: 409 naming the roles', () => {
    refused(given(aPermission('p1'), aRole('r2', ['p1']), aRole('r1', ['p1'])), { kind: 'DeletePermission', name: 'p1' }, 'ERR_CONFLICT', 'p1', '"r1", "r2"');
  });

  test('deleting a permission held directly revokes it from each holder, PermissionsSetToPerson for each', () => {
    const world = given(aPermission('p1'), aPermission('p2'), aPerson('a'), aPerson('b'), aPerson('c'),
      { t: 'PersonAdditionalPermissionsSet', person_id: 'a', permissions: ['p1', 'p2'] },
      { t: 'PersonAdditionalPermissionsSet', person_id: 'c', permissions: ['p1'] });
    const { decision, after } = when(world, { kind: 'DeletePermission', name: 'p1' });
    assert.deepEqual(names(decision.events), ['PermissionsSetToPerson_InRegion_v1', 'PermissionsSetToPerson_InRegion_v1', 'PermissionDeleted_InRegion_v1']);
    assert.deepEqual(decision.events[0]?.body, { new_permissions: ['p2'], old_permissions: ['p1', 'p2'], person_id: 'a', region: 'europe-belgium' });
    assert.deepEqual(decision.events[1]?.body, { new_permissions: [], old_permissions: ['p1'], person_id: 'c', region: 'europe-belgium' });
    assert.deepEqual(decision.events[2]?.body, { permission_name: 'p1', region: 'europe-belgium' });
    assert.deepEqual(owed(decision.changes).map((t) => t?.name), ['PermissionsSetToPerson_v1', 'PermissionsSetToPerson_v1', 'PermissionDeleted_v1']);
    assert.equal(after.permissions.has('p1'), false);
    assert.deepEqual(person(after, 'a').additional_permissions, ['p2']);
    assert.deepEqual(person(after, 'c').additional_permissions, []);
    refused(after, { kind: 'DeletePermission', name: 'p1' }, 'ERR_NOT_FOUND', 'p1');
  });
});

describe('roles', () => {
  const world = () => given(aPermission('p1'), aPermission('p2'), aPermission('p3'));

  test('given permissions, when a role is created with them, then RoleCreated with name, description and the sorted set', () => {
    const { decision, after } = when(world(), { kind: 'CreateRole', name: 'editor', description: 'edits', permissions: ['p2', 'p1', 'p2'] });
    assert.deepEqual(decision.events, [{ name: 'RoleCreated_InRegion_v1', body: { role_name: 'editor', description: 'edits', permissions: ['p1', 'p2'], region: 'europe-belgium' } }]);
    assert.deepEqual(owed(decision.changes).map((t) => t?.body), [{ role_name: 'editor', description: 'edits', permissions: ['p1', 'p2'] }]);
    assert.deepEqual(after.roles.get('editor'), { name: 'editor', description: 'edits', created: CREATED, permissions: ['p1', 'p2'] });
  });

  test("a role's permissions must exist: 400 naming the missing one, nothing stored", () => {
    refused(world(), { kind: 'CreateRole', name: 'editor', permissions: ['p1', 'nope'] }, 'ERR_BAD_REQUEST', 'permissions[1]', 'nope');
    refused(world(), { kind: 'UpdateRole', name: 'editor', permissions: ['p1'] }, 'ERR_NOT_FOUND', 'editor');
  });

  test('created again by name: nothing changes and nothing is emitted', () => {
    const { decision, after } = when(given(aPermission('p1'), aRole('editor')), { kind: 'CreateRole', name: 'editor', description: 'x', permissions: ['p1'] });
    assert.deepEqual(decision.changes, []);
    assert.deepEqual(decision.events, []);
    assert.deepEqual(after.roles.get('editor')?.permissions, []);
  });

  test('role names follow the group-name rule', () => {
    refused(world(), { kind: 'CreateRole', name: 'a:b' }, 'ERR_BAD_REQUEST', 'name:', 'role name');
    refused(world(), { kind: 'CreateRole', name: 'a'.repeat(101) }, 'ERR_BAD_REQUEST', 'name:');
    assert.equal(when(world(), { kind: 'CreateRole', name: 'a'.repeat(100) }).decision.events.length, 1);
  });

  test('update: permissions replace the set, description kept unless given; RoleUpdated carries the role as it becomes', () => {
    const { decision, after } = when(given(aPermission('p1'), aPermission('p2'), aRole('editor', ['p1'], 'd')), { kind: 'UpdateRole', name: 'editor', permissions: ['p2'] });
    assert.deepEqual(decision.events, [{ name: 'RoleUpdated_InRegion_v1', body: { role_name: 'editor', description: 'd', permissions: ['p2'], region: 'europe-belgium' } }]);
    assert.deepEqual(after.roles.get('editor'), { name: 'editor', description: 'd', created: GENESIS.created, permissions: ['p2'] });
    const same = when(after, { kind: 'UpdateRole', name: 'editor', description: 'd', permissions: ['p2', 'p2'] });
    assert.deepEqual(same.decision.changes, []);
    assert.deepEqual(same.decision.events, []);
  });

  test('deleting a role revokes it from every holder, RolesSetToPerson for each, then RoleDeleted', () => {
    const w = given(aRole('r1'), aRole('r2'), aPerson('a'), aPerson('b'), aPerson('c'),
      { t: 'PersonRolesSet', person_id: 'a', roles: ['r1', 'r2'] },
      { t: 'PersonRolesSet', person_id: 'b', roles: ['r2'] },
      { t: 'PersonRolesSet', person_id: 'c', roles: ['r1'] });
    const { decision, after } = when(w, { kind: 'DeleteRole', name: 'r1' });
    assert.deepEqual(decision.changes.filter((c) => c.t !== 'TwinOwed'), [
      { t: 'PersonRolesSet', person_id: 'a', roles: ['r2'] },
      { t: 'PersonRolesSet', person_id: 'c', roles: [] },
      { t: 'RoleDeleted', name: 'r1' },
    ]);
    assert.deepEqual(decision.events.map((e) => e.body), [
      { new_roles: ['r2'], old_roles: ['r1', 'r2'], person_id: 'a', region: 'europe-belgium' },
      { new_roles: [], old_roles: ['r1'], person_id: 'c', region: 'europe-belgium' },
      { role_name: 'r1', region: 'europe-belgium' },
    ]);
    assert.deepEqual(names(owed(decision.changes) as { name: string }[]), ['RolesSetToPerson_v1', 'RolesSetToPerson_v1', 'RoleDeleted_v1']);
    assert.equal(after.roles.has('r1'), false);
    assert.deepEqual(person(after, 'b').roles, ['r2']);
    refused(after, { kind: 'DeleteRole', name: 'r1' }, 'ERR_NOT_FOUND', 'r1');
  });
});

describe("a person's roles and additional permissions (the replace-set rules of set-groups)", () => {
  const world = () => given(aPermission('p1'), aPermission('p2'), aPermission('p3'), aRole('r1', ['p1']), aRole('r2', ['p1', 'p2']), aPerson('x'));

  test('roles: exactly the listed ones, sorted, duplicates ignored; RolesSetToPerson with new and old', () => {
    const first = when<string[]>(world(), { kind: 'SetPersonRoles', person_id: 'x', roles: ['r2', 'r1', 'r2'] });
    assert.deepEqual(first.decision.reply, ['r1', 'r2']);
    assert.deepEqual(first.decision.events, [{ name: 'RolesSetToPerson_InRegion_v1', body: { new_roles: ['r1', 'r2'], old_roles: [], person_id: 'x', region: 'europe-belgium' } }]);
    const second = when<string[]>(first.after, { kind: 'SetPersonRoles', person_id: 'x', roles: ['r2'] });
    assert.deepEqual(second.decision.events[0]?.body, { new_roles: ['r2'], old_roles: ['r1', 'r2'], person_id: 'x', region: 'europe-belgium' });
    assert.deepEqual(person(second.after, 'x').roles, ['r2']);
    const cleared = when<string[]>(second.after, { kind: 'SetPersonRoles', person_id: 'x', roles: [] });
    assert.deepEqual(person(cleared.after, 'x').roles, []);
  });

  test('the same set again changes nothing and emits nothing', () => {
    const { after } = when(world(), { kind: 'SetPersonRoles', person_id: 'x', roles: ['r1'] });
    const again = when(after, { kind: 'SetPersonRoles', person_id: 'x', roles: ['r1', 'r1'] });
    assert.deepEqual(again.decision.changes, []);
    assert.deepEqual(again.decision.events, []);
    assert.deepEqual(when(world(), { kind: 'SetPersonRoles', person_id: 'x', roles: [] }).decision.events, [], 'none to none');
  });

  test('an unknown role or permission is a 400 naming it; an unknown person a 404', () => {
    refused(world(), { kind: 'SetPersonRoles', person_id: 'x', roles: ['r1', 'nope'] }, 'ERR_BAD_REQUEST', 'roles[1]', 'nope');
    refused(world(), { kind: 'SetPersonAdditionalPermissions', person_id: 'x', permissions: ['p9'] }, 'ERR_BAD_REQUEST', 'permissions[0]', 'p9');
    refused(world(), { kind: 'SetPersonRoles', person_id: 'ghost', roles: [] }, 'ERR_NOT_FOUND', 'ghost');
  });

  test('additional permissions: PermissionsSetToPerson with new and old', () => {
    const { decision, after } = when(world(), { kind: 'SetPersonAdditionalPermissions', person_id: 'x', permissions: ['p3', 'p2'] });
    assert.deepEqual(decision.events, [{ name: 'PermissionsSetToPerson_InRegion_v1', body: { new_permissions: ['p2', 'p3'], old_permissions: [], person_id: 'x', region: 'europe-belgium' } }]);
    assert.deepEqual(owed(decision.changes).map((t) => t?.name), ['PermissionsSetToPerson_v1']);
    assert.deepEqual(person(after, 'x').additional_permissions, ['p2', 'p3']);
  });

  test('effective permissions: the union of the roles and the additional ones; check agrees', () => {
    let s = when(world(), { kind: 'SetPersonRoles', person_id: 'x', roles: ['r1', 'r2'] }).after;
    s = when(s, { kind: 'SetPersonAdditionalPermissions', person_id: 'x', permissions: ['p3', 'p1'] }).after;
    const x = person(s, 'x');
    assert.deepEqual(effectivePermissions(s, x), ['p1', 'p2', 'p3']);
    for (const p of ['p1', 'p2', 'p3']) assert.equal(hasPermission(s, x, p), true, p);
    assert.equal(hasPermission(s, x, 'p4'), false);
    // a role losing a permission takes it from its holders at once
    s = when(s, { kind: 'UpdateRole', name: 'r2', permissions: ['p1'] }).after;
    assert.deepEqual(effectivePermissions(s, person(s, 'x')), ['p1', 'p3']);
    assert.equal(hasPermission(s, person(s, 'x'), 'p2'), false);
    assert.deepEqual(effectivePermissions(s, person(given(aPerson('y')), 'y')), []);
  });
});

describe('snapshots', () => {
  test('roles, permissions and a person\'s sets survive a snapshot round trip', () => {
    let s = given(aPermission('p1', 'd'), aRole('r1', ['p1'], 'rd'), aPerson('x'));
    s = when(s, { kind: 'SetPersonRoles', person_id: 'x', roles: ['r1'] }).after;
    s = when(s, { kind: 'SetPersonAdditionalPermissions', person_id: 'x', permissions: ['p1'] }).after;
    const back = fromSnapshot(structuredClone(toSnapshot(s)));
    assert.deepEqual(toSnapshot(back), toSnapshot(s));
    assert.deepEqual(back.roles.get('r1')?.permissions, ['p1']);
    assert.deepEqual(person(back, 'x').roles, ['r1']);
  });

  test('a snapshot written before access control existed opens with none', () => {
    // A version-1 snapshot: the version before access control.
    const { permissions: _p, roles: _r, ...snap } = toSnapshot(given(aPerson('x')));
    const back = fromSnapshot({ ...snap, v: 1 });
    assert.equal(back.permissions.size, 0);
    assert.equal(back.roles.size, 0);
    assert.deepEqual(effectivePermissions(back, person(back, 'x')), []);
    assert.equal(when(back, { kind: 'CreatePermission', name: 'p1' }).after.permissions.size, 1);
  });
});

describe('roles given when a person is created or put', () => {
  const world = () => given(aRole('r1'), aRole('r2'));
  const handles = [{ type: 'username' as const, value: 'neo' }];

  test('CreatePerson with roles: the person holds them and RolesSetToPerson follows PersonCreated', () => {
    const { decision, after } = when<{ person_id: string }>(world(), { kind: 'CreatePerson', input: { handles, roles: ['r2', 'r1', 'r2'] } });
    const id = decision.reply.person_id;
    assert.deepEqual(person(after, id).roles, ['r1', 'r2']);
    assert.deepEqual(names(decision.events), ['PersonCreated_v1', 'RolesSetToPerson_InRegion_v1']);
    assert.deepEqual(decision.events[1]?.body, { new_roles: ['r1', 'r2'], old_roles: [], person_id: id, region: 'europe-belgium' });
    refused(world(), { kind: 'CreatePerson', input: { handles, roles: ['nope'] } }, 'ERR_BAD_REQUEST', 'roles[0]', 'nope');
    assert.deepEqual(names(when(world(), { kind: 'CreatePerson', input: { handles } }).decision.events), ['PersonCreated_v1'], 'no roles, no RolesSetToPerson');
  });

  test('PutPerson with roles replaces the set when it differs; without roles leaves it', () => {
    const { after: s1 } = when(world(), { kind: 'CreatePerson', input: { handles, roles: ['r1'] } });
    const changed = when(s1, { kind: 'PutPerson', input: { handles, roles: ['r2'] } });
    assert.deepEqual(changed.decision.events.map((e) => e.body), [{ new_roles: ['r2'], old_roles: ['r1'], person_id: 'id-1', region: 'europe-belgium' }]);
    assert.deepEqual(person(changed.after, 'id-1').roles, ['r2']);
    assert.deepEqual(when(changed.after, { kind: 'PutPerson', input: { handles, roles: ['r2'] } }).decision.changes, []);
    assert.deepEqual(when(changed.after, { kind: 'PutPerson', input: { handles } }).decision.changes, []);
  });
});
