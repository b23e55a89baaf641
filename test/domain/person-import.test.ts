import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ImportReply } from '../../src/domain/person-import.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import { aGroup, aPerson, fixedContext, given, NOW_MS, refused, when } from '../support/domain.js';

const email = (value: string) => ({ type: 'email_address' as const, value });

describe('ImportPersons', () => {
  test('given a taken handle, when a batch is imported, then each good row is created with PersonCreated_v1 and each bad row refused by line, in one decision', () => {
    const state = given(aGroup('staff'), aPerson('p0', { handles: [email('taken@example.com')] }));
    const { decision, after } = when<ImportReply>(state, {
      kind: 'ImportPersons',
      rows: [
        { line: 2, input: { handles: [email('a@example.com')], groups: ['staff'] } },
        { line: 3, input: { handles: [email('TAKEN@example.com')] } },
        { line: 4, input: { handles: [email('b@example.com')], groups: ['nope'] } },
        { line: 5, input: { handles: [email('A@example.com')] } },
        { line: 6, input: { handles: [email('c@example.com')], region: 'mars' } },
        { line: 7, input: { handles: [email('d@example.com')], attributes: { end_user_read_write: { n: 1 } } } },
      ],
    });
    assert.equal(decision.reply.created, 2);
    assert.deepEqual(decision.reply.refused.map((r) => r.line), [3, 4, 5, 6]);
    assert.match(decision.reply.refused[2]?.reason ?? '', /taken by line 2 of this import/);
    assert.deepEqual(decision.changes.map((c) => c.t), ['PersonCreated', 'PersonCreated']);
    assert.deepEqual(decision.events.map((e) => e.name), ['PersonCreated_v1', 'PersonCreated_v1']);
    assert.equal(after.persons.size, 3);
    assert.equal(after.handles.has('email_address:b@example.com'), false, 'a refused row leaves nothing behind');
    assert.deepEqual([...(after.groups.get('staff')?.members ?? [])], ['id-1']);
  });

  test('every row refused: no change, no event', () => {
    const { decision } = when<ImportReply>(given(), { kind: 'ImportPersons', rows: [{ line: 2, input: { handles: [email('x@example.com')], groups: ['nope'] } }] });
    assert.deepEqual(decision.changes, []);
    assert.deepEqual(decision.events, []);
  });

  test('more than 1000 rows in one batch is a 400', () => {
    const rows = Array.from({ length: 1001 }, (_, i) => ({ line: i + 2, input: { handles: [email(`p${i}@example.com`)] } }));
    refused(given(), { kind: 'ImportPersons', rows }, 'ERR_BAD_REQUEST', '1000');
  });
});

describe('IssueDirectId', () => {
  test('given a person, when a direct-id is issued, then only its hash is kept, with its expiry; expired ones are dropped by the same entry', () => {
    const state = given(aPerson('p1'), { t: 'DirectIdIssued', hash: 'hash:old', direct_id: { person_id: 'p1', expires_at_ms: NOW_MS - 1 }, expired: [] });
    const { decision, after } = when<string>(state, { kind: 'IssueDirectId', person_id: 'p1', duration_secs: 60 });
    assert.equal(decision.reply, 'secret-1');
    assert.deepEqual([...after.direct_ids], [['hash:secret-1', { person_id: 'p1', expires_at_ms: NOW_MS + 60_000 }]]);
    assert.deepEqual(fromSnapshot(toSnapshot(after)).direct_ids, after.direct_ids, 'kept by snapshots');
  });

  test('unknown person 404, inactive 400, duration out of range 400', () => {
    refused(given(), { kind: 'IssueDirectId', person_id: 'nobody', duration_secs: 60 }, 'ERR_NOT_FOUND', 'nobody');
    refused(given(aPerson('p1', { active: false })), { kind: 'IssueDirectId', person_id: 'p1', duration_secs: 60 }, 'ERR_BAD_REQUEST', 'not active');
    for (const d of [0, 86_401, 2.5]) refused(given(aPerson('p1')), { kind: 'IssueDirectId', person_id: 'p1', duration_secs: d }, 'ERR_BAD_REQUEST', 'duration_secs');
  });

  test('a sign-in token recorded with a direct-id uses it up; a used or expired one refuses the token (401)', () => {
    const state = given(aPerson('p1'), { t: 'DirectIdIssued', hash: 'h1', direct_id: { person_id: 'p1', expires_at_ms: NOW_MS + 1000 }, expired: [] });
    const token = (direct_id: string) => ({
      kind: 'RecordToken' as const,
      token: { person_id: 'p1', token_id: 'jti-1', mint_token_api: false, first_token: true, issued_at: '', expires_at: '', authentications: [], sign_in: { handle: { type: 'username' as const, value: 'p1' }, method: 'direct_id', client_ip_address: '127.0.0.1', direct_id } },
    });
    const { decision, after } = when(state, token('h1'), fixedContext());
    assert.ok(decision.changes.some((c) => c.t === 'DirectIdRedeemed'));
    assert.equal(after.direct_ids.size, 0);
    refused(after, token('h1'), 'ERR_UNAUTHORIZED', 'direct-id');
    refused(given(aPerson('p1'), { t: 'DirectIdIssued', hash: 'h2', direct_id: { person_id: 'p1', expires_at_ms: NOW_MS }, expired: [] }), token('h2'), 'ERR_UNAUTHORIZED', 'expired');
  });
});
