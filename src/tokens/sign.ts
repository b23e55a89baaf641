// The hot path of token issuance: compact JWS signing with node:crypto directly, a base64url header
// precomputed per key. jose stays for key sets and verification, where its generality costs nothing.
// The signature itself is made by a Signer: here on the calling thread, or by signing threads
// (signing-threads.ts) while the caller goes on.
import { sign } from 'node:crypto';
import type { TokenAlg } from '../config.js';
import type { Clock } from '../lib/clock.js';
import { createRandomUuid } from '../lib/ids.js';
import type { KeyRing, SigningKey } from './keys.js';

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
  /** the same JWS, when it was signed on the calling thread: readable at once, without waiting a turn for `token` */
  signed?: string;
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
   * lifetime in seconds, the issuer's default when absent. A lifetime longer than the key has signed
   * with before keeps the key published longer (KeyRing.retain) before the token is handed out.
   */
  issue(claims: Record<string, unknown>, ttl?: number): PendingToken;
  /** the iss claim of the tokens */
  issuer(): string;
  /** the default token lifetime, seconds */
  readonly ttl: number;
}

export interface TokenIssuerOptions {
  keys: Pick<KeyRing, 'current' | 'retain'>;
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
function signature(key: Pick<SigningKey, 'alg' | 'privateKey'>, input: string | Uint8Array): string {
  const { digest, dsaEncoding } = SIGN_PARAMS[key.alg];
  const data = typeof input === 'string' ? Buffer.from(input, 'latin1') : input;
  return sign(digest, data, dsaEncoding ? { key: key.privateKey, dsaEncoding } : key.privateKey).toString('base64url');
}

/** Signs on the calling thread: no thread hop, and the caller waits for every signature. */
export const inlineSigner: Signer = {
  sign: (key, input) => Promise.resolve(signature(key, input)),
  close: async () => {},
};

export function createTokenIssuer(options: TokenIssuerOptions): TokenIssuer {
  const { keys, ttl, clock, signer = inlineSigner, typ = 'JWT' } = options;
  const newJti = options.jti ?? createRandomUuid();
  const issuer = typeof options.issuer === 'string' ? () => options.issuer as string : options.issuer;
  let lastKey: SigningKey | undefined;
  let header = '';
  // The claims' UTF-8 and the signing input's bytes are written here, token after token, instead of into a
  // new Buffer each: both are read before the next token is issued (issue is synchronous up to the signer).
  let scratch = Buffer.allocUnsafe(4096);
  const room = (bytes: number): Buffer => (bytes <= scratch.byteLength ? scratch : (scratch = Buffer.allocUnsafe(Math.max(bytes, 2 * scratch.byteLength))));

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
      const json = JSON.stringify(claims);
      const length = room(json.length * 3).write(json, 0, 'utf8');
      const payload = scratch.toString('base64url', 0, length);
      const input = `${header}.${payload}`;
      // Rare (the first such token per key and lifetime): the key's longer retention is written first.
      if (signer === inlineSigner && lifetime <= key.maxTtl) {
        // On this thread: signed over the scratch bytes, and the token settled at once, with no hop between.
        // The two parts are written one by one: writing `input` whole would first copy it into a flat string.
        const bytes = room(header.length + 1 + payload.length);
        const at = bytes.write(header, 0, 'latin1');
        bytes[at] = 0x2e; // '.'
        const sig = signature(key, bytes.subarray(0, at + 1 + bytes.write(payload, at + 1, 'latin1')));
        const signed = `${input}.${sig}`;
        return { token: Promise.resolve(signed), signed, jti, iat, exp, kid: key.kid };
      }
      const signed = signer.sign(key, input);
      const ready = lifetime > key.maxTtl ? Promise.all([keys.retain(key, lifetime), signed]).then(([, sig]) => sig) : signed;
      return { token: ready.then((sig) => `${input}.${sig}`), jti, iat, exp, kid: key.kid };
    },
  };
}
