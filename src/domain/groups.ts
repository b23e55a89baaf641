// Decisions about groups and a person's membership (the seed's set-groups rules 1-4).
import { notFound, quote } from '../errors.js';
import type { Change } from './changes.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import { checkGroupName } from './rules.js';
import type { OrgState } from './state.js';
import { normalizeGroups, requirePerson } from './lookup.js';

export function createGroup(state: OrgState, name: string, description: string | undefined, ctx: DecideContext): Decision<null> {
  checkGroupName(name);
  if (state.groups.has(name)) return decision(null);
  return decision(null, [{ t: 'GroupCreated', name, description: description ?? '', created: new Date(ctx.nowMs).toISOString() }]);
}

export function deleteGroup(state: OrgState, name: string): Decision<null> {
  if (!state.groups.has(name)) throw notFound(`group ${quote(name)} not found`);
  return decision(null, [{ t: 'GroupDeleted', name }]);
}

/** Rule 1: the person ends up in exactly the listed groups. */
export function setPersonGroups(state: OrgState, personId: string, names: readonly string[]): Decision<string[]> {
  const person = requirePerson(state, personId);
  const groups = normalizeGroups(state, names, 'groups');
  const same = groups.length === person.groups.length && groups.every((g, i) => g === person.groups[i]);
  const changes: Change[] = same ? [] : [{ t: 'PersonGroupsSet', person_id: personId, groups }];
  return decision(groups, changes);
}
