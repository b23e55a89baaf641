// Roles and permissions: the organization's permissions and roles, a person's roles and additional
// permissions, their effective permissions, and the permission check (a read of memory).
import { Type, type Static } from '@sinclair/typebox';
import { requirePerson } from '../../domain/lookup.js';
import { checkPermissionName, effectivePermissions, hasPermission, PERMISSION_NAME_MAX, requirePermission, requireRole } from '../../domain/rbac.js';
import { GROUP_NAME_MAX } from '../../domain/rules.js';
import type { OrgState, Permission, Role } from '../../domain/state.js';
import { pageOfMap, PaginationMeta, PagingQuery, type PagingParams } from '../paging.js';
import { envelope } from '../respond.js';
import { route, type Request, type Route } from '../route.js';
import { Strings } from '../schemas.js';
import { execute, type HandlerDeps } from './deps.js';

const PermissionName = Type.String({ maxLength: PERMISSION_NAME_MAX, description: 'permission name: 2-1024 characters, ^[A-Za-z0-9][\\w.\\-/:]*[A-Za-z0-9]$' });
const RoleName = Type.String({ maxLength: GROUP_NAME_MAX, description: 'role name: 2-100 characters, ^[A-Za-z0-9]{1}[\\w\\.\\-]*[A-Za-z0-9]$' });
const Description = Type.String({ maxLength: 1000 });
const NameList = (item: typeof PermissionName | typeof RoleName) => Type.Array(item, { maxItems: 1000 });

const PermissionBody = Type.Object({ name: PermissionName, description: Type.Optional(Description) }, { additionalProperties: false });
const PermissionPatch = Type.Object({ description: Type.Optional(Description) }, { additionalProperties: false });
const RoleBody = Type.Object({ name: RoleName, description: Type.Optional(Description), permissions: Type.Optional(NameList(PermissionName)) }, { additionalProperties: false });
const RolePatch = Type.Object({ description: Type.Optional(Description), permissions: Type.Optional(NameList(PermissionName)) }, { additionalProperties: false });
const SetRolesBody = Type.Object({ roles: NameList(RoleName) }, { additionalProperties: false });
const SetPermissionsBody = Type.Object({ permissions: NameList(PermissionName) }, { additionalProperties: false });
const CheckBody = Type.Object({ person_id: Type.String({ maxLength: 200 }), permission_name: PermissionName }, { additionalProperties: false });

const PermissionRet = Type.Object({ name: Type.String(), description: Type.String(), created: Type.String() });
const RoleRet = Type.Object({ name: Type.String(), description: Type.String(), created: Type.String(), permissions: Strings });
const CheckRet = Type.Object({ granted: Type.Boolean() });

const ListQuery = Type.Object(PagingQuery, { additionalProperties: false });

/**
 * The check's two answers, enveloped once: it is the hot read of this area, and serializing {granted} per
 * request costs as much as the check itself. Sent as is, with the envelope's Content-Type.
 */
const checkAnswer = (granted: boolean) => ({ status: 200, text: envelope({ status: 200, result: { granted } }), contentType: 'application/json' });
const GRANTED = checkAnswer(true);
const DENIED = checkAnswer(false);
const WRITE_ERRORS = [400, 401, 403, 404, 408];
const READ_ERRORS = [400, 401, 403, 404];

const permissionView = (p: Permission) => ({ name: p.name, description: p.description, created: p.created });
const roleView = (r: Role) => ({ name: r.name, description: r.description, created: r.created, permissions: [...r.permissions] });

/** Optional fields go into a command only when given: absent means unchanged, and commands stay exact-optional. */
function given<T extends Record<string, unknown>>(fields: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}

