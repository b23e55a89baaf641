// The organization's allowed origin domains (the original's /organizations/config/domains): exact hosts or `*` patterns.
import { Type, type Static } from '@sinclair/typebox';
import { ALLOWED_DOMAINS_MAX } from '../../domain/domains.js';
import { badRequest } from '../../errors.js';
import { route, type Route } from '../route.js';
import { Strings } from '../schemas.js';
import { execute, type HandlerDeps } from './deps.js';

const PATH = '/organizations/config/domains';
const DomainsBody = Type.Object(
  { domains: Type.Array(Type.String({ maxLength: 253 }), { maxItems: ALLOWED_DOMAINS_MAX, description: "hosts ('xyz.com') or patterns ('*.xyz.com': '*' matches any run of characters); case-insensitive" }) },
  { additionalProperties: false },
);
const AddQuery = Type.Object({ overwrite: Type.Optional(Type.Boolean({ description: 'true: the list becomes exactly the given domains' })) }, { additionalProperties: false });
const RemoveQuery = Type.Object(
  {
    domain: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'the domain or pattern to remove; one not in the list changes nothing' })),
    deleteAll: Type.Optional(Type.Boolean({ description: 'true: remove every domain' })),
  },
  { additionalProperties: false },
);

export function domainRoutes(deps: HandlerDeps): Route[] {
  return [
    route({
      method: 'get',
      path: PATH,
      summary: 'The allowed origin domains of the organization',
      tag: 'organizations',
      auth: 'key',
      success: { status: 200, result: Strings },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: [...req.org.state.allowed_domains] }),
    }),
    route<Static<typeof DomainsBody>, Static<typeof AddQuery>>({
      method: 'post',
      path: PATH,
      summary: 'Add allowed origin domains (present ones are ignored), or replace the list with ?overwrite=true',
      tag: 'organizations',
      auth: 'key',
      body: DomainsBody,
      query: AddQuery,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps, req, { kind: 'AddAllowedDomains', domains: req.body.domains, overwrite: req.query.overwrite === true });
        return { status: 204 };
      },
    }),
    route<unknown, Static<typeof RemoveQuery>>({
      method: 'delete',
      path: PATH,
      summary: 'Remove one allowed origin domain (?domain=), or all of them (?deleteAll=true)',
      tag: 'organizations',
      auth: 'key',
      query: RemoveQuery,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const { domain, deleteAll } = req.query;
        if (domain !== undefined && deleteAll !== undefined) throw badRequest('domain and deleteAll: give one of them, not both');
        if (domain === undefined && deleteAll !== true) throw badRequest('domain: name the domain to remove, or set deleteAll=true to remove every domain');
        await execute(deps, req, domain === undefined ? { kind: 'RemoveAllowedDomains' } : { kind: 'RemoveAllowedDomains', domain });
        return { status: 204 };
      },
    }),
  ];
}
