// The caller's organization, its suborganizations, and API key rotation.
import { Type, type Static } from '@sinclair/typebox';
import type { SuborganizationRet } from '../../domain/organizations.js';
import type { OrgState } from '../../domain/state.js';
import { organizationView } from '../../domain/views.js';
import type { OrgDeletions } from '../../org/deletion.js';
import { route, type Route } from '../route.js';
import { Strings } from '../schemas.js';
import { execute, type HandlerDeps } from './deps.js';

const SubOrgBody = Type.Object({ sub_org_name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
const Organization = Type.Object({
  id: Type.String(),
  org_name: Type.String(),
  parent_id: Type.Union([Type.String(), Type.Null()]),
  tenant_name: Type.String(),
  persons_pool_org_ids: Strings,
  group_pool_org_ids: Strings,
});

/** The name of the organization at the top of `state`'s hierarchy. */
export const tenantName = (deps: HandlerDeps, state: OrgState): string => deps.registry.get(state.root_id)?.state.org_name ?? state.org_name;

export function organizationRoutes(deps: HandlerDeps, deletions: Pick<OrgDeletions, 'delete'>): Route[] {
  return [
    route({
      method: 'get',
      path: '/organizations',
      summary: "The caller's organization",
      tag: 'organizations',
      auth: 'key',
      success: { status: 200, result: Organization },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: organizationView(req.org.state, tenantName(deps, req.org.state)) }),
    }),
    route({
      method: 'delete',
      path: '/organizations',
      summary: 'Delete the caller\'s organization and every suborganization below it; the root organization cannot be deleted',
      tag: 'organizations',
      auth: 'key',
      success: { status: 204 },
      errors: [400, 401, 403, 404],
      handler: async (req) => {
        await deletions.delete(req.org.id);
        return { status: 204 };
      },
    }),
    route<Static<typeof SubOrgBody>>({
      method: 'post',
      path: '/organizations/suborganizations',
      summary: 'Create a suborganization; its API key is returned once',
      tag: 'organizations',
      auth: 'key',
      body: SubOrgBody,
      success: { status: 200, result: Type.Object({ id: Type.String(), org_name: Type.String(), parent_id: Type.String(), api_key: Type.String() }) },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => ({ status: 200, result: await execute<SuborganizationRet>(deps, req, { kind: 'CreateSuborganization', sub_org_name: req.body.sub_org_name }) }),
    }),
    route({
      method: 'get',
      path: '/organizations/suborganizations',
      summary: 'IDs of every organization below the caller',
      tag: 'organizations',
      auth: 'key',
      success: { status: 200, result: Strings },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: deps.registry.descendants(req.org.id) }),
    }),
    route({
      method: 'put',
      path: '/organizations/api-keys',
      summary: 'Rotate the API key: the old key stops working at once',
      tag: 'organizations',
      auth: 'key',
      success: { status: 200, result: Type.Object({ api_key: Type.String() }) },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => ({ status: 200, result: await execute<{ api_key: string }>(deps, req, { kind: 'RotateApiKey' }) }),
    }),
  ];
}
