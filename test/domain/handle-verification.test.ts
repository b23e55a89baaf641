// How each handle was verified, in the pure core: recorded by whoever added it, read as `unrecorded` from
// changes and snapshots written before verifications were kept, and the SSO linking rule over it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { joinableBySso, verificationOf } from '../../src/domain/handle-verification.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import type { Person } from '../../src/domain/state.js';
import { NOW_MS, aPerson, given, when } from '../support/domain.js';

const email = (value: string) => ({ type: 'email_address' as const, value });
const AT = new Date(NOW_MS).toISOString();
const person = (s: ReturnType<typeof given>, id: string) => s.persons.get(id) as Person;

describe('handle verification', () => {
  test('a person the organization creates holds its handles verified by the organization', () => {
    const { after } = when(given(), { kind: 'CreatePerson', input: { handles: [email('ada@example.com')] } });
    const p = [...after.persons.values()][0] as Person;
    assert.deepEqual(verificationOf(p, email('ADA@example.com')), { method: 'organization', at: AT });
    assert.equal(joinableBySso(p, email('ada@example.com')), true);
  });

  test('a person and handles recorded before verifications were kept read as unrecorded: joinable only without a password', () => {
    const legacy = given(aPerson('p1', { handles: [email('a@example.com')] }), { t: 'PersonHandlesAdded', person_id: 'p1', handles: [email('b@example.com')] });
    const p = person(legacy, 'p1');
    assert.deepEqual(verificationOf(p, email('a@example.com')), { method: 'unrecorded' });
    assert.deepEqual(verificationOf(p, email('b@example.com')), { method: 'unrecorded' });
    assert.equal(joinableBySso(p, email('a@example.com')), true);
    const withPassword = given(aPerson('p1', { handles: [email('a@example.com')] }), { t: 'PersonPasswordSet', person_id: 'p1', password_hash: 'h' });
    assert.equal(joinableBySso(person(withPassword, 'p1'), email('a@example.com')), false);
  });

  test('a snapshot person without verifications reads as unrecorded; one with them keeps them', () => {
    const state = given(aPerson('p1', { handles: [email('a@example.com')], verified_handles: {} }), aPerson('p2', { handles: [email('b@example.com')] }));
    const snap = toSnapshot(state);
    delete (snap.persons[1] as Partial<Person>).verified_handles;
    const read = fromSnapshot(structuredClone(snap));
    assert.deepEqual(person(read, 'p1').verified_handles, {});
    assert.equal(joinableBySso(person(read, 'p1'), email('a@example.com')), false);
    assert.deepEqual(verificationOf(person(read, 'p2'), email('b@example.com')), { method: 'unrecorded' });
  });

  test('a verified handle removed and added again without verification is unverified; PersonHandleVerified verifies it', () => {
    const s = given(
      aPerson('p1', { handles: [email('a@example.com')], verified_handles: {} }),
      { t: 'PersonHandleVerified', person_id: 'p1', handle: email('a@example.com'), verified: { method: 'email_link', at: AT } },
    );
    assert.deepEqual(verificationOf(person(s, 'p1'), email('a@example.com')), { method: 'email_link', at: AT });
    const again = given(
      aPerson('p1', { handles: [email('a@example.com')], verified_handles: { 'email_address:a@example.com': { method: 'organization', at: AT } } }),
      { t: 'PersonHandleRemoved', person_id: 'p1', handle: email('a@example.com') },
      { t: 'PersonHandlesAdded', person_id: 'p1', handles: [email('a@example.com')], verified: null },
    );
    assert.equal(verificationOf(person(again, 'p1'), email('a@example.com')), undefined);
  });
});
