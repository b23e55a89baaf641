// The id_token_hint of RP-initiated logout (OpenID RP-Initiated Logout 1.0 §2): one of our own ID tokens,
// checked as one (signature by a key we publish with its algorithm pinned, issuer, typ JWT, azp), but accepted
// after its exp, since an RP logs out with the ID token it was given long ago (§4: the OP SHOULD accept it).
import { jwtVerify } from 'jose';
import type { KeyRing } from './keys.js';
import { ownKey } from './own-key.js';

export interface IdTokenHint {
  sub: string;
  /** the client it was issued to: azp, which our ID tokens always carry (aud alone may list others) */
  client_id: string;
  /** the grant its tokens belong to */
  sid: string;
}

export interface IdTokenHintVerifier {
  /** The hint's claims when it is an ID token we issued; undefined otherwise (never throws). */
  verify(token: string): Promise<IdTokenHint | undefined>;
}

export function createIdTokenHintVerifier(options: { keys: Pick<KeyRing, 'find'>; issuer: () => string }): IdTokenHintVerifier {
  return {
    async verify(token) {
      const own = ownKey(token, options.keys);
      if (!own || own.header.typ !== 'JWT') return undefined;
      const { key } = own;
      try {
        // exp is not checked: a date far past every token's life makes jose ignore it.
        const { payload } = await jwtVerify(token, key.publicKey, { algorithms: [key.alg], issuer: options.issuer(), requiredClaims: ['sub', 'sid', 'azp'], clockTolerance: Number.MAX_SAFE_INTEGER });
        const { sub, azp, sid } = payload;
        if (typeof sub !== 'string' || typeof azp !== 'string' || typeof sid !== 'string') return undefined;
        const aud = payload.aud;
        if (!(aud === azp || (Array.isArray(aud) && aud.includes(azp)))) return undefined;
        return { sub, client_id: azp, sid };
      } catch {
        return undefined;
      }
    },
  };
}
