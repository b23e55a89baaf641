// A compact JWS checked with node:crypto against a KeyObject imported once: the one signature verify each
// client assertion and DPoP proof needs, without jose's WebCrypto path (a CryptoKey and a promise job per
// verify). Which key, and what the claims must say, are the callers'.
import { constants, verify, type KeyObject } from 'node:crypto';

/** The key type and curve (or minimum RSA size) each algorithm takes, and how node:crypto verifies it (RFC 7518 3, RFC 8037 3.1). */
export interface AlgSpec {
  kty: 'EC' | 'RSA' | 'OKP';
  crv?: readonly string[];
  hash: string | null;
  pss?: boolean;
}
export const ALG_SPECS: Readonly<Record<string, AlgSpec>> = {
  RS256: { kty: 'RSA', hash: 'sha256' },
  RS384: { kty: 'RSA', hash: 'sha384' },
  RS512: { kty: 'RSA', hash: 'sha512' },
  PS256: { kty: 'RSA', hash: 'sha256', pss: true },
  PS384: { kty: 'RSA', hash: 'sha384', pss: true },
  PS512: { kty: 'RSA', hash: 'sha512', pss: true },
  ES256: { kty: 'EC', crv: ['P-256'], hash: 'sha256' },
  ES384: { kty: 'EC', crv: ['P-384'], hash: 'sha384' },
  ES512: { kty: 'EC', crv: ['P-521'], hash: 'sha512' },
  EdDSA: { kty: 'OKP', crv: ['Ed25519', 'Ed448'], hash: null },
  Ed25519: { kty: 'OKP', crv: ['Ed25519'], hash: null },
};
/** RSA keys below this many bits are refused, as jose refuses them */
export const MIN_RSA_BITS = 2048;

/** node's names of the JWK curves */
const CURVES: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521', ed25519: 'Ed25519', ed448: 'Ed448' };

/** A key fits an algorithm when its type and curve are the algorithm's (a P-256 key never verifies ES384). */
export function keyFits(spec: AlgSpec, key: KeyObject): boolean {
  if (key.type !== 'public') return false;
  const type = key.asymmetricKeyType;
  if (spec.kty === 'RSA') return (type === 'rsa' || (spec.pss === true && type === 'rsa-pss')) && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= MIN_RSA_BITS;
  const curve = spec.kty === 'EC' ? (type === 'ec' ? CURVES[key.asymmetricKeyDetails?.namedCurve ?? ''] : undefined) : type === 'ed25519' || type === 'ed448' ? CURVES[type] : undefined;
  return curve !== undefined && (spec.crv === undefined || spec.crv.includes(curve));
}

/**
 * Whether `signature` over `signingInput` (header.payload, as sent) verifies with `key` for the algorithm. In
 * libuv's thread pool (node:crypto's verify with a callback): the verify is most of a proof's or an assertion's
 * cost, and on the main thread it would queue every other request behind it.
 */
export function signatureVerifies(spec: AlgSpec, key: KeyObject, signingInput: string, signature: string): Promise<boolean> {
  const data = Buffer.from(signingInput);
  const sig = Buffer.from(signature, 'base64url');
  const options = spec.kty === 'EC' ? { key, dsaEncoding: 'ieee-p1363' as const } : spec.pss ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST } : key;
  return new Promise((resolve) => {
    try {
      verify(spec.hash, data, options, sig, (error, valid) => resolve(error === null && valid));
    } catch {
      // a key and signature node:crypto refuses outright (e.g. a signature of the wrong length)
      resolve(false);
    }
  });
}

/** A JWS part as a JSON object, or undefined when it is not one. */
export function decodeJsonPart(part: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The three parts of a compact JWS with a signature, or undefined. */
export function compactParts(jws: unknown): [header: string, payload: string, signature: string] | undefined {
  const parts = typeof jws === 'string' ? jws.split('.') : [];
  return parts.length === 3 && parts[2] !== '' ? (parts as [string, string, string]) : undefined;
}
