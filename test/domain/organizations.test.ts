import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { SuborganizationRet } from '../../src/domain/organizations.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import { aGroup, aPerson, GENESIS, given, NOW_MS, refused, when } from '../support/domain.js';

describe('CreateSuborganization', () => {
  test('given an organization, then a child under it, with the same root, whose key is returned once and stored hashed', () => {
    const { decision, after } = when<SuborganizationRet>(given(), { kind: 'CreateSuborganization', sub_org_name: '  Team A ' });
    assert.deepEqual(decision.reply, { id: 'id-1', org_name: 'Team A', parent_id: GENESIS.id, api_key: 'secret-1' });
    assert.deepEqual(decision.spawn, { id: 'id-1', org_name: 'Team A', parent_id: GENESIS.id, root_id: GENESIS.root_id, api_key_hash: 'hash:secret-1', created: new Date(NOW_MS).toISOString() });
    const body = { suborganization_id: 'id-1', org_name: 'Team A', parent_organization_id: GENESIS.id };
    assert.deepEqual(decision.changes, [{ t: 'SuborganizationCreated', id: 'id-1' }, { t: 'TwinOwed', twin: { offset: 1, name: 'SuborganizationCreated_v1', body } }]);
    assert.deepEqual(decision.events, [{ name: 'SuborganizationCreated_InRegion_v1', body: { ...body, region: 'europe-belgium' } }]);
    assert.deepEqual(after.suborganizations, ['id-1']);
  });

  test('a blank name is a 400 naming the field', () => {
    refused(given(), { kind: 'CreateSuborganization', sub_org_name: '   ' }, 'ERR_BAD_REQUEST', 'sub_org_name');
  });
});

describe('RotateApiKey', () => {
  test('the new key is returned and only its hash is kept', () => {
    const { decision, after } = when<{ api_key: string }>(given(), { kind: 'RotateApiKey' });
    assert.deepEqual(decision.reply, { api_key: 'secret-1' });
    assert.equal(after.api_key_hash, 'hash:secret-1');
  });
});

describe('DeleteSuborganization', () => {
  test('given two children, when one is deleted, then only the other is listed, and no event is emitted', () => {
    const { decision, after } = when(given({ t: 'SuborganizationCreated', id: 'a' }, { t: 'SuborganizationCreated', id: 'b' }), { kind: 'DeleteSuborganization', id: 'a', orgs: ['a', 'a1'] });
    assert.deepEqual(decision.changes, [{ t: 'SuborganizationDeleted', id: 'a', orgs: ['a', 'a1'] }]);
    assert.deepEqual(decision.events, []);
    assert.deepEqual(after.suborganizations, ['b']);
  });

  test('a child no longer listed (a deletion resumed after a crash) changes nothing', () => {
    const { decision } = when(given({ t: 'SuborganizationCreated', id: 'b' }), { kind: 'DeleteSuborganization', id: 'a', orgs: ['a'] });
    assert.deepEqual(decision.changes, []);
  });
});

describe('snapshots', () => {
  test('a state survives toSnapshot/fromSnapshot through JSON unchanged', () => {
    const state = given(
      aGroup('g1'),
      aPerson('p1', { handles: [{ type: 'email_address', value: 'Ada@example.com' }], groups: ['g1'], attributes: { end_user_read_only: { x: [1, { y: null }] } } }),
      aPerson('p2'),
      { t: 'AttributesSet', bucket: 'end_user_no_access', attributes: { k: 'v' }, replace: true },
      { t: 'SuborganizationCreated', id: 'child' },
    );
    const back = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))));
    assert.deepEqual(back, state);
  });
});
