// The authorization server's part of /.well-known/openid-configuration (OpenID Connect Discovery 1.0 3,
// RFC 8414 2): its endpoints and what each supports, derived from what is built, not a fixed list.
import { CLIENT_ASSERTION_ALGS } from '../tokens/client-assertion.js';
import { DPOP_ALGS } from '../tokens/dpop-proof.js';
import { CLIENT_AUTH_METHODS } from './client-auth.js';
import { DEVICE_CODE_GRANT } from '../domain/oauth-clients.js';
import { DEVICE_AUTHORIZATION_PATH } from './device.js';
import { ACR_VALUES } from './acr.js';

export interface OAuthServerFacts {
  /** the token endpoint's grant types (the grant table's) */
  grantTypes: readonly string[];
}

/** Scopes with a meaning here besides those organizations give their clients. */
export const STANDARD_SCOPES = ['openid', 'email', 'phone'];

/** Claims of ID tokens and userinfo beyond the identity token's (id-token.ts, userinfo.ts). */
export const OIDC_CLAIMS = ['azp', 'nonce', 'auth_time', 'amr', 'acr', 'at_hash', 'sid', 'email', 'email_verified', 'phone_number', 'phone_number_verified'];

export function oauthMetadata(iss: string, facts: OAuthServerFacts): Record<string, unknown> {
  return {
    authorization_endpoint: `${iss}/oauth2/authorize`,
    token_endpoint: `${iss}/oauth2/tokens`,
    userinfo_endpoint: `${iss}/oauth2/userinfo`,
    revocation_endpoint: `${iss}/oauth2/tokens/revoke`,
    introspection_endpoint: `${iss}/oauth2/tokens/introspect`,
    // RFC 9126 5: pushing is offered to every client and required of those registered so (their own flag)
    pushed_authorization_request_endpoint: `${iss}/oauth2/par`,
    require_pushed_authorization_requests: false,
    // RFC 7591 3: behind an initial access token the organization issues
    registration_endpoint: `${iss}/oauth2/register`,
    // RFC 8628 4
    ...(facts.grantTypes.includes(DEVICE_CODE_GRANT) && { device_authorization_endpoint: `${iss}${DEVICE_AUTHORIZATION_PATH}` }),
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    // RFC 9207: every authorization response carries iss (authorize.ts).
    authorization_response_iss_parameter_supported: true,
    prompt_values_supported: ['none', 'login'],
    acr_values_supported: [...ACR_VALUES],
    grant_types_supported: [...facts.grantTypes],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    // private_key_jwt's algorithms (RFC 8414 2), at every endpoint a client authenticates at
    token_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGS],
    // Introspection and revocation are for confidential clients (resource servers, the token's own client).
    introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS.filter((m) => m !== 'none'),
    introspection_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGS],
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    revocation_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGS],
    // RFC 9449 5.1: DPoP proofs at the token endpoint and userinfo
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    scopes_supported: STANDARD_SCOPES,
    // OpenID RP-Initiated Logout 1.0 (end-session.ts) and Back-Channel Logout 1.0 (backchannel-logout.ts):
    // every logout token carries sid, the sid of the client's ID tokens.
    end_session_endpoint: `${iss}/oauth2/logout`,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    frontchannel_logout_supported: false,
  };
}
