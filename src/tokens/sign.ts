// The hot path of token issuance: compact JWS signing with node:crypto directly, a base64url header
// precomputed per key. jose stays for key sets and verification, where its generality costs nothing.
// The signature itself is made by a Signer: here on the calling thread, or by signing threads
// (signing-threads.ts) while the caller goes on.
import { randomUUID, sign } from 'node:crypto';
import type { TokenAlg } from '../config.js';
import type { Clock } from '../lib/clock.js';
import type { SigningKey } from './keys.js';

export interface IssuedToken {
  /** the compact JWS */
  token: string;
  jti: string;
  /** seconds since the epoch */
  iat: number;
  exp: number;
  /** the signing key */
  kid: string;
}

/** A token whose claims are settled and whose signature is on its way. */
export interface PendingToken extends Omit<IssuedToken, 'token'> {
  /** the compact JWS, once signed */
  token: Promise<string>;
}

export interface Signer {
  /** The JWS signature of `input` (ASCII) with `key`, base64url. */
  sign(key: SigningKey, input: string): Promise<string>;
  close(): Promise<void>;
}

export interface TokenIssuer {
  /**
   * Signs `claims` with the current key after setting iss, iat, exp and jti on them (the object is
   * changed in place; see identityClaims for the order the claims appear in). `ttl`: this token's
   * lifetime in seconds, the issuer's default when absent.
   */
  issue(claims: Record<string, unknown>, ttl?: number): PendingToken;
  /** the iss claim of the tokens */
  issuer(): string;
  /** token lifetime, seconds */
  readonly ttl: number;
}

export interface TokenIssuerOptions {
  keys: { current(): SigningKey };
  /** a getter when the issuer is known only after listening (port 0) */
  issuer: string | (() => string);
  ttl: number;
  clock: Pick<Clock, 'nowMs'>;
  /** default: signing on the calling thread */
  signer?: Signer;
  jti?: () => string;
  /** the JWS typ header: 'JWT' (identity tokens, the default) or e.g. 'at+jwt' (RFC 9068 access tokens) */
  typ?: string;
}

/** The signing input's header for a key: computed once per key, not per token. */
export function encodedHeader(key: Pick<SigningKey, 'alg' | 'kid'>, typ = 'JWT'): string {
  return Buffer.from(JSON.stringify({ alg: key.alg, typ, kid: key.kid })).toString('base64url');
}

/** node:crypto's sign() arguments per algorithm: one table for this thread and the signing threads. */
export const SIGN_PARAMS: Readonly<Record<TokenAlg, { digest: string | null; dsaEncoding?: 'ieee-p1363' }>> = {
  // JWS wants r||s, not the DER that node:crypto produces by default.
  ES256: { digest: 'sha256', dsaEncoding: 'ieee-p1363' },
  RS256: { digest: 'sha256' },
  // Ed25519 hashes internally: node:crypto requires a null digest.
  EdDSA: { digest: null },
};

/** The JWS signature of `input` (ASCII) as base64url, for the key's algorithm, made on this thread. */
function signature(key: Pick<SigningKey, 'alg' | 'privateKey'>, input: string): string {
  const { digest, dsaEncoding } = SIGN_PARAMS[key.alg];
  return sign(digest, Buffer.from(input, 'latin1'), dsaEncoding ? { key: key.privateKey, dsaEncoding } : key.privateKey).toString('base64url');
}

/** Signs on the calling thread: no thread hop, and the caller waits for every signature. */
export const inlineSigner: Signer = {
  sign: (key, input) => Promise.resolve(signature(key, input)),
  close: async () => {},
};

export function createTokenIssuer(options: TokenIssuerOptions): TokenIssuer {
  const { keys, ttl, clock, signer = inlineSigner, typ = 'JWT' } = options;
  const newJti = options.jti ?? randomUUID;
  const issuer = typeof options.issuer === 'string' ? () => options.issuer as string : options.issuer;
  let lastKey: SigningKey | undefined;
  let header = '';

  return {
    ttl,
    issuer,
    issue(claims, lifetime = ttl) {
      const key = keys.current();
      if (key !== lastKey) {
        lastKey = key;
        header = encodedHeader(key, typ);
      }
      const iat = Math.floor(clock.nowMs() / 1000);
      const exp = iat + lifetime;
      const jti = newJti();
      claims['iss'] = issuer();
      claims['iat'] = iat;
      claims['exp'] = exp;
      claims['jti'] = jti;
      const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      return { token: signer.sign(key, input).then((sig) => `${input}.${sig}`), jti, iat, exp, kid: key.kid };
    },
  };
}
