// Active Directory SPN changes made on the organization's behalf through one of its connections (API.md's
// table): each answers with the account as the directory reports it, as its event carries it.
import { Type, type Static } from '@sinclair/typebox';
import type { AdChanges } from '../../cloud/ad-changes.js';
import type { Change } from '../../cloud/change.js';
import { route, type Request, type Route } from '../route.js';
import type { HandlerDeps } from './deps.js';
import { answerChange, CLOUD_PATH } from './cloud-connections.js';

const SPNS = `${CLOUD_PATH}/{connection_id}/ad/spns`;
const SPN = `${SPNS}/{service_class}/{service_name}`;
const CreateBody = Type.Object(
  {
    account_name: Type.String({ maxLength: 20, description: "the sAMAccountName of a user or computer account (a computer's ends in $)" }),
    service_class: Type.String({ maxLength: 64 }),
    service_name: Type.String({ maxLength: 260, description: 'host[:port]' }),
  },
  { additionalProperties: false },
);
const GroupsBody = Type.Object({ groups: Type.Array(Type.String({ maxLength: 256 }), { maxItems: 100, description: "sAMAccountNames: the account's whole set of groups (its primary group aside)" }) }, { additionalProperties: false });
const Answer = Type.Object({
  domain: Type.String(),
  service_class: Type.String(),
  service_name: Type.String(),
  account_name: Type.String(),
  account_type: Type.String({ description: 'user or computer' }),
  distinguished_name: Type.String(),
});
const ERRORS = [400, 401, 403, 404, 408, 409, 502];

export function cloudAdRoutes(deps: HandlerDeps, ad: AdChanges): Route[] {
  const p = (req: Request<unknown, unknown>, name: string) => req.params[name] as string;
  const answer = (req: Request<unknown, unknown>, change: Change, status: number) => answerChange(deps, req, change, status);
  return [
    route<Static<typeof CreateBody>>({
      method: 'post',
      path: SPNS,
      summary: 'Add the SPN service_class/service_name to an account of the directory; ActiveDirectorySPNCreated_v1',
      tag: 'cloud',
      auth: 'key',
      body: CreateBody,
      success: { status: 201, result: Answer },
      errors: ERRORS,
      handler: async (req) => answer(req, await ad.createSpn(req.org, p(req, 'connection_id'), req.body), 201),
    }),
    route<Static<typeof GroupsBody>>({
      method: 'put',
      path: `${SPN}/groups`,
      summary: 'Set the whole set of groups (roles) of the account holding the SPN; ActiveDirectorySPNRoleUpdated_v1',
      tag: 'cloud',
      auth: 'key',
      body: GroupsBody,
      success: { status: 200, result: Answer },
      errors: ERRORS,
      handler: async (req) => answer(req, await ad.setGroups(req.org, p(req, 'connection_id'), p(req, 'service_class'), p(req, 'service_name'), req.body.groups), 200),
    }),
    route({
      method: 'delete',
      path: SPN,
      summary: 'Remove the SPN from the account holding it; ActiveDirectorySPNDeleted_v1',
      tag: 'cloud',
      auth: 'key',
      success: { status: 204 },
      errors: ERRORS,
      handler: async (req) => answer(req, await ad.deleteSpn(req.org, p(req, 'connection_id'), p(req, 'service_class'), p(req, 'service_name')), 204),
    }),
  ];
}
