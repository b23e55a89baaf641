// The token template in organization state: set, unchanged (no write), removed, and carried by snapshots;
// a snapshot written before templates existed reads as none.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import { given, when } from '../support/domain.js';

describe('token template state', () => {
  test('set, set again to the same (no change), removed', () => {
    const set = when(given(), { kind: 'SetTokenTemplate', content: '{"a": 1}' });
    assert.deepEqual(set.decision.changes, [{ t: 'TokenTemplateSet', content: '{"a": 1}' }]);
    assert.equal(set.after.token_template, '{"a": 1}');
    assert.deepEqual(when(set.after, { kind: 'SetTokenTemplate', content: '{"a": 1}' }).decision.changes, []);
    assert.equal(when(set.after, { kind: 'SetTokenTemplate', content: '' }).after.token_template, '');
  });

  test('a snapshot carries it; one of the version before templates reads as none', () => {
    const state = when(given(), { kind: 'SetTokenTemplate', content: '{"a": "{{person.region}}"}' }).after;
    assert.equal(fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state)))).token_template, '{"a": "{{person.region}}"}');
    const older = JSON.parse(JSON.stringify({ ...toSnapshot(given()), v: 6 })) as Record<string, any>;
    delete older['org']['token_template'];
    assert.equal(fromSnapshot(older as never).token_template, '');
  });
});
