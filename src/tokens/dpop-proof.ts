// DPoP proofs (RFC 9449 4.3): a JWT the client signs with the key its tokens are bound to, carried in the DPoP
// header of each request, naming the method and URL, fresh, and (at a resource) the access token's hash.
// This file checks one proof and answers its key's thumbprint (jkt, RFC 7638); remembering jti values and
// server nonces are the caller's.
import { createHash } from 'node:crypto';
import { EmbeddedJWK, calculateJwkThumbprint, decodeProtectedHeader, errors, jwtVerify, type JWK } from 'jose';
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

export function createDpopProofVerifier(clock: Pick<Clock, 'nowMs'>) {
  return {
    /** Rejects with DpopProofError for anything but a fresh proof of this request. */
    async verify(proof: string, request: DpopRequest): Promise<VerifiedProof> {
      let header;
      try {
        header = decodeProtectedHeader(proof);
      } catch {
        throw new DpopProofError('DPoP: not a compact JWS');
      }
      if (header.typ !== 'dpop+jwt') throw new DpopProofError('DPoP: typ must be dpop+jwt');
      if (typeof header.alg !== 'string' || !DPOP_ALGS.includes(header.alg)) throw new DpopProofError(`DPoP: alg must be one of ${DPOP_ALGS.join(', ')}`);
      const jwk = header.jwk as JWK | undefined;
      if (typeof jwk !== 'object' || jwk === null) throw new DpopProofError('DPoP: the jwk header (the public key) is required');
      if (PRIVATE_MEMBERS.some((m) => m in jwk)) throw new DpopProofError('DPoP: the jwk header must be a public key');
      const nowS = Math.floor(clock.nowMs() / 1000);
      let payload;
      try {
        ({ payload } = await jwtVerify(proof, EmbeddedJWK, { algorithms: DPOP_ALGS, typ: 'dpop+jwt', requiredClaims: ['jti', 'htm', 'htu', 'iat'], currentDate: new Date(nowS * 1000), clockTolerance: DPOP_SKEW_S }));
      } catch (error) {
        if (error instanceof errors.JWSSignatureVerificationFailed) throw new DpopProofError('DPoP: the signature does not verify with its jwk');
        if (error instanceof errors.JWTClaimValidationFailed) throw new DpopProofError(`DPoP: the ${error.claim} claim ${error.reason === 'missing' ? 'is missing' : 'is wrong'}`);
        throw new DpopProofError(`DPoP: ${error instanceof Error ? error.message : 'invalid'}`);
      }
      const { jti, htm, htu, iat, ath, nonce } = payload as Record<string, unknown>;
      if (typeof jti !== 'string' || jti === '' || jti.length > 256) throw new DpopProofError('DPoP: jti must be a string of 1-256 characters');
      if (htm !== request.method) throw new DpopProofError(`DPoP: htm must be ${request.method}`);
      if (typeof htu !== 'string' || htuOf(htu) !== htuOf(request.url)) throw new DpopProofError(`DPoP: htu must be ${htuOf(request.url)}`);
      if (typeof iat !== 'number' || iat > nowS + DPOP_SKEW_S || iat < nowS - DPOP_MAX_AGE_S - DPOP_SKEW_S) throw new DpopProofError(`DPoP: iat must be within ${DPOP_MAX_AGE_S} seconds of now`);
      if (request.accessToken !== undefined && ath !== accessTokenHash(request.accessToken)) throw new DpopProofError('DPoP: ath must be the base64url SHA-256 of the access token');
      return { jkt: await calculateJwkThumbprint(jwk, 'sha256'), jti, iat, ...(typeof nonce === 'string' && { nonce }) };
    },
  };
}

export type DpopProofVerifier = ReturnType<typeof createDpopProofVerifier>;
