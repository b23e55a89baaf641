// Introspection (RFC 7662) and revocation (RFC 7009) of access tokens. An access token is active while its
// signature, issuer and expiry hold, its client still exists, and its jti is not on its organization's
// revocation list. A client sees only tokens of its own organization: any other is simply not active.
import { createHash } from 'node:crypto';
import type { Command } from '../domain/commands.js';
import { grantActive } from '../domain/oauth-grants.js';
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
  | { active: true; scope: string; client_id: string; sub: string; aud: unknown; iss: string; exp: number; iat: number; jti: string; token_type: 'Bearer' | 'DPoP'; cnf?: { jkt: string } };

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

/** RFC 9449 6.1: the thumbprint of the key a DPoP-bound token is bound to; undefined for a bearer token. */
export function boundKey(claims: Record<string, unknown>): string | undefined {
  const cnf = claims['cnf'];
  const jkt = typeof cnf === 'object' && cnf !== null ? (cnf as { jkt?: unknown }).jkt : undefined;
  return typeof jkt === 'string' ? jkt : undefined;
}

/**
 * RFC 7009 2.1: a refresh token of the caller revokes its whole grant (its access tokens too). Its form names
 * the grant (user-tokens.ts); the current token and the ones rotated away are all the grant's.
 */
function refreshRevocation(caller: AuthenticatedClient, token: string): Command | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0 || token.indexOf('.', dot + 1) >= 0) return undefined;
  const grant = caller.org.state.oauth_grants.get(token.slice(0, dot));
  if (!grant || grant.revoked || grant.client_id !== caller.client.client_id) return undefined;
  const hash = createHash('sha256').update(token).digest('base64url');
  return grant.refresh_hash === hash || grant.rotated.includes(hash) ? { kind: 'RevokeOAuthGrant', grant_id: grant.grant_id } : undefined;
}

export function createAccessTokens(verifier: AccessTokenVerifier, clients: ClientIndex): AccessTokens {
  const active = async (token: string): Promise<ActiveToken | undefined> => {
    const claims = await verifier.verify(token);
    if (!claims) return undefined;
    // A deleted client's tokens die with it.
    const found = clients.find(claims.client_id);
    if (!found || found.org.state.oauth_revoked.has(claims.jti)) return undefined;
    // A person's token names its grant (sid): a replayed code or a reused refresh token revoked them all.
    if (typeof claims['sid'] === 'string' && !grantActive(found.org.state, claims['sid'])) return undefined;
    return { claims, org: found.org };
  };
  return {
    active,
    async introspect(caller, token) {
      const t = await active(token);
      if (!t || t.org.id !== caller.org.id) return INACTIVE;
      const c = t.claims;
      const jkt = boundKey(c);
      const answer = { active: true as const, scope: c.scope, client_id: c.client_id, sub: c.sub, aud: c.aud, iss: c.iss as string, exp: c.exp, iat: c.iat, jti: c.jti };
      // RFC 9449 6.2: a resource server learns the key the token is bound to, and checks the proof itself
      return jkt === undefined ? { ...answer, token_type: 'Bearer' } : { ...answer, token_type: 'DPoP', cnf: { jkt } };
    },
    async revocation(caller, token) {
      const refresh = refreshRevocation(caller, token);
      if (refresh !== undefined) return refresh;
      const t = await active(token);
      if (!t || t.org.id !== caller.org.id || t.claims.client_id !== caller.client.client_id) return undefined;
      return { kind: 'RevokeAccessToken', jti: t.claims.jti, exp: t.claims.exp };
    },
  };
}
