// Access tokens as RFC 9068 JWTs (typ at+jwt): sub, aud, client_id and scope, then iss, iat, exp and jti from
// the issuer, signed with the service's current key by the same signer as identity tokens.
import type { OAuthClient } from '../domain/state.js';
import type { PendingToken, TokenIssuer } from '../tokens/sign.js';

export interface AccessTokenRequest {
  client: OAuthClient;
  /** the client's ID for client_credentials (RFC 9068 2.2), the person's ID for a user's token */
  sub: string;
  /** space-delimited, already granted */
  scope: string;
  /** the resource (RFC 8707) the token is meant for; default the issuer, whose introspection and userinfo accept it */
  aud?: string;
  /** more claims of the token (a user's token: auth_time, acr, ...); set before the registered ones */
  extra?: Record<string, unknown>;
}

export interface AccessTokenIssuer {
  issue(request: AccessTokenRequest): PendingToken;
}

/** `issuer`: a TokenIssuer made with typ 'at+jwt' over the identity tokens' keys and signer. */
export function createAccessTokenIssuer(issuer: TokenIssuer): AccessTokenIssuer {
  return {
    issue({ client, sub, scope, aud, extra }) {
      const claims: Record<string, unknown> = extra === undefined ? {} : { ...extra };
      claims['sub'] = sub;
      claims['aud'] = aud ?? issuer.issuer();
      claims['client_id'] = client.client_id;
      claims['scope'] = scope;
      return issuer.issue(claims, client.access_token_duration);
    },
  };
}
