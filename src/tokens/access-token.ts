// Verification of our own RFC 9068 access tokens, for introspection, revocation and userinfo. Like identity
// tokens, the key is chosen by kid among the keys we publish and its algorithm pinned to that key, so
// `alg: none`, HMAC keyed with a public key, or a key the token brings along are refused; and the typ
// header must be at+jwt (RFC 9068 4), so an identity token is never taken for an access token.
import { jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../lib/clock.js';
import type { KeyRing } from './keys.js';
import { ownKey } from './own-key.js';

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

export function createAccessTokenVerifier(options: { keys: Pick<KeyRing, 'find'>; issuer: () => string; clock: Pick<Clock, 'nowMs'> }): AccessTokenVerifier {
  const { keys, issuer, clock } = options;
  return {
    async verify(token) {
      const own = ownKey(token, keys);
      const typ = typeof own?.header.typ === 'string' ? own.header.typ.toLowerCase() : '';
      if (!own || (typ !== 'at+jwt' && typ !== 'application/at+jwt')) return undefined;
      const { key } = own;
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
