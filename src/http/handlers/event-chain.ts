// GET /events/checkpoint: a signed checkpoint of the caller's event chain (its head offset and chain link).
import { Type } from '@sinclair/typebox';
import { route, type Route } from '../route.js';

const CheckpointRet = Type.Object({
  checkpoint: Type.String({ description: 'compact JWS (typ event-checkpoint+jwt) by the current identity-token key over {organization_id, offset, chain, issued_at}' }),
});

export interface CheckpointIssuer {
  issue(org: string): Promise<string>;
}

export function eventChainRoutes(checkpoints: CheckpointIssuer): Route[] {
  return [
    route({
      method: 'get',
      path: '/events/checkpoint',
      summary: 'A checkpoint of the organization event chain, signed with the identity-token key: verify it against /.well-known/jwks.json',
      tag: 'events',
      auth: 'key',
      success: { status: 200, result: CheckpointRet },
      errors: [400, 401, 403, 404],
      handler: async (req) => ({ status: 200, result: { checkpoint: await checkpoints.issue(req.org.id) } }),
    }),
  ];
}
