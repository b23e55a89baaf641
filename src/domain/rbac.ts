// Decisions about access control: permissions, roles, and the roles and additional permissions of a person.
// Every change is a regional event (its _InRegion form now, its plain form once every region has it).
import { badRequest, conflict, notFound, quote } from '../errors.js';
import type { Change } from './changes.js';
import { decision, type DecideContext, type Decision, type EventDraft } from './decision.js';
import { requirePerson } from './lookup.js';
import { checkGroupName } from './rules.js';
import type { OrgState, Person, Role } from './state.js';

export const PERMISSION_NAME_MAX = 1024;
/** The group-name rule, with `.`, `/` and `:` also allowed inside (e.g. `documents:read`, `api/v1.write`). */
export const PERMISSION_NAME_PATTERN = /^[A-Za-z0-9][\w.\-/:]*[A-Za-z0-9]$/;

export function checkPermissionName(name: string, field = 'name'): void {
  if (name.length > PERMISSION_NAME_MAX) throw badRequest(`${field}: permission name "${name.slice(0, 20)}..." is longer than ${PERMISSION_NAME_MAX} characters`);
  if (!PERMISSION_NAME_PATTERN.test(name)) {
    throw badRequest(`${field}: permission name "${name}" must be 2-${PERMISSION_NAME_MAX} characters matching ${PERMISSION_NAME_PATTERN.source}`);
  }
}

/** Role names follow the group-name rule. */
export function checkRoleName(name: string, field = 'name'): void {
  try {
    checkGroupName(name, field);
  } catch {
    throw badRequest(`${field}: role name "${name.slice(0, 100)}" must be 2-100 characters matching ^[A-Za-z0-9]{1}[\\w\\.\\-]*[A-Za-z0-9]$`);
  }
}

/**
 * The names a list gives, each valid and existing, duplicates dropped, sorted: the replace-set rules of
 * set-groups. A name that does not exist is a 400 naming it (the request names it, the addressed resource exists).
 */
function normalizeNames(names: readonly string[], field: string, kind: 'role' | 'permission', exists: (n: string) => boolean): string[] {
  const out = new Set<string>();
  names.forEach((name, i) => {
    if (kind === 'role') checkRoleName(name, `${field}[${i}]`);
    else checkPermissionName(name, `${field}[${i}]`);
    if (!exists(name)) throw badRequest(`${field}[${i}]: ${kind} "${name}" does not exist`);
    out.add(name);
  });
  return [...out].sort();
}

const normalizePermissions = (state: OrgState, names: readonly string[], field: string) => normalizeNames(names, field, 'permission', (n) => state.permissions.has(n));
export const normalizeRoles = (state: OrgState, names: readonly string[], field: string) => normalizeNames(names, field, 'role', (n) => state.roles.has(n));

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
const regional = (name: string, body: Record<string, unknown>): EventDraft => ({ name, body, regional: true });

export function requirePermission(state: OrgState, name: string) {
  const p = state.permissions.get(name);
  if (!p) throw notFound(`permission ${quote(name)} not found`);
  return p;
}

export function requireRole(state: OrgState, name: string): Role {
  const r = state.roles.get(name);
  if (!r) throw notFound(`role ${quote(name)} not found`);
  return r;
}

export function createPermission(state: OrgState, name: string, description: string | undefined, ctx: DecideContext): Decision<null> {
  checkPermissionName(name);
  if (state.permissions.has(name)) return decision(null);
  const permission = { name, description: description ?? '', created: new Date(ctx.nowMs).toISOString() };
  return decision(null, [{ t: 'PermissionCreated', permission }], [regional('PermissionCreated_v1', { permission_name: name, description: permission.description })]);
}

export function updatePermission(state: OrgState, name: string, description: string | undefined): Decision<null> {
  const p = requirePermission(state, name);
  if (description === undefined || description === p.description) return decision(null);
  return decision(null, [{ t: 'PermissionUpdated', name, description }], [regional('PermissionUpdated_v1', { permission_name: name, description })]);
}

/** Refused while a role includes it; persons holding it directly lose it first, in the same entry. */
export function deletePermission(state: OrgState, name: string): Decision<null> {
  requirePermission(state, name);
  const including = [...state.roles.values()].filter((r) => r.permissions.includes(name)).map((r) => r.name).sort();
  if (including.length > 0) throw conflict(`permission ${quote(name)} is included in role(s) ${including.map((r) => `"${r}"`).join(', ')}; remove it from them first`);
  const changes: Change[] = [];
  const events: EventDraft[] = [];
  for (const p of holders(state, (p) => p.additional_permissions, name)) {
    const old = p.additional_permissions ?? [];
    const next = old.filter((n) => n !== name);
    changes.push({ t: 'PersonAdditionalPermissionsSet', person_id: p.person_id, permissions: next });
    events.push(permissionsSetEvent(p.person_id, next, old));
  }
  changes.push({ t: 'PermissionDeleted', name });
  events.push(regional('PermissionDeleted_v1', { permission_name: name }));
  return decision(null, changes, events);
}

