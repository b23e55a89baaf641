// Introspection (RFC 7662) and revocation (RFC 7009) of access tokens. An access token is active while its
// signature, issuer and expiry hold, its client still exists, and its jti is not on its organization's
// revocation list. A client sees only tokens of its own organization: any other is simply not active.
import type { Command } from '../domain/commands.js';
import type { OrgActor } from '../org/actor.js';
import type { AccessTokenClaims, AccessTokenVerifier } from '../tokens/access-token.js';
import type { AuthenticatedClient } from './client-auth.js';
import type { ClientIndex } from './client-index.js';

export interface ActiveToken {
  claims: AccessTokenClaims;
  org: OrgActor;
}

export type IntrospectionResponse =
  | { active: false }
  | { active: true; scope: string; client_id: string; sub: string; aud: unknown; iss: string; exp: number; iat: number; jti: string; token_type: 'Bearer' };

export interface AccessTokens {
  /** The token's claims and organization while it is active (userinfo uses this too). */
  active(token: string): Promise<ActiveToken | undefined>;
  introspect(caller: AuthenticatedClient, token: string): Promise<IntrospectionResponse>;
  /**
   * The command that revokes the token, or undefined when there is nothing to revoke: RFC 7009 2.2 answers
   * 200 for an invalid, expired or already revoked token. A token of another client is left alone (2.1: the
   * token must have been issued to the client that revokes it), and its owner is not revealed.
   */
  revocation(caller: AuthenticatedClient, token: string): Promise<Command | undefined>;
}

const INACTIVE = Object.freeze({ active: false as const });

export function createAccessTokens(verifier: AccessTokenVerifier, clients: ClientIndex): AccessTokens {
  const active = async (token: string): Promise<ActiveToken | undefined> => {
    const claims = await verifier.verify(token);
    if (!claims) return undefined;
    // A deleted client's tokens die with it.
    const found = clients.find(claims.client_id);
    if (!found || found.org.state.oauth_revoked.has(claims.jti)) return undefined;
    return { claims, org: found.org };
  };
  return {
    active,
    async introspect(caller, token) {
      const t = await active(token);
      if (!t || t.org.id !== caller.org.id) return INACTIVE;
      const c = t.claims;
      return { active: true, scope: c.scope, client_id: c.client_id, sub: c.sub, aud: c.aud, iss: c.iss as string, exp: c.exp, iat: c.iat, jti: c.jti, token_type: 'Bearer' };
    },
    async revocation(caller, token) {
      const t = await active(token);
      if (!t || t.org.id !== caller.org.id || t.claims.client_id !== caller.client.client_id) return undefined;
      return { kind: 'RevokeAccessToken', jti: t.claims.jti, exp: t.claims.exp };
    },
  };
}
