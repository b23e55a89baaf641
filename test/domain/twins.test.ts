import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/changes.js';
import { decision, type DecideContext } from '../../src/domain/decision.js';
import { fromSnapshot, toSnapshot } from '../../src/domain/snapshot.js';
import type { OrgState } from '../../src/domain/state.js';
import { inRegionName, withTwins } from '../../src/domain/twins.js';
import { fixedContext, GENESIS, given, when } from '../support/domain.js';

const oneRegion = (): DecideContext => ({ ...fixedContext(), regions: ['europe-belgium'] });
const sub = (id: string, org_name: string) => ({ suborganization_id: id, org_name, parent_organization_id: GENESIS.id });
const owed = (offset: number, id: string): Change => ({ t: 'TwinOwed', twin: { offset, name: 'SuborganizationCreated_v1', body: sub(id, id) } });

/** A state whose last applied entry is `offset`, as the actor keeps it. */
function at(offset: number, ...changes: Change[]): OrgState {
  const state = given(...changes);
  state.offset = offset;
  return state;
}

describe('a regional event', () => {
  test('given several regions, when a suborganization is created, then its _InRegion form now and its plain form owed by the same entry', () => {
    const { decision: d, after } = when(at(6), { kind: 'CreateSuborganization', sub_org_name: 'Team A' });
    assert.deepEqual(d.events, [{ name: 'SuborganizationCreated_InRegion_v1', body: { ...sub('id-1', 'Team A'), region: 'europe-belgium' } }]);
    assert.deepEqual(after.owed_twins, [{ offset: 7, name: 'SuborganizationCreated_v1', body: sub('id-1', 'Team A') }]);
  });

  test('given one region, then both forms in the same decision, _InRegion first, and nothing owed', () => {
    const { decision: d, after } = when(at(6), { kind: 'CreateSuborganization', sub_org_name: 'Team A' }, oneRegion());
    assert.deepEqual(d.events, [
      { name: 'SuborganizationCreated_InRegion_v1', body: { ...sub('id-1', 'Team A'), region: 'europe-belgium' } },
      { name: 'SuborganizationCreated_v1', body: sub('id-1', 'Team A') },
    ]);
    assert.deepEqual(d.changes, [{ t: 'SuborganizationCreated', id: 'id-1' }]);
    assert.deepEqual(after.owed_twins, []);
  });

  test('any decision may mark events regional: each keeps its place as _InRegion, the plain forms follow every event of the entry', () => {
    const drafts = [
      { name: 'RoleCreated_v1', body: { role_name: 'r' }, regional: true as const },
      { name: 'PersonCreated_v1', body: { person_id: 'p' } },
      { name: 'PermissionCreated_v1', body: { permission_name: 'x' }, regional: true as const },
    ];
    const several = withTwins(at(2), decision(null, [], drafts), fixedContext());
    assert.deepEqual(several.events, [
      { name: 'RoleCreated_InRegion_v1', body: { role_name: 'r', region: 'europe-belgium' } },
      { name: 'PersonCreated_v1', body: { person_id: 'p' } },
      { name: 'PermissionCreated_InRegion_v1', body: { permission_name: 'x', region: 'europe-belgium' } },
    ]);
    assert.deepEqual(several.changes, [
      { t: 'TwinOwed', twin: { offset: 3, name: 'RoleCreated_v1', body: { role_name: 'r' } } },
      { t: 'TwinOwed', twin: { offset: 3, name: 'PermissionCreated_v1', body: { permission_name: 'x' } } },
    ]);
    const alone = withTwins(at(2), decision(null, [], drafts), oneRegion());
    assert.deepEqual(alone.events.map((e) => e.name), ['RoleCreated_InRegion_v1', 'PersonCreated_v1', 'PermissionCreated_InRegion_v1', 'RoleCreated_v1', 'PermissionCreated_v1']);
    assert.deepEqual(alone.changes, []);
    assert.ok(alone.events.every((e) => !('regional' in e)), 'no expanded draft is regional any more');
  });

  test('the _InRegion name keeps the version', () => {
    assert.equal(inRegionName('SuborganizationCreated_v1'), 'SuborganizationCreated_InRegion_v1');
    assert.equal(inRegionName('RolesSetToPerson_v2'), 'RolesSetToPerson_InRegion_v2');
  });
});

describe('EmitOwedTwins', () => {
  const owing = () => at(8, owed(3, 'a'), owed(3, 'b'), owed(5, 'c'));

  test('given twins owed by entries 3 and 5, when every region holds entry 4, then entry 3\'s twins in order, and only entry 5\'s stays owed', () => {
    const { decision: d, after } = when<{ emitted: number }>(owing(), { kind: 'EmitOwedTwins', through: 4 });
    assert.deepEqual(d.events, [
      { name: 'SuborganizationCreated_v1', body: sub('a', 'a') },
      { name: 'SuborganizationCreated_v1', body: sub('b', 'b') },
    ]);
    assert.deepEqual(d.changes, [{ t: 'TwinsEmitted', through: 4 }]);
    assert.deepEqual(d.reply, { emitted: 2 });
    assert.deepEqual(after.owed_twins.map((t) => t.offset), [5]);

    const rest = when<{ emitted: number }>(after, { kind: 'EmitOwedTwins', through: 8 });
    assert.deepEqual(rest.decision.events, [{ name: 'SuborganizationCreated_v1', body: sub('c', 'c') }]);
    assert.deepEqual(rest.after.owed_twins, []);
  });

  test('when told again about an offset whose twins are emitted, then nothing: no change, no event', () => {
    const once = when(owing(), { kind: 'EmitOwedTwins', through: 5 }).after;
    const again = when<{ emitted: number }>(once, { kind: 'EmitOwedTwins', through: 5 });
    assert.deepEqual(again.decision.changes, []);
    assert.deepEqual(again.decision.events, []);
    assert.deepEqual(again.decision.reply, { emitted: 0 });
  });

  test('when every region holds less than the first owing entry, then nothing', () => {
    const { decision: d, after } = when(owing(), { kind: 'EmitOwedTwins', through: 2 });
    assert.deepEqual([d.changes, d.events], [[], []]);
    assert.equal(after.owed_twins.length, 3);
  });
});

describe('owed twins in snapshots', () => {
  test('survive toSnapshot/fromSnapshot through JSON, and a snapshot from before them reads as owing none', () => {
    const state = at(5, owed(3, 'a'), owed(5, 'c'));
    assert.deepEqual(fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state)))), state);
    // As written before snapshots had a version: no `v`, and no owed_twins.
    const { v: _v, ...older } = toSnapshot(given());
    const { owed_twins: _owed, ...org } = older.org;
    assert.deepEqual(fromSnapshot({ ...older, org }).owed_twins, []);
  });
});
