// DPoP proofs (RFC 9449 4.3): a JWT the client signs with the key its tokens are bound to, carried in the DPoP
// header of each request, naming the method and URL, fresh, and (at a resource) the access token's hash.
// This file checks one proof and answers its key's thumbprint (jkt, RFC 7638); remembering jti values and
// server nonces are the caller's.
import { constants, createHash, createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { Clock } from '../lib/clock.js';
import { CLIENT_ASSERTION_ALGS } from './client-assertion.js';

/** The same asymmetric algorithms as client assertions */
export const DPOP_ALGS = CLIENT_ASSERTION_ALGS;
/** how old a proof may be (its iat), and how far ahead of this server's clock */
export const DPOP_MAX_AGE_S = 60;
export const DPOP_SKEW_S = 15;

export interface DpopRequest {
  method: string;
  /** the request's URL without query and fragment (RFC 9449 4.3 htu) */
  url: string;
  /** at a resource: the access token the proof goes with (ath) */
  accessToken?: string;
}

export interface VerifiedProof {
  jkt: string;
  jti: string;
  /** seconds */
  iat: number;
  nonce?: string;
}

export class DpopProofError extends Error {
  override name = 'DpopProofError';
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** htu compares without query and fragment, scheme and host as URL parsing normalises them (RFC 9449 4.3 item 9). */
export function htuOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return undefined;
  }
}

export const accessTokenHash = (token: string) => createHash('sha256').update(token).digest('base64url');

/** How many imported public keys a verifier keeps: a client reuses its key, so importing it once is enough. */
export const DPOP_KEY_CACHE_SIZE = 10_000;

/** RFC 7638 3.2: the members a thumbprint covers, in lexicographic order, per key type */
const THUMBPRINT_MEMBERS: Record<string, readonly string[]> = { EC: ['crv', 'kty', 'x', 'y'], RSA: ['e', 'kty', 'n'], OKP: ['crv', 'kty', 'x'] };

/** The key type and curve (or minimum RSA size) each algorithm takes, and how node:crypto verifies it (RFC 7518 3, RFC 8037 3.1). */
interface AlgSpec {
  kty: 'EC' | 'RSA' | 'OKP';
  crv?: readonly string[];
  hash: string | null;
  pss?: boolean;
}
const ALG_SPECS: Record<string, AlgSpec> = {
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
/** RSA keys below this many bits are refused, as jose refused them */
const MIN_RSA_BITS = 2048;

/** RFC 7638 thumbprint: SHA-256 of the required members as canonical JSON (all strings, so JSON.stringify is canonical). */
function thumbprintOf(jwk: Record<string, unknown>): string {
  const members = typeof jwk.kty === 'string' ? THUMBPRINT_MEMBERS[jwk.kty] : undefined;
  if (!members) throw new DpopProofError('DPoP: the jwk kty must be EC, RSA or OKP');
  const canonical: Record<string, string> = {};
  for (const m of members) {
    const v = jwk[m];
    if (typeof v !== 'string' || v === '') throw new DpopProofError(`DPoP: the jwk ${m} member is required`);
    canonical[m] = v;
  }
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url');
}

/** A JWS part as a JSON object; `refusal` names what is wrong when it is not one. */
function decodeJson(part: string, refusal: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new DpopProofError(refusal);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DpopProofError(refusal);
  return value as Record<string, unknown>;
}

/** A key fits an algorithm when its type and curve are the algorithm's (a P-256 key never verifies ES384). */
function fits(jwk: Record<string, unknown>, spec: AlgSpec, key: KeyObject): boolean {
  if (jwk.kty !== spec.kty || (spec.crv !== undefined && !spec.crv.includes(jwk.crv as string))) return false;
  if (spec.kty === 'RSA') return key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= MIN_RSA_BITS;
  return true;
}

function signatureVerifies(spec: AlgSpec, key: KeyObject, data: Buffer, signature: Buffer): boolean {
  try {
    if (spec.kty === 'EC') return verify(spec.hash, data, { key, dsaEncoding: 'ieee-p1363' }, signature);
    if (spec.pss) return verify(spec.hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }, signature);
    return verify(spec.hash, data, key, signature);
  } catch {
    return false;
  }
}

