import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { PutPersonReply } from '../../src/domain/persons.js';
import type { PersonRet } from '../../src/domain/views.js';
import { aGroup, aPerson, given, NOW_MS, refused, when } from '../support/domain.js';

const ada = { type: 'email_address' as const, value: 'Ada@Example.com' };

describe('CreatePerson', () => {
  test('given nobody, when created, then the person, its handle index and PersonCreated_v1', () => {
    const { decision, after } = when<PersonRet>(given(aGroup('g1')), { kind: 'CreatePerson', input: { handles: [ada], groups: ['g1'], attributes: { end_user_read_only: { a: 1 } } } });
    assert.deepEqual(decision.reply, { person_id: 'id-1', active: true, person_type: 'regular', region: 'europe-belgium', handles: [ada], groups: ['g1'] });
    assert.deepEqual(decision.events, [
      { name: 'PersonCreated_v1', body: { person_id: 'id-1', region: 'europe-belgium', handles: [{ type: 'EmailAddress', value: 'Ada@Example.com' }], gdpr_consents: [] } },
    ]);
    const p = after.persons.get('id-1');
    assert.equal(p?.created, new Date(NOW_MS).toISOString());
    assert.deepEqual(p?.attributes, { end_user_read_only: { a: 1 } });
    assert.equal(after.handles.get('email_address:ada@example.com'), 'id-1');
    assert.deepEqual([...(after.groups.get('g1')?.members ?? [])], ['id-1']);
    assert.deepEqual(after.person_order, ['id-1']);
  });

  test('a handle already taken is a 409, email addresses compared without case', () => {
    const state = given(aPerson('p1', { handles: [{ type: 'email_address', value: 'ada@example.com' }] }));
    refused(state, { kind: 'CreatePerson', input: { handles: [{ type: 'username', value: 'new' }, ada] } }, 'ERR_CONFLICT', 'Ada@Example.com');
  });

  test('usernames and phone numbers are compared exactly', () => {
    const state = given(aPerson('p1', { handles: [{ type: 'username', value: 'Ada' }] }));
    assert.equal(when(state, { kind: 'CreatePerson', input: { handles: [{ type: 'username', value: 'ada' }] } }).decision.changes.length, 1);
  });

  test('the same handle twice in one body counts once', () => {
    const { decision } = when<PersonRet>(given(), { kind: 'CreatePerson', input: { handles: [ada, { type: 'email_address', value: 'ada@example.COM' }] } });
    assert.deepEqual(decision.reply.handles, [ada]);
  });

  test('bad input names the field', () => {
    refused(given(), { kind: 'CreatePerson', input: { handles: [{ type: 'email_address', value: 'not-an-email' }] } }, 'ERR_BAD_REQUEST', 'handles[0].value');
    refused(given(), { kind: 'CreatePerson', input: { handles: [{ type: 'phone_number', value: '12345' }] } }, 'ERR_BAD_REQUEST', 'handles[0].value', 'E.164');
    refused(given(), { kind: 'CreatePerson', input: { handles: [ada], region: 'mars-north' } }, 'ERR_BAD_REQUEST', 'region', 'mars-north');
    refused(given(), { kind: 'CreatePerson', input: { handles: [ada], groups: ['ghost1'] } }, 'ERR_BAD_REQUEST', 'groups[0]', 'ghost1');
    refused(given(), { kind: 'CreatePerson', input: { handles: [ada], attributes: { nowhere: {} } } }, 'ERR_BAD_REQUEST', 'nowhere');
    refused(given(), { kind: 'CreatePerson', input: { handles: [] } }, 'ERR_BAD_REQUEST', 'handles');
  });
});

