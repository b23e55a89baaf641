// The UserInfo endpoint (OpenID Connect Core 5.3): a person's access token with the openid scope → claims
// about the person, read from the organization's state now; refusals per RFC 6750 3 (WWW-Authenticate).
import type { OrgState } from '../domain/state.js';
import { grantActive } from '../domain/oauth-grants.js';
import type { AccessTokenVerifier } from '../tokens/access-token-verify.js';
import { scopedClaims } from './id-token.js';

export interface UserInfoDeps {
  verifier: AccessTokenVerifier;
  /** the organization's state, or undefined when it does not exist here */
  org(id: string): { state: OrgState } | undefined;
  nowMs(): number;
}

export type UserInfoAnswer = { ok: true; claims: Record<string, unknown> } | { ok: false; status: 400 | 401 | 403; challenge: string; error?: string; description?: string };

const REALM = 'realm="oauth2"';

function refuse(status: 400 | 401 | 403, error: string, description: string, extra = ''): UserInfoAnswer {
  return { ok: false, status, error, description, challenge: `Bearer ${REALM}, error="${error}", error_description="${description}"${extra}` };
}

/** The bearer token of an Authorization header (RFC 6750 2.1), or of the form (2.2); both at once is an error. */
export function bearerOf(authorization: string | undefined, formToken: string | undefined): string | undefined | 'both' {
  const header = authorization !== undefined && /^bearer /i.test(authorization) ? authorization.slice(7).trim() : undefined;
  if (header !== undefined && formToken !== undefined) return 'both';
  return header ?? formToken;
}

export function createUserInfo(deps: UserInfoDeps) {
  return {
    async answer(token: string | undefined | 'both'): Promise<UserInfoAnswer> {
      // RFC 6750 3.1: a request without credentials gets the challenge alone, no error code.
      if (token === undefined || token === '') return { ok: false, status: 401, challenge: `Bearer ${REALM}` };
      if (token === 'both') return refuse(400, 'invalid_request', 'the access token was given in both the header and the body');
      const claims = await deps.verifier.verify(token);
      if (!claims) return refuse(401, 'invalid_token', 'the access token is invalid or expired');
      const org = typeof claims['oid'] === 'string' ? deps.org(claims['oid']) : undefined;
      const sid = claims['sid'];
      // A client's own token (client_credentials) names no person; a revoked grant's or token's is inactive.
      if (!org || typeof sid !== 'string' || !grantActive(org.state, sid, deps.nowMs())) return refuse(401, 'invalid_token', 'the access token is not an active token of a person');
      if (typeof claims.jti === 'string' && org.state.oauth_revoked?.has(claims.jti)) return refuse(401, 'invalid_token', 'the access token was revoked');
      const scope = typeof claims['scope'] === 'string' ? claims['scope'].split(' ') : [];
      if (!scope.includes('openid')) return refuse(403, 'insufficient_scope', 'the access token lacks the openid scope', ', scope="openid"');
      const person = claims.sub === undefined ? undefined : org.state.persons.get(claims.sub);
      if (!person || !person.active) return refuse(401, 'invalid_token', 'the person of this token is no longer active');
      const out: Record<string, unknown> = { sub: person.person_id, ...scopedClaims(person, scope) };
      if (person.groups.length > 0) out['groups'] = [...person.groups];
      if (person.roles !== undefined && person.roles.length > 0) out['roles'] = [...person.roles];
      return { ok: true, claims: out };
    },
  };
}

export type UserInfo = ReturnType<typeof createUserInfo>;
