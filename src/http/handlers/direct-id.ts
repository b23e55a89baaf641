// Direct-id: the organization issues a person a one-time sign-in value (API key); the end user redeems it
// once for an identity token (Service-OrgID only).
import { Type, type Static } from '@sinclair/typebox';
import type { DirectIdSignIn } from '../../auth/direct-id.js';
import { MAX_DIRECT_ID_SECS } from '../../domain/direct-id.js';
import { route, type Route } from '../route.js';
import { SignInOutcome } from '../schemas.js';
import { execute, type HandlerDeps } from './deps.js';

const IssueBody = Type.Object(
  { duration_secs: Type.Integer({ minimum: 1, maximum: MAX_DIRECT_ID_SECS, description: 'how long the value can be redeemed, in seconds' }) },
  { additionalProperties: false },
);
const RedeemBody = Type.Object({ direct_id: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export function directIdRoutes(deps: HandlerDeps, auth: { directId: DirectIdSignIn }): Route[] {
  return [
    route<Static<typeof IssueBody>>({
      method: 'post',
      path: '/persons/{person_id}/direct-id',
      summary: 'A one-time sign-in value for the person, redeemed once at POST /authenticate/direct-id before it expires; shown once',
      tag: 'authentication',
      auth: 'key',
      body: IssueBody,
      success: { status: 201, result: Type.String({ description: 'the direct-id value' }) },
      errors: [400, 401, 403, 404, 408, 429],
      handler: async (req) => ({
        status: 201,
        result: await execute<string>(deps, req, { kind: 'IssueDirectId', person_id: req.params['person_id'] as string, duration_secs: req.body.duration_secs }),
      }),
    }),
    route<Static<typeof RedeemBody>>({
      method: 'post',
      path: '/authenticate/direct-id',
      summary: "Sign in with a direct-id value, once; runs the token_minted hooks, then answers the identity token (authenticated_methods [\"direct_id\"])",
      tag: 'authentication',
      auth: 'org',
      body: RedeemBody,
      success: { status: 200, result: SignInOutcome },
      errors: [400, 401, 403, 404, 408, 502],
      handler: async (req) => ({
        status: 200,
        result: await auth.directId.authenticate({ org: req.org, direct_id: req.body.direct_id, ip: req.ip, origin: req.origin, userAgent: req.userAgent, consistency: req.consistency }),
      }),
    }),
  ];
}