export function rbacRoutes(deps: HandlerDeps): Route[] {
  const personId = (req: Request<unknown, unknown>) => req.params['person_id'] as string;
  const paged = <T>(req: Request<unknown, PagingParams>, map: Map<string, T>, list: string, view: (item: T) => unknown) => pageOfMap(deps.pager, req.org.id, req.query, map, list, view);
  const state = (req: Request<unknown, unknown>): OrgState => req.org.state;

  return [
    route<Static<typeof PermissionBody>>({
      method: 'post',
      path: '/rbac/permissions',
      summary: 'Create a permission (an existing name changes nothing and emits nothing)',
      tag: 'rbac',
      auth: 'key',
      body: PermissionBody,
      success: { status: 204 },
      errors: WRITE_ERRORS,
      handler: async (req) => {
        await execute(deps, req, { kind: 'CreatePermission', name: req.body.name, ...given({ description: req.body.description }) });
        return { status: 204 };
      },
    }),
    route<unknown, PagingParams>({
      method: 'get',
      path: '/rbac/permissions',
      summary: "List the names of the organization's permissions, in name order (offset or cursor paging)",
      tag: 'rbac',
      auth: 'key',
      query: ListQuery,
      success: { status: 200, result: Strings, meta: PaginationMeta },
      errors: READ_ERRORS,
      // names only, as the original's list; GET /rbac/permissions/{permission_name} has the rest
      handler: (req) => paged(req, state(req).permissions, 'rbac:permissions', (p) => p.name),
    }),
    route({
      method: 'get',
      path: '/rbac/permissions/{permission_name}',
      summary: 'Get a permission',
      tag: 'rbac',
      auth: 'key',
      success: { status: 200, result: PermissionRet },
      errors: READ_ERRORS,
      handler: (req) => ({ status: 200, result: permissionView(requirePermission(state(req), req.params['permission_name'] as string)) }),
    }),
    route<Static<typeof PermissionPatch>>({
      method: 'patch',
      path: '/rbac/permissions/{permission_name}',
      summary: "Change a permission's description",
      tag: 'rbac',
      auth: 'key',
      body: PermissionPatch,
      success: { status: 204 },
      errors: WRITE_ERRORS,
      handler: async (req) => {
        await execute(deps, req, { kind: 'UpdatePermission', name: req.params['permission_name'] as string, ...given({ description: req.body.description }) });
        return { status: 204 };
      },
    }),
    route({
      method: 'delete',
      path: '/rbac/permissions/{permission_name}',
      summary: 'Delete a permission, revoking it from the persons holding it directly; 409 while a role includes it',
      tag: 'rbac',
      auth: 'key',
      success: { status: 204 },
      errors: [...WRITE_ERRORS, 409],
      handler: async (req) => {
        await execute(deps, req, { kind: 'DeletePermission', name: req.params['permission_name'] as string });
        return { status: 204 };
      },
    }),
    route<Static<typeof RoleBody>>({
      method: 'post',
      path: '/rbac/roles',
      summary: "Create a role (an existing name changes nothing and emits nothing); its permissions must exist",
      tag: 'rbac',
      auth: 'key',
      body: RoleBody,
      success: { status: 204 },
      errors: WRITE_ERRORS,
      handler: async (req) => {
        await execute(deps, req, { kind: 'CreateRole', name: req.body.name, ...given({ description: req.body.description, permissions: req.body.permissions }) });
        return { status: 204 };
      },
    }),
    route<unknown, PagingParams>({
      method: 'get',
      path: '/rbac/roles',
      summary: "List the names of the organization's roles, in name order (offset or cursor paging)",
      tag: 'rbac',
      auth: 'key',
      query: ListQuery,
      success: { status: 200, result: Strings, meta: PaginationMeta },
      errors: READ_ERRORS,
      handler: (req) => paged(req, state(req).roles, 'rbac:roles', (r) => r.name),
    }),
    route({
      method: 'get',
      path: '/rbac/roles/{role_name}',
      summary: 'Get a role',
      tag: 'rbac',
      auth: 'key',
      success: { status: 200, result: RoleRet },
      errors: READ_ERRORS,
      handler: (req) => ({ status: 200, result: roleView(requireRole(state(req), req.params['role_name'] as string)) }),
    }),
    route<Static<typeof RolePatch>>({
      method: 'patch',
      path: '/rbac/roles/{role_name}',
      summary: "Change a role's description or replace its permissions (which must exist)",
      tag: 'rbac',
      auth: 'key',
      body: RolePatch,
      success: { status: 204 },
      errors: WRITE_ERRORS,
      handler: async (req) => {
        await execute(deps, req, { kind: 'UpdateRole', name: req.params['role_name'] as string, ...given({ description: req.body.description, permissions: req.body.permissions }) });
        return { status: 204 };
      },
    }),
    route({
      method: 'delete',
      path: '/rbac/roles/{role_name}',
      summary: 'Delete a role, revoking it from every person holding it',
      tag: 'rbac',
      auth: 'key',
      success: { status: 204 },
      errors: WRITE_ERRORS,
      handler: async (req) => {
        await execute(deps, req, { kind: 'DeleteRole', name: req.params['role_name'] as string });
        return { status: 204 };
      },
    }),
    route({
      method: 'get',
      path: '/persons/{person_id}/roles',
      summary: "List a person's roles",
      tag: 'rbac',
      auth: 'key',
      success: { status: 200, result: Strings },
      errors: READ_ERRORS,
      handler: (req) => ({ status: 200, result: [...(requirePerson(state(req), personId(req)).roles ?? [])] }),
    }),
    route<Static<typeof SetRolesBody>>({
      method: 'put',
      path: '/persons/{person_id}/roles',
      summary: "Set a person's roles: exactly the listed ones, which must exist; duplicates ignored; [] removes all",
      tag: 'rbac',
      auth: 'key',
      body: SetRolesBody,
      success: { status: 204 },
      errors: WRITE_ERRORS,
      handler: async (req) => {
        await execute(deps, req, { kind: 'SetPersonRoles', person_id: personId(req), roles: req.body.roles });
        return { status: 204 };
      },
    }),
    route({
      method: 'get',
      path: '/persons/{person_id}/additional-permissions',
      summary: "List the permissions a person holds besides those of their roles",
      tag: 'rbac',
      auth: 'key',
      success: { status: 200, result: Strings },
      errors: READ_ERRORS,
      handler: (req) => ({ status: 200, result: [...(requirePerson(state(req), personId(req)).additional_permissions ?? [])] }),
    }),
    route<Static<typeof SetPermissionsBody>>({
      method: 'put',
      path: '/persons/{person_id}/additional-permissions',
      summary: "Set a person's additional permissions: exactly the listed ones, which must exist; duplicates ignored; [] removes all",
      tag: 'rbac',
      auth: 'key',
      body: SetPermissionsBody,
      success: { status: 204 },
      errors: WRITE_ERRORS,
      handler: async (req) => {
        await execute(deps, req, { kind: 'SetPersonAdditionalPermissions', person_id: personId(req), permissions: req.body.permissions });
        return { status: 204 };
      },
    }),
    route({
      method: 'get',
      path: '/persons/{person_id}/permissions',
      summary: "A person's effective permissions: those of their roles and their additional ones",
      tag: 'rbac',
      auth: 'key',
      success: { status: 200, result: Strings },
      errors: READ_ERRORS,
      handler: (req) => ({ status: 200, result: effectivePermissions(state(req), requirePerson(state(req), personId(req))) }),
    }),
    route<Static<typeof CheckBody>>({
      method: 'post',
      path: '/rbac/check',
      summary: 'Whether a person holds a permission, through a role or directly (answered from memory; an unknown permission is not granted)',
      tag: 'rbac',
      auth: 'key',
      body: CheckBody,
      success: { status: 200, result: CheckRet },
      errors: READ_ERRORS,
      handler: (req) => {
        const s = state(req);
        checkPermissionName(req.body.permission_name, 'permission_name');
        return hasPermission(s, requirePerson(s, req.body.person_id), req.body.permission_name) ? GRANTED : DENIED;
      },
    }),
  ];
}
