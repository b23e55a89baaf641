// DPoP proofs (RFC 9449 4.3): a JWT the client signs with the key its tokens are bound to, carried in the DPoP
// header of each request, naming the method and URL, fresh, and (at a resource) the access token's hash.
// This file checks one proof and answers its key's thumbprint (jkt, RFC 7638); remembering jti values and
// server nonces are the caller's.
import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { Clock } from '../lib/clock.js';
import { CLIENT_ASSERTION_ALGS } from './client-assertion.js';
import { ALG_SPECS, compactParts, decodeJsonPart, keyFits, signatureVerifies, type AlgSpec } from './jws.js';

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

/** htu compares without query and fragment, scheme and host as URL parsing normalises them (RFC 9449 4.3 item 9); the same string needs no parsing. */
export function htuOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return undefined;
  }
}

export const accessTokenHash = (token: string) => createHash('sha256').update(token).digest('base64url');

/** How many proof headers (each naming its key) a verifier keeps checked: a client reuses its key, so its header is checked once. */
export const DPOP_KEY_CACHE_SIZE = 10_000;

/** RFC 7638 3.2: the members a thumbprint covers, in lexicographic order, per key type */
const THUMBPRINT_MEMBERS: Record<string, readonly string[]> = { EC: ['crv', 'kty', 'x', 'y'], RSA: ['e', 'kty', 'n'], OKP: ['crv', 'kty', 'x'] };

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

/** A proof header that passed its checks: the algorithm, the imported key and its thumbprint. */
interface CheckedHeader {
  spec: AlgSpec;
  key: KeyObject;
  jkt: string;
}

/** The header's checks, the key's import and its thumbprint: the same for every proof a client makes with one key. */
function checkHeader(headerPart: string): CheckedHeader {
  const header = decodeJsonPart(headerPart);
  if (header === undefined) throw new DpopProofError('DPoP: not a compact JWS');
  if (header.typ !== 'dpop+jwt') throw new DpopProofError('DPoP: typ must be dpop+jwt');
  if (typeof header.alg !== 'string' || !DPOP_ALGS.includes(header.alg)) throw new DpopProofError(`DPoP: alg must be one of ${DPOP_ALGS.join(', ')}`);
  // no extension is understood, so any critical one refuses the proof (RFC 7515 4.1.11)
  if (header.crit !== undefined) throw new DpopProofError('DPoP: no crit header parameter is supported');
  const jwk = header.jwk as Record<string, unknown> | undefined;
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw new DpopProofError('DPoP: the jwk header (the public key) is required');
  if (PRIVATE_MEMBERS.some((m) => m in jwk)) throw new DpopProofError('DPoP: the jwk header must be a public key');
  const spec = ALG_SPECS[header.alg]!;
  const jkt = thumbprintOf(jwk);
  let key: KeyObject;
  try {
    key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    throw new DpopProofError('DPoP: the jwk header is not a usable public key');
  }
  if (key.type !== 'public') throw new DpopProofError('DPoP: the jwk header must be a public key');
  if (jwk.kty !== spec.kty || !keyFits(spec, key)) throw new DpopProofError(`DPoP: the jwk is not a key for ${header.alg}`);
  return { spec, key, jkt };
}

export function createDpopProofVerifier(clock: Pick<Clock, 'nowMs'>, keyCacheSize = DPOP_KEY_CACHE_SIZE) {
  // A header names the key exactly (its jwk), so the checks of a header seen before hold: a client's proofs
  // skip the parse, the import and the thumbprint after its first. Least recently used first in the Map's order.
  const headers = new Map<string, CheckedHeader>();
  function checked(headerPart: string): CheckedHeader {
    const cached = headers.get(headerPart);
    if (cached) {
      headers.delete(headerPart);
      headers.set(headerPart, cached);
      return cached;
    }
    const fresh = checkHeader(headerPart);
    headers.set(headerPart, fresh);
    if (headers.size > keyCacheSize) headers.delete(headers.keys().next().value as string);
    return fresh;
  }

  return {
    /** Rejects with DpopProofError for anything but a fresh proof of this request. */
    async verify(proof: string, request: DpopRequest): Promise<VerifiedProof> {
      const parts = compactParts(proof);
      if (parts === undefined) throw new DpopProofError('DPoP: not a compact JWS');
      const [headerPart, payloadPart, signaturePart] = parts;
      const { spec, key, jkt } = checked(headerPart);
      if (!(await signatureVerifies(spec, key, `${headerPart}.${payloadPart}`, signaturePart))) throw new DpopProofError('DPoP: the signature does not verify with its jwk');

      const payload = decodeJsonPart(payloadPart);
      if (payload === undefined) throw new DpopProofError('DPoP: the payload must be a JSON object');
      for (const claim of ['jti', 'htm', 'htu', 'iat']) if (!(claim in payload)) throw new DpopProofError(`DPoP: the ${claim} claim is missing`);
      const nowS = Math.floor(clock.nowMs() / 1000);
      const { jti, htm, htu, iat, ath, nonce, exp, nbf } = payload;
      // exp and nbf are optional in a proof; present, they hold as in any JWT (RFC 7519 4.1.4, 4.1.5)
      if (exp !== undefined && (typeof exp !== 'number' || exp <= nowS - DPOP_SKEW_S)) throw new DpopProofError('DPoP: the exp claim is wrong');
      if (nbf !== undefined && (typeof nbf !== 'number' || nbf > nowS + DPOP_SKEW_S)) throw new DpopProofError('DPoP: the nbf claim is wrong');
      if (typeof jti !== 'string' || jti === '' || jti.length > 256) throw new DpopProofError('DPoP: jti must be a string of 1-256 characters');
      if (htm !== request.method) throw new DpopProofError(`DPoP: htm must be ${request.method}`);
      if (typeof htu !== 'string' || (htu !== request.url && htuOf(htu) !== htuOf(request.url))) throw new DpopProofError(`DPoP: htu must be ${htuOf(request.url)}`);
      if (typeof iat !== 'number' || iat > nowS + DPOP_SKEW_S || iat < nowS - DPOP_MAX_AGE_S - DPOP_SKEW_S) throw new DpopProofError(`DPoP: iat must be within ${DPOP_MAX_AGE_S} seconds of now`);
      if (request.accessToken !== undefined && ath !== accessTokenHash(request.accessToken)) throw new DpopProofError('DPoP: ath must be the base64url SHA-256 of the access token');
      return { jkt, jti, iat, ...(typeof nonce === 'string' && { nonce }) };
    },
  };
}

export type DpopProofVerifier = ReturnType<typeof createDpopProofVerifier>;
