// The UserInfo endpoint (OpenID Connect Core 5.3): a person's access token with the openid scope → claims
// about the person, read from the organization's state now; refusals per RFC 6750 3 (WWW-Authenticate).
import { DPOP_ALGS } from '../tokens/dpop-proof.js';
import { DpopRefusal, type Dpop } from './dpop.js';
import { scopedClaims } from './id-token.js';
import { boundKey, type AccessTokens } from './introspect.js';

export interface UserInfoDeps {
  /** the access tokens' activity: signature, expiry, client, revocation, grant (introspect.ts) */
  tokens: Pick<AccessTokens, 'active'>;
  /** the issuer: userinfo is its resource, so a token meant for another resource (RFC 8707) is not for it */
  issuer: () => string;
  /** DPoP-bound tokens' proofs (RFC 9449 7) */
  dpop: Pick<Dpop, 'check'>;
}

/** RFC 9449 7.1: a DPoP-bound token comes as `Authorization: DPoP <token>` with the request's proof. */
export interface DpopPresentation {
  proof: string | undefined;
  method: string;
}

export const USERINFO_PATH = '/oauth2/userinfo';

export type UserInfoAnswer = { ok: true; claims: Record<string, unknown> } | { ok: false; status: 400 | 401 | 403; challenge: string; error?: string; description?: string; /** DPoP-Nonce to retry with */ nonce?: string };

const REALM = 'realm="oauth2"';

function refuse(status: 400 | 401 | 403, error: string, description: string, extra = '', scheme = 'Bearer'): UserInfoAnswer {
  const algs = scheme === 'DPoP' ? ` algs="${DPOP_ALGS.join(' ')}",` : '';
  return { ok: false, status, error, description, challenge: `${scheme} ${REALM},${algs} error="${error}", error_description="${description}"${extra}` };
}

/** The token of `Authorization: DPoP <token>`, or undefined for another scheme. */
export function dpopTokenOf(authorization: string | undefined): string | undefined {
  return authorization !== undefined && /^dpop /i.test(authorization) ? authorization.slice(5).trim() : undefined;
}

/** The bearer token of an Authorization header (RFC 6750 2.1), or of the form (2.2); both at once is an error. */
export function bearerOf(authorization: string | undefined, formToken: string | undefined): string | undefined | 'both' {
  const header = authorization !== undefined && /^bearer /i.test(authorization) ? authorization.slice(7).trim() : undefined;
  if (header !== undefined && formToken !== undefined) return 'both';
  return header ?? formToken;
}

export function createUserInfo(deps: UserInfoDeps) {
  return {
    async answer(token: string | undefined | 'both', dpop?: DpopPresentation): Promise<UserInfoAnswer> {
      // RFC 6750 3.1: a request without credentials gets the challenge alone, no error code.
      if (token === undefined || token === '') return { ok: false, status: 401, challenge: `Bearer ${REALM}` };
      if (token === 'both') return refuse(400, 'invalid_request', 'the access token was given in both the header and the body');
      const active = await deps.tokens.active(token);
      if (!active) return refuse(401, 'invalid_token', 'the access token is invalid, expired or revoked');
      const { claims, org } = active;
      const jkt = boundKey(claims);
      if (dpop === undefined && jkt !== undefined) return refuse(401, 'invalid_token', 'the access token is DPoP-bound: present it as Authorization: DPoP with a DPoP proof', '', 'DPoP');
      if (dpop !== undefined) {
        if (jkt === undefined) return refuse(401, 'invalid_token', 'the access token is not DPoP-bound: present it as Authorization: Bearer', '', 'DPoP');
        if (dpop.proof === undefined) return refuse(401, 'invalid_dpop_proof', 'the DPoP header (a proof) is required', '', 'DPoP');
        try {
          const proven = await deps.dpop.check(dpop.proof, dpop.method, USERINFO_PATH, token);
          if (proven !== jkt) return refuse(401, 'invalid_dpop_proof', 'the proof is signed by another key than the token is bound to', '', 'DPoP');
        } catch (error) {
          if (!(error instanceof DpopRefusal)) throw error;
          const answer = refuse(401, error.error, error.message, '', 'DPoP');
          return error.nonce === undefined ? answer : { ...(answer as UserInfoAnswer & { ok: false }), nonce: error.nonce };
        }
      }
      const aud = claims.aud;
      if (!(aud === deps.issuer() || (Array.isArray(aud) && aud.includes(deps.issuer())))) return refuse(401, 'invalid_token', 'the access token is meant for another resource');
      // A client's own token (client_credentials) names no grant of a person.
      if (typeof claims['sid'] !== 'string') return refuse(401, 'invalid_token', 'the access token is not a token of a person');
      const scope = claims.scope.split(' ');
      if (!scope.includes('openid')) return refuse(403, 'insufficient_scope', 'the access token lacks the openid scope', ', scope="openid"');
      const person = org.state.persons.get(claims.sub);
      if (!person || !person.active) return refuse(401, 'invalid_token', 'the person of this token is no longer active');
      const out: Record<string, unknown> = { sub: person.person_id, ...scopedClaims(person, scope) };
      if (person.groups.length > 0) out['groups'] = [...person.groups];
      if (person.roles !== undefined && person.roles.length > 0) out['roles'] = [...person.roles];
      return { ok: true, claims: out };
    },
  };
}

export type UserInfo = ReturnType<typeof createUserInfo>;
