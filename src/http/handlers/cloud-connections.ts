// Cloud connections (AWS accounts, GCP projects, Active Directory domains): create (tested before stored), list, get, change, delete; and a
// snapshot on request. Credentials are write-only: no route returns them.
import { Type, type Static } from '@sinclair/typebox';
import { CLOUD_TYPES, cloudConnectionView, requireCloudConnection } from '../../domain/cloud.js';
import type { CloudConnections, CreateConnectionBody } from '../../cloud/connections.js';
import type { Inventory } from '../../cloud/inventory.js';
import type { Change } from '../../cloud/change.js';
import { pageOfMap, PaginationMeta, PagingQuery, type PagingParams } from '../paging.js';
import { route, type Request, type Route } from '../route.js';
import type { HandlerDeps } from './deps.js';

export const CLOUD_PATH = '/cloud/connections';

/** A change made at a provider, answered once its event has the consistency the request asked for. */
export async function answerChange(deps: HandlerDeps, req: Request<unknown, unknown>, change: Change, status: number) {
  await deps.consistency.wait(req.org.id, change.outcome.offset, req.consistency);
  return status === 204 ? { status } : { status, result: change.body };
}

const Settings = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 4096 }), {
  description: 'aws {account_id, endpoint?, aws_region?}; gcp {project_id, endpoint?}; active_directory {url, base_dn, domain, tls_ca?}',
});
const Credentials = Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), {
  description: 'write-only, sealed at rest: aws {access_key_id, secret_access_key}; gcp {service_account_key}; active_directory {bind_dn, password}',
});
const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    type: Type.Union(CLOUD_TYPES.map((t) => Type.Literal(t))),
    region: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "one of the deployment's regions; default the local one" })),
    config: Settings,
    credentials: Credentials,
  },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })), config: Type.Optional(Settings), credentials: Type.Optional(Credentials) },
  { additionalProperties: false, description: 'config and credentials are replaced whole; either tests the connection again' },
);
export const Connection = Type.Object({
  connection_id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  region: Type.String(),
  config: Type.Record(Type.String(), Type.String()),
  created: Type.String(),
});
const Snapshot = Type.Object({
  snapshot_timestamp: Type.String(),
  user_identities: Type.Integer(),
  non_human_identities: Type.Integer(),
  credentials: Type.Integer(),
});
const ListQuery = Type.Object(PagingQuery, { additionalProperties: false });

const WRITE_ERRORS = [400, 401, 403, 404, 408, 409, 502];

export function cloudConnectionRoutes(deps: HandlerDeps, cloud: { connections: CloudConnections; inventory: Inventory }): Route[] {
  const id = (req: { params: Record<string, string> }) => req.params['connection_id'] as string;
  return [
    route<Static<typeof CreateBody>>({
      method: 'post',
      path: CLOUD_PATH,
      summary: 'Connect a cloud account or directory; the connection is tested with a harmless call before it is stored',
      tag: 'cloud',
      auth: 'key',
      body: CreateBody,
      success: { status: 201, result: Connection },
      errors: WRITE_ERRORS,
      handler: async (req) => {
        const outcome = await cloud.connections.create(req.org, req.body as CreateConnectionBody);
        await deps.consistency.wait(req.org.id, outcome.offset, req.consistency);
        return { status: 201, result: outcome.reply };
      },
    }),
    route<unknown, PagingParams>({
      method: 'get',
      path: CLOUD_PATH,
      summary: "List the organization's cloud connections, without credentials",
      tag: 'cloud',
      auth: 'key',
      query: ListQuery,
      success: { status: 200, result: Type.Array(Connection), meta: PaginationMeta },
      errors: [400, 401, 403, 404],
      handler: (req) => {
        return pageOfMap(deps.pager, req.org.id, req.query, req.org.state.cloud_connections, 'cloud/connections', cloudConnectionView);
      },
    }),
    route({
      method: 'get',
      path: `${CLOUD_PATH}/{connection_id}`,
      summary: 'Get a cloud connection, without credentials',
      tag: 'cloud',
      auth: 'key',
      success: { status: 200, result: Connection },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: cloudConnectionView(requireCloudConnection(req.org.state, id(req))) }),
    }),
    route<Static<typeof PatchBody>>({
      method: 'patch',
      path: `${CLOUD_PATH}/{connection_id}`,
      summary: "Change a cloud connection's name, config or credentials",
      tag: 'cloud',
      auth: 'key',
      body: PatchBody,
      success: { status: 200, result: Connection },
      errors: WRITE_ERRORS,
      handler: async (req) => {
        const outcome = await cloud.connections.update(req.org, id(req), req.body);
        await deps.consistency.wait(req.org.id, outcome.offset, req.consistency);
        return { status: 200, result: outcome.reply };
      },
    }),
    route({
      method: 'delete',
      path: `${CLOUD_PATH}/{connection_id}`,
      summary: 'Delete a cloud connection (its snapshots still count for billing in their month)',
      tag: 'cloud',
      auth: 'key',
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const outcome = await cloud.connections.delete(req.org, id(req));
        await deps.consistency.wait(req.org.id, outcome.offset, req.consistency);
        return { status: 204 };
      },
    }),
    route({
      method: 'post',
      path: `${CLOUD_PATH}/{connection_id}/snapshots`,
      summary: "Take an inventory of a connection now, in the connection's region",
      tag: 'cloud',
      auth: 'key',
      bodyOptional: true,
      success: { status: 201, result: Snapshot },
      errors: WRITE_ERRORS,
      handler: async (req) => {
        const outcome = await cloud.inventory.take(req.org, id(req));
        await deps.consistency.wait(req.org.id, outcome.offset, req.consistency);
        const s = outcome.reply;
        return {
          status: 201,
          result: { snapshot_timestamp: new Date(s.at_ms).toISOString(), user_identities: s.user_identities, non_human_identities: s.non_human_identities, credentials: s.credentials },
        };
      },
    }),
  ];
}
