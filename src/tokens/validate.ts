// Validation of identity tokens against our own key set, as POST /token/validate answers it.
// The key is chosen by kid among the keys we publish, and its algorithm is pinned to that key: a token
// cannot choose its own algorithm (none, HMAC keyed with a public key) or its own key (jku, x5u, jwk, x5c).
// The same keys sign OAuth access tokens (typ at+jwt) and ID tokens (aud: their client), which a third
// party holds: only a token that is an identity token by its kind (isIdentityToken) passes here.
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../lib/clock.js';
import type { KeyRing } from './keys.js';
import { KEY_CARRYING_HEADERS } from './own-key.js';

export type InvalidityReason = 'invalid_token_content' | 'expired' | 'invalid_issuer' | 'person_not_active';

export interface Verdict {
  valid: boolean;
  invalidity_reason?: InvalidityReason;
  /** for a valid token: seconds until it expires */
  expires_in_seconds?: number;
  /** for a valid token: RFC 3339 */
  expires_at?: string;
  /** the token was revoked (POST /token/revoke); its reason stays invalid_token_content, the original's enum having no other */
  revoked?: true;
}

/** The facts of a token whose signature and issuer verified, expired or not: enough to revoke it. */
export interface VerifiedToken {
  org: string;
  jti: string;
  /** seconds */
  exp: number;
}

/** A valid token's organization, subject and claims: who an end-user route's caller is. */
export interface Identified {
  org: string;
  person_id: string;
  claims: Readonly<JWTPayload>;
}

export interface TokenValidator {
  validate(token: string): Promise<Verdict>;
  /** validate, keeping the claims of a valid token; an invalid one answers its verdict */
  identify(token: string): Promise<Identified | Verdict>;
  /** the token's organization, jti and exp when it is one of ours (signature and issuer), expired or not; else undefined */
  verify(token: string): Promise<VerifiedToken | undefined>;
}

export interface TokenValidatorOptions {
  keys: Pick<KeyRing, 'find'>;
  issuer: () => string;
  clock: Pick<Clock, 'nowMs'>;
  /** whether the organization exists and has this person, active */
  personActive(orgId: string, personId: string): boolean;
  /** whether the organization revoked the token with this jti */
  revoked(orgId: string, jti: string): boolean;
  /**
   * the person's type now: an anonymous person's token stops validating once that person registered (the
   * upgrade retires it); undefined when the person does not exist
   */
  personType?(orgId: string, personId: string): string | undefined;
}

/**
 * An identity token's kind: typ JWT (an access token's is at+jwt) and the organization as its audience (an
 * ID token's is its client; a webhook delivery token carries no oid). Two comparisons, no work at minting.
 */
export function isIdentityToken(typ: unknown, payload: Pick<JWTPayload, 'aud'> & { oid?: unknown }): boolean {
  return typeof typ === 'string' && typ.toLowerCase() === 'jwt' && typeof payload.oid === 'string' && payload.aud === payload.oid;
}

const invalid = (reason: InvalidityReason): Verdict => ({ valid: false, invalidity_reason: reason });

export function createTokenValidator(options: TokenValidatorOptions): TokenValidator {
  const { keys, issuer, clock } = options;
  /** the payload of a token we signed for our issuer, or the reason it is not one; expiry is checked at `at` */
  async function check(token: string, at: Date): Promise<{ payload: JWTPayload } | { reason: InvalidityReason }> {
    let header;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      return { reason: 'invalid_token_content' };
    }
    if (KEY_CARRYING_HEADERS.some((h) => h in header)) return { reason: 'invalid_token_content' };
    const typ = header.typ;
    const key = typeof header.kid === 'string' ? keys.find(header.kid) : undefined;
    if (!key || header.alg !== key.alg) return { reason: 'invalid_token_content' };
    try {
      const { payload } = await jwtVerify(token, key.publicKey, {
        algorithms: [key.alg],
        issuer: issuer(),
        requiredClaims: ['exp', 'iat', 'sub'],
        currentDate: at,
      });
      if (!isIdentityToken(typ, payload)) return { reason: 'invalid_token_content' };
      return { payload };
    } catch (error) {
      if (error instanceof errors.JWTExpired) return { reason: 'expired' };
      if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'iss') return { reason: 'invalid_issuer' };
      return { reason: 'invalid_token_content' };
    }
  }
  // check() let only identity tokens through, whose oid is their audience
  const orgOf = (payload: JWTPayload) => payload['oid'] as string;

  async function judge(token: string): Promise<{ verdict: Verdict; identified?: Identified }> {
    const now = clock.nowMs();
    const checked = await check(token, new Date(now));
    if ('reason' in checked) return { verdict: invalid(checked.reason) };
    const { payload } = checked;
    const org = orgOf(payload);
    if (payload.sub === undefined) return { verdict: invalid('invalid_token_content') };
    if (typeof payload.jti === 'string' && options.revoked(org, payload.jti)) return { verdict: { ...invalid('invalid_token_content'), revoked: true } };
    if (!options.personActive(org, payload.sub)) return { verdict: invalid('person_not_active') };
    if (payload['person_type'] === 'anonymous' && options.personType !== undefined && options.personType(org, payload.sub) !== 'anonymous') {
      return { verdict: invalid('invalid_token_content') };
    }
    const exp = payload.exp as number;
    return {
      verdict: { valid: true, expires_in_seconds: Math.max(0, exp - Math.floor(now / 1000)), expires_at: new Date(exp * 1000).toISOString() },
      identified: { org, person_id: payload.sub, claims: payload },
    };
  }

  return {
    async validate(token) {
      return (await judge(token)).verdict;
    },
    async identify(token) {
      const judged = await judge(token);
      return judged.identified ?? judged.verdict;
    },
    async verify(token) {
      // the key ring still publishes the keys of unexpired tokens only; an expired token verifies at its own exp
      let exp: unknown;
      try {
        exp = decodeJwt(token).exp;
      } catch {
        return undefined;
      }
      if (typeof exp !== 'number' || !Number.isFinite(exp)) return undefined;
      const checked = await check(token, new Date(Math.min(clock.nowMs(), (exp - 1) * 1000)));
      if ('reason' in checked) return undefined;
      const org = orgOf(checked.payload);
      const jti = checked.payload.jti;
      if (typeof jti !== 'string' || jti === '') return undefined;
      return { org, jti, exp };
    },
  };
}