export function createRole(state: OrgState, name: string, description: string | undefined, permissions: readonly string[] | undefined, ctx: DecideContext): Decision<null> {
  checkRoleName(name);
  const perms = normalizePermissions(state, permissions ?? [], 'permissions');
  if (state.roles.has(name)) return decision(null);
  const role: Role = { name, description: description ?? '', created: new Date(ctx.nowMs).toISOString(), permissions: perms };
  return decision(null, [{ t: 'RoleCreated', role }], [regional('RoleCreated_v1', { role_name: name, description: role.description, permissions: [...perms] })]);
}

export function updateRole(state: OrgState, name: string, description: string | undefined, permissions: readonly string[] | undefined): Decision<null> {
  const role = requireRole(state, name);
  const perms = permissions === undefined ? role.permissions : normalizePermissions(state, permissions, 'permissions');
  const desc = description ?? role.description;
  if (desc === role.description && sameSet(perms, role.permissions)) return decision(null);
  return decision(
    null,
    [{ t: 'RoleUpdated', name, description: desc, permissions: perms }],
    [regional('RoleUpdated_v1', { role_name: name, description: desc, permissions: [...perms] })],
  );
}

/** Revokes the role from every person holding it (RolesSetToPerson for each), then deletes it, in one entry. */
export function deleteRole(state: OrgState, name: string): Decision<null> {
  requireRole(state, name);
  const changes: Change[] = [];
  const events: EventDraft[] = [];
  for (const p of holders(state, (p) => p.roles, name)) {
    const old = p.roles ?? [];
    const next = old.filter((n) => n !== name);
    changes.push({ t: 'PersonRolesSet', person_id: p.person_id, roles: next });
    events.push(rolesSetEvent(p.person_id, next, old));
  }
  changes.push({ t: 'RoleDeleted', name });
  events.push(regional('RoleDeleted_v1', { role_name: name }));
  return decision(null, changes, events);
}

export function setPersonRoles(state: OrgState, personId: string, names: readonly string[]): Decision<string[]> {
  const person = requirePerson(state, personId);
  const roles = normalizeRoles(state, names, 'roles');
  const old = person.roles ?? [];
  if (sameSet(roles, old)) return decision(roles);
  return decision(roles, [{ t: 'PersonRolesSet', person_id: personId, roles }], [rolesSetEvent(personId, roles, old)]);
}

export function setPersonAdditionalPermissions(state: OrgState, personId: string, names: readonly string[]): Decision<string[]> {
  const person = requirePerson(state, personId);
  const permissions = normalizePermissions(state, names, 'permissions');
  const old = person.additional_permissions ?? [];
  if (sameSet(permissions, old)) return decision(permissions);
  return decision(permissions, [{ t: 'PersonAdditionalPermissionsSet', person_id: personId, permissions }], [permissionsSetEvent(personId, permissions, old)]);
}

/** The person's permissions from their roles and their additional ones, sorted. */
export function effectivePermissions(state: OrgState, person: Person): string[] {
  const out = new Set(person.additional_permissions);
  for (const r of person.roles ?? []) for (const p of state.roles.get(r)?.permissions ?? []) out.add(p);
  return [...out].sort();
}

const NONE: readonly string[] = [];

/**
 * Whether the person holds the permission, directly or through a role: a read of memory only, allocating
 * nothing, and stopping at the first list that holds it.
 */
export function hasPermission(state: OrgState, person: Person, name: string): boolean {
  if (person.additional_permissions?.includes(name)) return true;
  for (const r of person.roles ?? NONE) if (state.roles.get(r)?.permissions.includes(name)) return true;
  return false;
}

/** Persons whose list holds the name, in person order. A scan: deleting a role or permission is rare. */
function holders(state: OrgState, list: (p: Person) => readonly string[] | undefined, name: string): Person[] {
  const out: Person[] = [];
  for (const id of state.person_order) {
    const p = state.persons.get(id);
    if (p && list(p)?.includes(name)) out.push(p);
  }
  return out;
}

export function rolesSetEvent(personId: string, next: readonly string[], old: readonly string[]): EventDraft {
  return regional('RolesSetToPerson_v1', { new_roles: [...next], old_roles: [...old], person_id: personId });
}

function permissionsSetEvent(personId: string, next: readonly string[], old: readonly string[]): EventDraft {
  return regional('PermissionsSetToPerson_v1', { new_permissions: [...next], old_permissions: [...old], person_id: personId });
}
