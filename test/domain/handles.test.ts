// A person's handles and revoked identity tokens in the pure core: decisions, the handle index, snapshots.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import { handleKey } from '../../src/domain/state.js';
import { NOW_MS, aPerson, given, refused, when } from '../support/domain.js';

const NOW_S = Math.floor(NOW_MS / 1000);
const u = (value: string) => ({ type: 'username' as const, value });

describe('AddPersonHandles', () => {
  test('given a person, when handles are added, then only the new ones are recorded and the index points at the person', () => {
    const { decision, after } = when(given(aPerson('p1')), { kind: 'AddPersonHandles', person_id: 'p1', handles: [u('p1'), u('extra'), u('extra')] });
    assert.deepEqual(decision.changes, [{ t: 'PersonHandlesAdded', person_id: 'p1', handles: [u('extra')], verified: { method: 'organization', at: new Date(NOW_MS).toISOString() } }]);
    assert.deepEqual(decision.events, []);
    assert.equal(after.handles.get(handleKey(u('extra'))), 'p1');
  });

  test("given two persons, when one is given the other's handle, then 409 naming it", () => {
    refused(given(aPerson('p1'), aPerson('p2')), { kind: 'AddPersonHandles', person_id: 'p2', handles: [u('p1')] }, 'ERR_CONFLICT', 'p1');
  });

  test('a person holds at most 50 handles', () => {
    const many = Array.from({ length: 50 }, (_, i) => u(`h${i}`));
    refused(given(aPerson('p1')), { kind: 'AddPersonHandles', person_id: 'p1', handles: many }, 'ERR_BAD_REQUEST', '50');
  });
});

describe('RemovePersonHandle', () => {
  test('given a person with two handles, when one is removed, then the person and the index lose it', () => {
    const state = given(aPerson('p1', { handles: [u('a'), u('b')] }));
    const { after } = when(state, { kind: 'RemovePersonHandle', person_id: 'p1', handle: u('a') });
    assert.deepEqual(after.persons.get('p1')?.handles, [u('b')]);
    assert.equal(after.handles.has(handleKey(u('a'))), false);
    assert.equal(fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(after)))).handles.has(handleKey(u('a'))), false);
  });

  test('the last handle of a person with a password is a 409; a handle not held a 404', () => {
    const state = given(aPerson('p1', { password_hash: 'scrypt$x' }), aPerson('p2'));
    refused(state, { kind: 'RemovePersonHandle', person_id: 'p1', handle: u('p1') }, 'ERR_CONFLICT', 'last handle');
    refused(state, { kind: 'RemovePersonHandle', person_id: 'p1', handle: u('p2') }, 'ERR_NOT_FOUND', 'p2');
    assert.deepEqual(when(state, { kind: 'RemovePersonHandle', person_id: 'p2', handle: u('p2') }).after.persons.get('p2')?.handles, []);
  });
});

describe('RevokeIdentityToken', () => {
  test('recorded once; an expired token needs no entry; expired entries go with the next revocation', () => {
    const { decision, after } = when(given(), { kind: 'RevokeIdentityToken', jti: 'j1', exp: NOW_S + 60 });
    assert.deepEqual(decision.changes, [{ t: 'IdentityTokenRevoked', jti: 'j1', exp: NOW_S + 60, now: NOW_S }]);
    assert.deepEqual(when(after, { kind: 'RevokeIdentityToken', jti: 'j1', exp: NOW_S + 60 }).decision.changes, []);
    assert.deepEqual(when(given(), { kind: 'RevokeIdentityToken', jti: 'j2', exp: NOW_S }).decision.changes, []);
    const old = given({ t: 'IdentityTokenRevoked', jti: 'old', exp: NOW_S - 1, now: NOW_S - 100 });
    assert.deepEqual([...when(old, { kind: 'RevokeIdentityToken', jti: 'new', exp: NOW_S + 60 }).after.revoked_tokens.keys()], ['new']);
  });

  test('revocations survive a snapshot; a snapshot of version 7 reads as none', () => {
    const state = given({ t: 'IdentityTokenRevoked', jti: 'j1', exp: NOW_S + 60, now: NOW_S });
    assert.deepEqual([...fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state)))).revoked_tokens], [['j1', NOW_S + 60]]);
    const older = { ...toSnapshot(given()), v: 7 } as Record<string, unknown>;
    delete older['revoked_tokens'];
    assert.equal(fromSnapshot(older as never).revoked_tokens.size, 0);
  });
});
