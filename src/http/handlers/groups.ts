// Groups and a person's membership.
import { Type, type Static } from '@sinclair/typebox';
import { notFound, quote } from '../../errors.js';
import { requirePerson } from '../../domain/lookup.js';
import { PaginationMeta, PagingQuery, type PagingParams } from '../paging.js';
import { route, type Route } from '../route.js';
import { GroupName, Strings } from '../schemas.js';
import { execute, type HandlerDeps } from './deps.js';

const GroupBody = Type.Object({ name: GroupName, description: Type.Optional(Type.String({ maxLength: 1000 })) }, { additionalProperties: false });
const SetGroupsBody = Type.Object({ groups: Type.Array(GroupName, { maxItems: 1000 }) }, { additionalProperties: false });
const AddPersonsBody = Type.Object({ persons: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 1000 }) }, { additionalProperties: false });
const GroupRet = Type.Object({ name: Type.String(), description: Type.String(), members_count: Type.Integer(), created: Type.String() });

export function groupRoutes(deps: HandlerDeps): Route[] {
  const group = (req: { org: { state: { groups: Map<string, unknown> } }; params: Record<string, string> }) => {
    const name = req.params['group_name'] as string;
    const g = req.org.state.groups.get(name);
    if (!g) throw notFound(`group ${quote(name)} not found`);
    return g as { name: string; description: string; created: string; members: Set<string> };
  };
  return [
    route<Static<typeof GroupBody>>({
      method: 'post',
      path: '/groups',
      summary: 'Create a group (an existing name changes nothing)',
      tag: 'groups',
      auth: 'key',
      body: GroupBody,
      success: { status: 201 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps, req, req.body.description === undefined ? { kind: 'CreateGroup', name: req.body.name } : { kind: 'CreateGroup', name: req.body.name, description: req.body.description });
        return { status: 201 };
      },
    }),
    route({
      method: 'get',
      path: '/groups',
      summary: 'List group names',
      tag: 'groups',
      auth: 'key',
      success: { status: 200, result: Strings },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: [...req.org.state.groups.keys()].sort() }),
    }),
    route({
      method: 'get',
      path: '/groups/{group_name}',
      summary: 'Get a group',
      tag: 'groups',
      auth: 'key',
      success: { status: 200, result: GroupRet },
      errors: [400, 401, 403, 404],
      handler: (req) => {
        const g = group(req);
        return { status: 200, result: { name: g.name, description: g.description, members_count: g.members.size, created: g.created } };
      },
    }),
    route({
      method: 'delete',
      path: '/groups/{group_name}',
      summary: 'Delete a group, removing every member from it',
      tag: 'groups',
      auth: 'key',
      success: { status: 200 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps, req, { kind: 'DeleteGroup', name: req.params['group_name'] as string });
        return { status: 200 };
      },
    }),
    route<unknown, PagingParams>({
      method: 'get',
      path: '/groups/{group_name}/persons',
      summary: 'List the person IDs in a group (offset or cursor paging)',
      tag: 'groups',
      auth: 'key',
      query: Type.Object(PagingQuery, { additionalProperties: false }),
      success: { status: 200, result: Strings, meta: PaginationMeta },
      errors: [400, 401, 403, 404],
      handler: (req) => {
        const g = group(req);
        const page = deps.pager.page([...g.members].sort(), req.query, { org: req.org.id, list: `group:${g.name}` });
        return { status: 200, result: page.keys, meta: page.meta };
      },
    }),
    route<Static<typeof AddPersonsBody>>({
      method: 'post',
      path: '/groups/{group_name}/persons',
      summary: 'Add persons to a group: the group and every person must exist; members already in it stay',
      tag: 'groups',
      auth: 'key',
      body: AddPersonsBody,
      success: { status: 201 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps, req, { kind: 'AddGroupPersons', name: req.params['group_name'] as string, person_ids: req.body.persons });
        return { status: 201 };
      },
    }),
    route({
      method: 'delete',
      path: '/groups/{group_name}/persons/{person_id}',
      summary: 'Remove a person from a group; a person not in it is a 404',
      tag: 'groups',
      auth: 'key',
      success: { status: 200 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps, req, { kind: 'RemoveGroupPerson', name: req.params['group_name'] as string, person_id: req.params['person_id'] as string });
        return { status: 200 };
      },
    }),
    route({
      method: 'get',
      path: '/persons/{person_id}/groups',
      summary: "List a person's groups",
      tag: 'groups',
      auth: 'key',
      success: { status: 200, result: Strings },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: [...requirePerson(req.org.state, req.params['person_id'] as string).groups] }),
    }),
    route<Static<typeof SetGroupsBody>>({
      method: 'put',
      path: '/persons/{person_id}/groups',
      summary: "Set a person's groups: exactly the listed ones, which must exist; duplicates ignored; [] removes all",
      tag: 'groups',
      auth: 'key',
      body: SetGroupsBody,
      success: { status: 200, result: Strings },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => ({
        status: 200,
        result: await execute<string[]>(deps, req, { kind: 'SetPersonGroups', person_id: req.params['person_id'] as string, groups: req.body.groups }),
      }),
    }),
  ];
}
