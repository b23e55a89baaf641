// The organization hierarchy as a person and a quota see it: the organizations that hold a person, and the
// resources the caller's organization and every organization below it use.
import { Type } from '@sinclair/typebox';
import { requirePerson } from '../../domain/lookup.js';
import { route, type Route } from '../route.js';
import type { HandlerDeps } from './deps.js';
import { tenantName } from './organizations.js';

const PersonOrganization = Type.Object({
  id: Type.String(),
  org_name: Type.String(),
  parent_id: Type.Optional(Type.String({ description: 'absent for a root organization' })),
  tenant_name: Type.String({ description: 'the name of the root organization of the hierarchy' }),
});
const Usage = Type.Object({
  num_suborganizations: Type.Integer({ description: 'organizations below the caller, at any depth' }),
  num_persons: Type.Integer(),
  num_groups: Type.Integer(),
  num_webhooks: Type.Integer(),
  num_oauth_clients: Type.Integer(),
});

export function quotaRoutes(deps: HandlerDeps): Route[] {
  return [
    route({
      method: 'get',
      path: '/persons/{person_id}/organizations',
      summary: "The organizations that hold the person: persons are not shared between organizations, so the caller's alone",
      tag: 'persons',
      auth: 'key',
      success: { status: 200, result: Type.Array(PersonOrganization) },
      errors: [400, 401, 403, 404],
      handler: (req) => {
        const s = req.org.state;
        requirePerson(s, req.params['person_id'] as string);
        return { status: 200, result: [{ id: s.id, org_name: s.org_name, ...(s.parent_id !== null && { parent_id: s.parent_id }), tenant_name: tenantName(deps, s) }] };
      },
    }),
    route({
      method: 'get',
      path: '/organizations/quota/usage',
      summary: "Resources used by the caller's organization and every organization below it",
      tag: 'organizations',
      auth: 'key',
      success: { status: 200, result: Usage },
      errors: [400, 401, 403, 404],
      handler: (req) => {
        const below = deps.registry.descendants(req.org.id);
        const usage = { num_suborganizations: below.length, num_persons: 0, num_groups: 0, num_webhooks: 0, num_oauth_clients: 0 };
        for (const id of [req.org.id, ...below]) {
          const s = deps.registry.get(id)?.state;
          if (!s) continue;
          usage.num_persons += s.persons.size;
          usage.num_groups += s.groups.size;
          usage.num_webhooks += s.webhooks.size;
          usage.num_oauth_clients += s.oauth_clients.size;
        }
        return { status: 200, result: usage };
      },
    }),
  ];
}
