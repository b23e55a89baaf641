// The key of a token that claims to be ours: chosen by kid among the keys we publish, its algorithm pinned to
// that key, so `alg: none`, HMAC keyed with a public key, or a key the token brings along are refused.
import { decodeProtectedHeader, type ProtectedHeaderParameters } from 'jose';
import type { KeyRing } from './keys.js';

/** Headers by which a JWT names or carries its own key: never trusted for a token we must have signed. */
export const KEY_CARRYING_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'];

type OwnKey = NonNullable<ReturnType<KeyRing['find']>>;

/** The header and our key for the token, or undefined when it is malformed, carries a key, or names none of ours. */
export function ownKey(token: string, keys: Pick<KeyRing, 'find'>): { header: ProtectedHeaderParameters; key: OwnKey } | undefined {
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return undefined;
  }
  if (KEY_CARRYING_HEADERS.some((h) => h in header)) return undefined;
  const key = typeof header.kid === 'string' ? keys.find(header.kid) : undefined;
  if (!key || header.alg !== key.alg) return undefined;
  return { header, key };
}
