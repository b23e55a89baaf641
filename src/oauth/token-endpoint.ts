// POST /oauth2/tokens as a use case: the grant the form names, if the client is registered for it.
import { OAUTH_GRANT_TYPES } from '../domain/oauth-clients.js';
import { oauthError } from './errors.js';
import { GRANTS } from './grants/index.js';
import type { GrantDeps, GrantRequest, TokenResponse } from './grants/grant.js';

export interface TokenEndpoint {
  exchange(request: GrantRequest): Promise<TokenResponse>;
  /** the grant types this deployment answers, for the discovery document */
  readonly grantTypes: readonly string[];
}

export function createTokenEndpoint(deps: GrantDeps, grants: Readonly<Record<string, (typeof GRANTS)[string]>> = GRANTS): TokenEndpoint {
  return {
    grantTypes: OAUTH_GRANT_TYPES.filter((g) => Object.hasOwn(grants, g)),
    exchange(request) {
      const type = request.params.grant_type;
      const grant = Object.hasOwn(grants, type) ? grants[type] : undefined;
      if (grant === undefined) throw oauthError('unsupported_grant_type', `grant_type: ${JSON.stringify(type.slice(0, 64))} is not supported`);
      if (!request.caller.client.grant_types.includes(type)) throw oauthError('unauthorized_client', `the client is not registered for the ${type} grant`);
      return grant(request, deps);
    },
  };
}
