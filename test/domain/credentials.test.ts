// Credentials and password-reset links in organization state: a link used once, refused when used or expired,
// used links forgotten once expired, message templates set; snapshots carry both, older ones read as none.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { PasswordReset } from '../../src/domain/credentials.js';
import { DEFAULT_TEMPLATES } from '../../src/domain/message-templates.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import { aPerson, fixedContext, given, NOW_MS, refused, when } from '../support/domain.js';

const NOW_S = Math.floor(NOW_MS / 1000);
const handle = { type: 'email_address' as const, value: 'ada@example.com' };
const reset = (reset_id: string, exp = NOW_S + 3600): PasswordReset => ({ person_id: 'p1', reset_id, handle, exp });
const withPassword = () => given(aPerson('p1', { handles: [handle] }), { t: 'PersonPasswordSet', person_id: 'p1', password_hash: 'scrypt$15$8$1$old$old' });

describe('password reset links', () => {
  test('given a person, when a link completes, then the password and its credential change, PasswordChanged says EndUser, and the link is used', () => {
    const { decision, after } = when(withPassword(), { kind: 'CompletePasswordReset', reset: reset('r1'), password_hash: 'scrypt$15$8$1$new$new' });
    assert.equal(after.persons.get('p1')?.password_hash, 'scrypt$15$8$1$new$new');
    assert.equal(after.persons.get('p1')?.password_credential_id, 'id-1');
    assert.deepEqual(decision.events.map((e) => [e.name, e.body['initiated_by']]), [['PasswordChanged_v1', 'EndUser']]);
    assert.deepEqual([...after.used_password_resets], [['r1', NOW_S + 3600]]);
    refused(after, { kind: 'CompletePasswordReset', reset: reset('r1'), password_hash: 'x' }, 'ERR_BAD_REQUEST', 'not valid');
  });

  test('an expired link, or one for a person gone, is refused', () => {
    refused(withPassword(), { kind: 'CompletePasswordReset', reset: reset('r1', NOW_S), password_hash: 'x' }, 'ERR_BAD_REQUEST', 'not valid');
    refused(given(), { kind: 'CompletePasswordReset', reset: reset('r1'), password_hash: 'x' }, 'ERR_BAD_REQUEST', 'not valid');
  });

  test('used links are forgotten once they expired: the set does not grow without bound', () => {
    const first = when(withPassword(), { kind: 'CompletePasswordReset', reset: reset('r1', NOW_S + 10), password_hash: 'h1' }).after;
    const later = { ...fixedContext(), nowMs: NOW_MS + 20_000 };
    const second = when(first, { kind: 'CompletePasswordReset', reset: reset('r2', NOW_S + 3600), password_hash: 'h2' }, later).after;
    assert.deepEqual([...second.used_password_resets.keys()], ['r2']);
  });
});

describe('credentials', () => {
  test('removing one by its ID or all; another ID is a 404; a second import is a 409', () => {
    const set = when(withPassword(), { kind: 'SetPassword', person_id: 'p1', password_hash: 'scrypt$15$8$1$a$b' }).after;
    refused(set, { kind: 'RemoveCredentials', person_id: 'p1', credential_id: 'other' }, 'ERR_NOT_FOUND', 'other');
    refused(set, { kind: 'AddPasswordCredential', person_id: 'p1', password_hash: 'scrypt$15$8$1$c$d' }, 'ERR_CONFLICT', 'already');
    const removed = when(set, { kind: 'RemoveCredentials', person_id: 'p1', credential_id: 'id-1' }).after.persons.get('p1');
    assert.equal(removed?.password_hash, undefined);
    assert.equal(removed?.password_credential_id, undefined);
    assert.deepEqual(when(given(aPerson('p2')), { kind: 'RemoveCredentials', person_id: 'p2' }).decision.changes, [], 'nothing to remove, nothing written');
  });
});

describe('message templates', () => {
  test('set; set again the same (no change); an unknown name is a 404', () => {
    const template = { ...DEFAULT_TEMPLATES.email_password_reset, subject: 'Reset' };
    const set = when(given(), { kind: 'SetMessageTemplate', name: 'email_password_reset', template });
    assert.deepEqual(set.after.message_templates.get('email_password_reset'), template);
    assert.deepEqual(when(set.after, { kind: 'SetMessageTemplate', name: 'email_password_reset', template }).decision.changes, []);
    refused(given(), { kind: 'SetMessageTemplate', name: 'text_password_reset', template }, 'ERR_NOT_FOUND', 'text_password_reset');
  });

  test('a snapshot carries templates and used links; one of the version before them reads as none', () => {
    let state = when(withPassword(), { kind: 'CompletePasswordReset', reset: reset('r1'), password_hash: 'h' }).after;
    state = when(state, { kind: 'SetMessageTemplate', name: 'email_password_reset', template: { sender_name: 's', subject: 't', body: '{{password_reset_url}}' } }).after;
    const back = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))));
    assert.deepEqual([...back.used_password_resets], [...state.used_password_resets]);
    assert.deepEqual([...back.message_templates], [...state.message_templates]);
    const older = JSON.parse(JSON.stringify({ ...toSnapshot(given()), v: 10 })) as Record<string, any>;
    delete older['used_password_resets'];
    delete older['message_templates'];
    const read = fromSnapshot(older as never);
    assert.equal(read.used_password_resets.size, 0);
    assert.equal(read.message_templates.size, 0);
  });
});
