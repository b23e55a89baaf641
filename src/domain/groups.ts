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

function requireGroup(state: OrgState, name: string) {
  const g = state.groups.get(name);
  if (!g) throw notFound(`group ${quote(name)} not found`);
  return g;
}

/** The group and every person must exist (a missing one refuses the whole request); members stay as they are. */
export function addGroupPersons(state: OrgState, name: string, personIds: readonly string[]): Decision<null> {
  const group = requireGroup(state, name);
  const changes: Change[] = [];
  const seen = new Set<string>();
  for (const id of personIds) {
    const person = requirePerson(state, id);
    if (group.members.has(id) || seen.has(id)) continue;
    seen.add(id);
    changes.push({ t: 'PersonGroupsSet', person_id: id, groups: [...person.groups, name].sort() });
  }
  return decision(null, changes);
}

/** The original's rule: a person who is not in the group is an error, not a no-op. */
export function removeGroupPerson(state: OrgState, name: string, personId: string): Decision<null> {
  const person = requirePerson(state, personId);
  const group = requireGroup(state, name);
  if (!group.members.has(personId)) throw notFound(`person ${quote(personId)} is not in group ${quote(name)}`);
  return decision(null, [{ t: 'PersonGroupsSet', person_id: personId, groups: person.groups.filter((g) => g !== name) }]);
}
