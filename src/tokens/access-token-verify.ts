// Verification of our own RFC 9068 access tokens (typ at+jwt), for the endpoints that take one as a bearer
// token. As for identity tokens, the key is chosen by kid among ours and its algorithm is pinned to it, so
// alg none, HMAC keyed with a public key, or a key carried in the header are refused.
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../lib/clock.js';
import type { KeyRing } from './keys.js';

export interface AccessTokenVerifier {
  /** The token's claims, or undefined for anything but an unexpired access token of ours. */
  verify(token: string): Promise<JWTPayload | undefined>;
}

const KEY_CARRYING_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'];

export function createAccessTokenVerifier(options: { keys: Pick<KeyRing, 'find'>; issuer: () => string; clock: Pick<Clock, 'nowMs'> }): AccessTokenVerifier {
  return {
    async verify(token) {
      let header;
      try {
        header = decodeProtectedHeader(token);
      } catch {
        return undefined;
      }
      // RFC 9068 4: the typ tells an access token from an ID or identity token signed by the same key.
      if (header.typ !== 'at+jwt' || KEY_CARRYING_HEADERS.some((h) => h in header)) return undefined;
      const key = typeof header.kid === 'string' ? options.keys.find(header.kid) : undefined;
      if (!key || header.alg !== key.alg) return undefined;
      try {
        const { payload } = await jwtVerify(token, key.publicKey, {
          algorithms: [key.alg],
          issuer: options.issuer(),
          typ: 'at+jwt',
          requiredClaims: ['exp', 'iat', 'sub', 'client_id', 'jti'],
          currentDate: new Date(options.clock.nowMs()),
        });
        return payload;
      } catch {
        return undefined;
      }
    },
  };
}
