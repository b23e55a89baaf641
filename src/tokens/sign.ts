// The hot path of token issuance: compact JWS signing with node:crypto directly, a base64url header
// precomputed per key. jose stays for key sets and verification, where its generality costs nothing.
import { randomUUID, sign } from 'node:crypto';
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

export interface TokenIssuer {
  /**
   * Signs `claims` with the current key after setting iss, iat, exp and jti on them (the object is
   * changed in place; see identityClaims for the order the claims appear in).
   */
  issue(claims: Record<string, unknown>): IssuedToken;
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
  jti?: () => string;
}

/** The signing input's header for a key: computed once per key, not per token. */
export function encodedHeader(key: Pick<SigningKey, 'alg' | 'kid'>): string {
  return Buffer.from(JSON.stringify({ alg: key.alg, typ: 'JWT', kid: key.kid })).toString('base64url');
}

/** The JWS signature of `input` (ASCII) as base64url, for the key's algorithm. */
export function signature(key: Pick<SigningKey, 'alg' | 'privateKey'>, input: string): string {
  const data = Buffer.from(input, 'latin1');
  switch (key.alg) {
    // JWS wants r||s, not the DER that node:crypto produces by default.
    case 'ES256':
      return sign('sha256', data, { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    case 'RS256':
      return sign('sha256', data, key.privateKey).toString('base64url');
    // Ed25519 hashes internally: node:crypto requires a null digest.
    case 'EdDSA':
      return sign(null, data, key.privateKey).toString('base64url');
  }
}

export function createTokenIssuer(options: TokenIssuerOptions): TokenIssuer {
  const { keys, ttl, clock } = options;
  const newJti = options.jti ?? randomUUID;
  const issuer = typeof options.issuer === 'string' ? () => options.issuer as string : options.issuer;
  let lastKey: SigningKey | undefined;
  let header = '';

  return {
    ttl,
    issuer,
    issue(claims) {
      const key = keys.current();
      if (key !== lastKey) {
        lastKey = key;
        header = encodedHeader(key);
      }
      const iat = Math.floor(clock.nowMs() / 1000);
      const exp = iat + ttl;
      const jti = newJti();
      claims['iss'] = issuer();
      claims['iat'] = iat;
      claims['exp'] = exp;
      claims['jti'] = jti;
      const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      return { token: `${input}.${signature(key, input)}`, jti, iat, exp, kid: key.kid };
    },
  };
}
