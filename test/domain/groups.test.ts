import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { aGroup, aPerson, given, NOW_MS, refused, when } from '../support/domain.js';

describe('CreateGroup', () => {
  test('given no group, when created, then GroupCreated with an empty description and the decision time', () => {
    const { decision, after } = when(given(), { kind: 'CreateGroup', name: 'admins' });
    assert.deepEqual(decision.changes, [{ t: 'GroupCreated', name: 'admins', description: '', created: new Date(NOW_MS).toISOString() }]);
    assert.deepEqual(decision.events, []);
    assert.equal(after.groups.get('admins')?.members.size, 0);
  });

  test('given the group exists, when created again with another description, then nothing changes', () => {
    const { decision, after } = when(given(aGroup('admins')), { kind: 'CreateGroup', name: 'admins', description: 'other' });
    assert.deepEqual(decision.changes, []);
    assert.equal(after.groups.get('admins')?.description, '');
  });

  test('names: 2 to 100 characters of the seed expression', () => {
    for (const name of ['ab', 'a'.repeat(100), 'a.b-c_d', 'A9', '0_0']) {
      assert.equal(when(given(), { kind: 'CreateGroup', name }).decision.changes.length, 1, name);
    }
    refused(given(), { kind: 'CreateGroup', name: 'a'.repeat(101) }, 'ERR_BAD_REQUEST', 'name', '100');
    for (const name of ['a', '', '-ab', 'ab-', '_ab', 'ab.', 'a b', 'a/b', 'é1', 'ab\n']) {
      refused(given(), { kind: 'CreateGroup', name }, 'ERR_BAD_REQUEST', 'name:');
    }
  });
});

describe('SetPersonGroups (seed rules 1-4)', () => {
  const world = () => given(aGroup('a1'), aGroup('b2'), aGroup('c3'), aPerson('p1'), { t: 'PersonGroupsSet', person_id: 'p1', groups: ['a1', 'b2'] });

  test('rule 1: the person ends up in exactly the listed groups', () => {
    const { decision, after } = when<string[]>(world(), { kind: 'SetPersonGroups', person_id: 'p1', groups: ['c3', 'b2'] });
    assert.deepEqual(decision.reply, ['b2', 'c3']);
    assert.deepEqual(decision.changes, [{ t: 'PersonGroupsSet', person_id: 'p1', groups: ['b2', 'c3'] }]);
    assert.deepEqual(after.persons.get('p1')?.groups, ['b2', 'c3']);
    assert.deepEqual([...(after.groups.get('a1')?.members ?? [])], []);
    assert.deepEqual([...(after.groups.get('c3')?.members ?? [])], ['p1']);
  });

  test('rule 2: a group that does not exist is a 400 naming it, and nothing changes', () => {
    refused(world(), { kind: 'SetPersonGroups', person_id: 'p1', groups: ['c3', 'nope1'] }, 'ERR_BAD_REQUEST', 'groups[1]', 'nope1');
  });

  test('rule 3: duplicates are ignored', () => {
    const { decision } = when<string[]>(world(), { kind: 'SetPersonGroups', person_id: 'p1', groups: ['c3', 'c3', 'a1', 'c3'] });
    assert.deepEqual(decision.reply, ['a1', 'c3']);
  });

  test('rule 4: an empty list removes the person from every group', () => {
    const { decision, after } = when<string[]>(world(), { kind: 'SetPersonGroups', person_id: 'p1', groups: [] });
    assert.deepEqual(decision.reply, []);
    assert.deepEqual(after.persons.get('p1')?.groups, []);
    for (const g of after.groups.values()) assert.equal(g.members.size, 0);
  });

  test('the same set again changes nothing', () => {
    const { decision } = when<string[]>(world(), { kind: 'SetPersonGroups', person_id: 'p1', groups: ['b2', 'a1'] });
    assert.deepEqual(decision.changes, []);
    assert.deepEqual(decision.reply, ['a1', 'b2']);
  });

  test('an unknown person is a 404', () => {
    refused(world(), { kind: 'SetPersonGroups', person_id: 'p9', groups: [] }, 'ERR_NOT_FOUND', 'p9');
  });

  test('an invalid name in the list is a 400 naming its position', () => {
    refused(world(), { kind: 'SetPersonGroups', person_id: 'p1', groups: ['a1', '-x-'] }, 'ERR_BAD_REQUEST', 'groups[1]');
  });
});

describe('DeleteGroup', () => {
  test('given members, when the group is deleted, then no person lists it any more', () => {
    const state = given(aGroup('a1'), aGroup('b2'), aPerson('p1', { groups: ['a1', 'b2'] }), aPerson('p2', { groups: ['a1'] }));
    const { decision, after } = when(state, { kind: 'DeleteGroup', name: 'a1' });
    assert.deepEqual(decision.changes, [{ t: 'GroupDeleted', name: 'a1' }]);
    assert.equal(after.groups.has('a1'), false);
    assert.deepEqual(after.persons.get('p1')?.groups, ['b2']);
    assert.deepEqual(after.persons.get('p2')?.groups, []);
  });

  test('an unknown group is a 404 naming it', () => {
    refused(given(), { kind: 'DeleteGroup', name: 'ghost' }, 'ERR_NOT_FOUND', 'ghost');
  });
});
