// Persons: create, create-or-update by handle, list, read, activate, delete.
import { Type, type Static } from '@sinclair/typebox';
import { badRequest } from '../../errors.js';
import type { PersonInput } from '../../domain/commands.js';
import type { PutPersonReply } from '../../domain/persons.js';
import { requirePerson } from '../../domain/lookup.js';
import { handleKey, HANDLE_TYPES, type HandleType, type OrgState } from '../../domain/state.js';
import { personView, type PersonRet as PersonView } from '../../domain/views.js';
import { PaginationMeta, PagingQuery, type PagingParams } from '../paging.js';
import { route, type Route } from '../route.js';
import { AttributeSet, CommaList, GroupName, Handle, PersonRet, Region, splitList } from '../schemas.js';
import { execute, type HandlerDeps } from './deps.js';
import { GROUP_NAME_MAX } from '../../domain/rules.js';

const PersonBody = Type.Object(
  {
    handles: Type.Array(Handle, { minItems: 1, maxItems: 50 }),
    region: Type.Optional(Region),
    groups: Type.Optional(Type.Array(GroupName, { maxItems: 1000 })),
    roles: Type.Optional(Type.Array(Type.String({ maxLength: GROUP_NAME_MAX, description: 'a role name' }), { maxItems: 1000, description: 'roles that exist (see /rbac/roles)' })),
    attributes: Type.Optional(Type.Record(Type.String(), AttributeSet, { description: 'bucket name → attribute set' })),
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  {
    ...PagingQuery,
    handle: Type.Optional(Type.String({ description: 'filter: type:value, e.g. email_address:ada@example.com' })),
    fields: CommaList('extra fields of each person: handles, groups, attributes'),
  },
  { additionalProperties: false },
);

const LIST_FIELDS = ['handles', 'groups', 'attributes'] as const;

function listItem(state: OrgState, id: string, fields: readonly string[]) {
  const p = requirePerson(state, id);
  const item: Record<string, unknown> = { person_id: p.person_id, active: p.active, person_type: p.person_type, region: p.region };
  if (fields.includes('handles')) item['handles'] = p.handles;
  if (fields.includes('groups')) item['groups'] = p.groups;
  if (fields.includes('attributes')) item['attributes'] = p.attributes;
  return item;
}

function parseHandleFilter(raw: string): { type: HandleType; value: string } {
  const at = raw.indexOf(':');
  const type = raw.slice(0, at) as HandleType;
  if (at < 0 || !HANDLE_TYPES.includes(type)) throw badRequest(`handle: must be type:value with type one of ${HANDLE_TYPES.join(', ')}`);
  return { type, value: raw.slice(at + 1) };
}

export function personRoutes(deps: HandlerDeps): Route[] {
  return [
    route<Static<typeof PersonBody>>({
      method: 'post',
      path: '/persons',
      summary: 'Create a person',
      tag: 'persons',
      auth: 'key',
      body: PersonBody,
      success: { status: 201, result: PersonRet },
      errors: [400, 401, 403, 404, 408, 409],
      handler: async (req) => ({ status: 201, result: await execute<PersonView>(deps, req, { kind: 'CreatePerson', input: req.body as PersonInput }) }),
    }),
    route<Static<typeof PersonBody>>({
      method: 'put',
      path: '/persons',
      summary: 'Create or update a person by handle (idempotent)',
      tag: 'persons',
      auth: 'key',
      body: PersonBody,
      success: { status: 200, result: PersonRet, description: '200 when a person with one of the handles existed, 201 when created' },
      errors: [400, 401, 403, 404, 408, 409],
      handler: async (req) => {
        const r = await execute<PutPersonReply>(deps, req, { kind: 'PutPerson', input: req.body as PersonInput });
        return { status: r.created ? 201 : 200, result: r.person };
      },
    }),
    route<unknown, PagingParams & { handle?: string; fields?: string }>({
      method: 'get',
      path: '/persons',
      summary: 'List persons (offset or cursor paging)',
      tag: 'persons',
      auth: 'key',
      query: ListQuery,
      success: { status: 200, result: Type.Array(Type.Object({ person_id: Type.String() }, { additionalProperties: true })), meta: PaginationMeta },
      errors: [400, 401, 403, 404],
      handler: (req) => {
        const state = req.org.state;
        const fields = splitList(req.query.fields) ?? [];
        for (const f of fields) if (!(LIST_FIELDS as readonly string[]).includes(f)) throw badRequest(`fields: unknown field "${f}" (known: ${LIST_FIELDS.join(', ')})`);
        let keys: readonly string[] = state.person_order;
        let list = 'persons';
        if (req.query.handle !== undefined) {
          const id = state.handles.get(handleKey(parseHandleFilter(req.query.handle)));
          keys = id === undefined ? [] : [id];
          list = `persons?handle=${req.query.handle}`;
        }
        const page = deps.pager.page(keys, req.query, { org: state.id, list });
        return { status: 200, result: page.keys.map((id) => listItem(state, id, fields)), meta: page.meta };
      },
    }),
    route({
      method: 'get',
      path: '/persons/{person_id}',
      summary: 'Get a person',
      tag: 'persons',
      auth: 'key',
      success: { status: 200, result: PersonRet },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: personView(requirePerson(req.org.state, req.params['person_id'] as string)) }),
    }),
    route<{ active: boolean }>({
      method: 'patch',
      path: '/persons/{person_id}',
      summary: 'Activate or deactivate a person',
      tag: 'persons',
      auth: 'key',
      body: Type.Object({ active: Type.Boolean() }, { additionalProperties: false }),
      success: { status: 200, result: PersonRet },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => ({
        status: 200,
        result: await execute<PersonView>(deps, req, { kind: 'SetPersonActive', person_id: req.params['person_id'] as string, active: req.body.active }),
      }),
    }),
    route({
      method: 'delete',
      path: '/persons/{person_id}',
      summary: 'Delete a person',
      tag: 'persons',
      auth: 'key',
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps, req, { kind: 'DeletePerson', person_id: req.params['person_id'] as string });
        return { status: 204 };
      },
    }),
  ];
}
