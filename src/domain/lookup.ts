// Lookups that every decision shares: a person that must exist, groups that must exist.
import { badRequest, notFound, quote } from '../errors.js';
import { checkGroupName } from './rules.js';
import type { OrgState, Person } from './state.js';

export function requirePerson(state: OrgState, personId: string): Person {
  const p = state.persons.get(personId);
  if (!p) throw notFound(`person ${quote(personId)} not found`);
  return p;
}

/**
 * The groups a list names, each existing (rule 2), duplicates dropped (rule 3), sorted.
 * An empty list is an empty set (rule 4). A name that is not a group is a 400 naming it.
 */
export function normalizeGroups(state: OrgState, names: readonly string[], field: string): string[] {
  const out = new Set<string>();
  names.forEach((name, i) => {
    checkGroupName(name, `${field}[${i}]`);
    if (!state.groups.has(name)) throw badRequest(`${field}[${i}]: group "${name}" does not exist`);
    out.add(name);
  });
  return [...out].sort();
}

