// Verification of our own RFC 9068 access tokens, for introspection, revocation and userinfo. Like identity
// tokens, the key is chosen by kid among the keys we publish and its algorithm pinned to that key, so
// `alg: none`, HMAC keyed with a public key, or a key the token brings along are refused; and the typ
// header must be at+jwt (RFC 9068 4), so an identity token is never taken for an access token.
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../lib/clock.js';
import type { KeyRing } from './keys.js';

export interface AccessTokenClaims extends JWTPayload {
  sub: string;
  client_id: string;
  scope: string;
  jti: string;
  iat: number;
  exp: number;
}

export interface AccessTokenVerifier {
  /** The token's claims when it is ours, well-formed and unexpired; undefined otherwise (never throws). */
  verify(token: string): Promise<AccessTokenClaims | undefined>;
}

const KEY_CARRYING_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'];

export function createAccessTokenVerifier(options: { keys: Pick<KeyRing, 'find'>; issuer: () => string; clock: Pick<Clock, 'nowMs'> }): AccessTokenVerifier {
  const { keys, issuer, clock } = options;
  return {
    async verify(token) {
      let header;
      try {
        header = decodeProtectedHeader(token);
      } catch {
        return undefined;
      }
      if (KEY_CARRYING_HEADERS.some((h) => h in header)) return undefined;
      const typ = typeof header.typ === 'string' ? header.typ.toLowerCase() : '';
      if (typ !== 'at+jwt' && typ !== 'application/at+jwt') return undefined;
      const key = typeof header.kid === 'string' ? keys.find(header.kid) : undefined;
      if (!key || header.alg !== key.alg) return undefined;
      try {
        const { payload } = await jwtVerify(token, key.publicKey, {
          algorithms: [key.alg],
          issuer: issuer(),
          requiredClaims: ['exp', 'iat', 'sub', 'jti', 'client_id'],
          currentDate: new Date(clock.nowMs()),
        });
        if (typeof payload['client_id'] !== 'string' || typeof payload['scope'] !== 'string') return undefined;
        return payload as AccessTokenClaims;
      } catch {
        return undefined;
      }
    },
  };
}