export function createDpopProofVerifier(clock: Pick<Clock, 'nowMs'>, keyCacheSize = DPOP_KEY_CACHE_SIZE) {
  // Importing a JWK costs more than verifying with it; the thumbprint names the key exactly (RFC 7638), so a
  // proof with the same thumbprint reuses the import. Least recently used first in the Map's order.
  const keys = new Map<string, KeyObject>();
  function importKey(jkt: string, jwk: Record<string, unknown>): KeyObject {
    const cached = keys.get(jkt);
    if (cached) {
      keys.delete(jkt);
      keys.set(jkt, cached);
      return cached;
    }
    let key: KeyObject;
    try {
      key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    } catch {
      throw new DpopProofError('DPoP: the jwk header is not a usable public key');
    }
    if (key.type !== 'public') throw new DpopProofError('DPoP: the jwk header must be a public key');
    keys.set(jkt, key);
    if (keys.size > keyCacheSize) keys.delete(keys.keys().next().value as string);
    return key;
  }

  return {
    /** Rejects with DpopProofError for anything but a fresh proof of this request. */
    async verify(proof: string, request: DpopRequest): Promise<VerifiedProof> {
      const parts = typeof proof === 'string' ? proof.split('.') : [];
      if (parts.length !== 3 || parts[2] === '') throw new DpopProofError('DPoP: not a compact JWS');
      const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
      const header = decodeJson(headerPart, 'DPoP: not a compact JWS');
      if (header.typ !== 'dpop+jwt') throw new DpopProofError('DPoP: typ must be dpop+jwt');
      if (typeof header.alg !== 'string' || !DPOP_ALGS.includes(header.alg)) throw new DpopProofError(`DPoP: alg must be one of ${DPOP_ALGS.join(', ')}`);
      // no extension is understood, so any critical one refuses the proof (RFC 7515 4.1.11)
      if (header.crit !== undefined) throw new DpopProofError('DPoP: no crit header parameter is supported');
      const jwk = header.jwk as Record<string, unknown> | undefined;
      if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw new DpopProofError('DPoP: the jwk header (the public key) is required');
      if (PRIVATE_MEMBERS.some((m) => m in jwk)) throw new DpopProofError('DPoP: the jwk header must be a public key');
      const spec = ALG_SPECS[header.alg]!;
      const jkt = thumbprintOf(jwk);
      const key = importKey(jkt, jwk);
      if (!fits(jwk, spec, key)) throw new DpopProofError(`DPoP: the jwk is not a key for ${header.alg}`);
      const signature = Buffer.from(signaturePart, 'base64url');
      if (!signatureVerifies(spec, key, Buffer.from(`${headerPart}.${payloadPart}`), signature)) throw new DpopProofError('DPoP: the signature does not verify with its jwk');

      const payload = decodeJson(payloadPart, 'DPoP: the payload must be a JSON object');
      for (const claim of ['jti', 'htm', 'htu', 'iat']) if (!(claim in payload)) throw new DpopProofError(`DPoP: the ${claim} claim is missing`);
      const nowS = Math.floor(clock.nowMs() / 1000);
      const { jti, htm, htu, iat, ath, nonce, exp, nbf } = payload;
      // exp and nbf are optional in a proof; present, they hold as in any JWT (RFC 7519 4.1.4, 4.1.5)
      if (exp !== undefined && (typeof exp !== 'number' || exp <= nowS - DPOP_SKEW_S)) throw new DpopProofError('DPoP: the exp claim is wrong');
      if (nbf !== undefined && (typeof nbf !== 'number' || nbf > nowS + DPOP_SKEW_S)) throw new DpopProofError('DPoP: the nbf claim is wrong');
      if (typeof jti !== 'string' || jti === '' || jti.length > 256) throw new DpopProofError('DPoP: jti must be a string of 1-256 characters');
      if (htm !== request.method) throw new DpopProofError(`DPoP: htm must be ${request.method}`);
      if (typeof htu !== 'string' || htuOf(htu) !== htuOf(request.url)) throw new DpopProofError(`DPoP: htu must be ${htuOf(request.url)}`);
      if (typeof iat !== 'number' || iat > nowS + DPOP_SKEW_S || iat < nowS - DPOP_MAX_AGE_S - DPOP_SKEW_S) throw new DpopProofError(`DPoP: iat must be within ${DPOP_MAX_AGE_S} seconds of now`);
      if (request.accessToken !== undefined && ath !== accessTokenHash(request.accessToken)) throw new DpopProofError('DPoP: ath must be the base64url SHA-256 of the access token');
      return { jkt, jti, iat, ...(typeof nonce === 'string' && { nonce }) };
    },
  };
}

export type DpopProofVerifier = ReturnType<typeof createDpopProofVerifier>;
