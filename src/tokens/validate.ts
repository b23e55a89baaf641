// Validation of identity tokens against our own key set, as POST /token/validate answers it.
// The key is chosen by kid among the keys we publish, and its algorithm is pinned to that key: a token
// cannot choose its own algorithm (none, HMAC keyed with a public key) or its own key (jku, x5u, jwk, x5c).
import { decodeProtectedHeader, errors, jwtVerify } from 'jose';
import type { Clock } from '../lib/clock.js';
import type { KeyRing } from './keys.js';

export type InvalidityReason = 'invalid_token_content' | 'expired' | 'invalid_issuer' | 'person_not_active';

export interface Verdict {
  valid: boolean;
  invalidity_reason?: InvalidityReason;
  /** for a valid token: seconds until it expires */
  expires_in_seconds?: number;
  /** for a valid token: RFC 3339 */
  expires_at?: string;
}

export interface TokenValidator {
  validate(token: string): Promise<Verdict>;
}

export interface TokenValidatorOptions {
  keys: Pick<KeyRing, 'find'>;
  issuer: () => string;
  clock: Pick<Clock, 'nowMs'>;
  /** whether the organization exists and has this person, active */
  personActive(orgId: string, personId: string): boolean;
}

/** Header parameters that name a key by reference or by value; we only ever trust our own, by kid. */
const KEY_CARRYING_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'];

const invalid = (reason: InvalidityReason): Verdict => ({ valid: false, invalidity_reason: reason });

export function createTokenValidator(options: TokenValidatorOptions): TokenValidator {
  const { keys, issuer, clock } = options;
  return {
    async validate(token) {
      let header;
      try {
        header = decodeProtectedHeader(token);
      } catch {
        return invalid('invalid_token_content');
      }
      if (KEY_CARRYING_HEADERS.some((h) => h in header)) return invalid('invalid_token_content');
      const key = typeof header.kid === 'string' ? keys.find(header.kid) : undefined;
      if (!key || header.alg !== key.alg) return invalid('invalid_token_content');
      const now = clock.nowMs();
      let payload;
      try {
        ({ payload } = await jwtVerify(token, key.publicKey, {
          algorithms: [key.alg],
          issuer: issuer(),
          requiredClaims: ['exp', 'iat', 'sub'],
          currentDate: new Date(now),
        }));
      } catch (error) {
        if (error instanceof errors.JWTExpired) return invalid('expired');
        if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'iss') return invalid('invalid_issuer');
        return invalid('invalid_token_content');
      }
      const org = typeof payload['oid'] === 'string' ? payload['oid'] : typeof payload.aud === 'string' ? payload.aud : undefined;
      if (org === undefined || payload.sub === undefined) return invalid('invalid_token_content');
      if (!options.personActive(org, payload.sub)) return invalid('person_not_active');
      const exp = payload.exp as number;
      return { valid: true, expires_in_seconds: Math.max(0, exp - Math.floor(now / 1000)), expires_at: new Date(exp * 1000).toISOString() };
    },
  };
}
