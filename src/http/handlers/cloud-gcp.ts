// GCP service accounts and project policy bindings changed on the organization's behalf through one of its
// connections (API.md's table): each answers with the provider's answer, as its event carries it.
import { Type, type Static } from '@sinclair/typebox';
import type { Change } from '../../cloud/change.js';
import type { GcpUseCases } from '../../cloud/gcp-changes.js';
import { route, type Request, type Route } from '../route.js';
import type { HandlerDeps } from './deps.js';
import { answerChange, CLOUD_PATH } from './cloud-connections.js';

const BASE = `${CLOUD_PATH}/{connection_id}/gcp`;
const CreateBody = Type.Object(
  { account_id: Type.String({ maxLength: 30 }), display_name: Type.Optional(Type.String({ maxLength: 100 })), description: Type.Optional(Type.String({ maxLength: 256 })) },
  { additionalProperties: false },
);
const Condition = Type.Object(
  { expression: Type.String({ maxLength: 12800 }), title: Type.String({ maxLength: 100 }), description: Type.Optional(Type.String({ maxLength: 256 })), location: Type.Optional(Type.String({ maxLength: 256 })) },
  { additionalProperties: false },
);
const BindingsBody = Type.Object(
  { bindings: Type.Array(Type.Object({ role: Type.String({ maxLength: 256 }), condition: Type.Optional(Condition) }, { additionalProperties: false }), { maxItems: 100 }) },
  { additionalProperties: false, description: "the principal's whole set of bindings in the project policy" },
);
const Answer = Type.Record(Type.String(), Type.Unknown(), { description: "the event's fields: the provider's answer" });
const ERRORS = [400, 401, 403, 404, 408, 409, 502];

export function cloudGcpRoutes(deps: HandlerDeps, gcp: GcpUseCases): Route[] {
  const p = (req: Request<unknown, unknown>, name: string) => req.params[name] as string;
  const answer = (req: Request<unknown, unknown>, change: Change, status: number) => answerChange(deps, req, change, status);
  return [
    route<Static<typeof CreateBody>>({
      method: 'post',
      path: `${BASE}/service-accounts`,
      summary: 'Create a service account in the connected project; GCPServiceAccountCreated_v1',
      tag: 'cloud',
      auth: 'key',
      body: CreateBody,
      success: { status: 201, result: Answer },
      errors: ERRORS,
      handler: async (req) => answer(req, await gcp.createServiceAccount(req.org, p(req, 'connection_id'), req.body), 201),
    }),
    route<Static<typeof BindingsBody>>({
      method: 'put',
      path: `${BASE}/principals/{principal}/bindings`,
      summary: "Set a principal's whole set of bindings in the project policy (etag-checked, retried on a concurrent change); GCPIAMPolicyBindingUpdated_v1",
      tag: 'cloud',
      auth: 'key',
      body: BindingsBody,
      success: { status: 200, result: Answer },
      errors: ERRORS,
      handler: async (req) => answer(req, await gcp.setBindings(req.org, p(req, 'connection_id'), p(req, 'principal'), req.body.bindings), 200),
    }),
    route({
      method: 'delete',
      path: `${BASE}/service-accounts/{email}`,
      summary: 'Delete a service account; GCPServiceAccountDeleted_v1',
      tag: 'cloud',
      auth: 'key',
      success: { status: 204 },
      errors: ERRORS,
      handler: async (req) => answer(req, await gcp.deleteServiceAccount(req.org, p(req, 'connection_id'), p(req, 'email')), 204),
    }),
  ];
}