describe('PutPerson', () => {
  test('given nobody with the handle, then it creates (created: true)', () => {
    const { decision } = when<PutPersonReply>(given(), { kind: 'PutPerson', input: { handles: [ada] } });
    assert.equal(decision.reply.created, true);
    assert.equal(decision.changes[0]?.t, 'PersonCreated');
  });

  test('given the person, the same body again changes nothing and answers the same person', () => {
    const state = given(aPerson('p1', { handles: [{ type: 'email_address', value: 'ada@example.com' }] }));
    const { decision } = when<PutPersonReply>(state, { kind: 'PutPerson', input: { handles: [ada] } });
    assert.equal(decision.reply.created, false);
    assert.equal(decision.reply.person.person_id, 'p1');
    assert.deepEqual(decision.changes, []);
    assert.deepEqual(decision.events, []);
  });

  test('given the person, a new handle, groups and active are updated', () => {
    const state = given(aGroup('g1'), aPerson('p1', { handles: [{ type: 'email_address', value: 'ada@example.com' }] }));
    const phone = { type: 'phone_number' as const, value: '+442071234567' };
    const { decision, after } = when<PutPersonReply>(state, { kind: 'PutPerson', input: { handles: [ada, phone], groups: ['g1'], active: false } });
    assert.deepEqual(decision.reply.person.handles, [{ type: 'email_address', value: 'ada@example.com' }, phone]);
    assert.deepEqual(decision.reply.person.groups, ['g1']);
    assert.equal(decision.reply.person.active, false);
    assert.equal(after.handles.get('phone_number:+442071234567'), 'p1');
    assert.deepEqual(after.persons.get('p1')?.groups, ['g1']);
  });

  test('given attributes, the same sets change nothing, an empty set empties its bucket', () => {
    const state = given(aPerson('p1', { attributes: { end_user_read_write: { a: 1 }, end_user_read_only: { b: [1] } } }));
    const handles = [{ type: 'username' as const, value: 'p1' }];
    assert.deepEqual(when(state, { kind: 'PutPerson', input: { handles, attributes: { end_user_read_write: { a: 1 }, end_user_read_only: { b: [1] } } } }).decision.changes, []);
    const { after } = when(state, { kind: 'PutPerson', input: { handles, attributes: { end_user_read_write: {}, end_user_no_access: {} } } });
    assert.deepEqual(after.persons.get('p1')?.attributes, { end_user_read_only: { b: [1] } });
  });

  test('an empty set at creation holds nothing', () => {
    const { after } = when(given(), { kind: 'CreatePerson', input: { handles: [ada], attributes: { end_user_read_write: {} } } });
    assert.deepEqual(after.persons.get('id-1')?.attributes, {});
  });

  test('handles of two different persons are a 409; another region is a 400', () => {
    const state = given(aPerson('p1', { handles: [{ type: 'username', value: 'one' }] }), aPerson('p2', { handles: [{ type: 'username', value: 'two' }] }));
    refused(state, { kind: 'PutPerson', input: { handles: [{ type: 'username', value: 'one' }, { type: 'username', value: 'two' }] } }, 'ERR_CONFLICT', 'handles');
    refused(state, { kind: 'PutPerson', input: { handles: [{ type: 'username', value: 'one' }], region: 'us-iowa' } }, 'ERR_BAD_REQUEST', 'region');
  });
});

describe('SetPersonActive and DeletePerson', () => {
  test('setting the current value changes nothing', () => {
    const { decision } = when(given(aPerson('p1')), { kind: 'SetPersonActive', person_id: 'p1', active: true });
    assert.deepEqual(decision.changes, []);
  });

  test('given a person in groups, when deleted, then handles are free, groups lose it, and PersonDeleted_v1 names both', () => {
    const state = given(aGroup('g1'), aPerson('p1', { handles: [{ type: 'username', value: 'ada' }], groups: ['g1'] }), aPerson('p2'));
    const { decision, after } = when(state, { kind: 'DeletePerson', person_id: 'p1' });
    assert.deepEqual(decision.events, [{ name: 'PersonDeleted_v1', body: { person_id: 'p1', region: 'europe-belgium', handles: [{ type: 'Username', value: 'ada' }], groups: ['g1'] } }]);
    assert.equal(after.persons.has('p1'), false);
    assert.equal(after.handles.has('username:ada'), false);
    assert.equal(after.groups.get('g1')?.members.size, 0);
    assert.deepEqual(after.person_order, ['p2']);
  });

  test('an unknown person is a 404', () => {
    refused(given(), { kind: 'DeletePerson', person_id: 'p9' }, 'ERR_NOT_FOUND', 'p9');
    refused(given(), { kind: 'SetPersonActive', person_id: 'p9', active: false }, 'ERR_NOT_FOUND', 'p9');
  });
});
