// DPoP (RFC 9449) for the authorization server's own endpoints: a request's proof checked for its method and
// URL, each proof's jti once (for the proof's short life, kept across restarts like client assertions' jti), and, when the
// deployment asks for them, server nonces (RFC 9449 8, 9): stateless, an HMAC of a five-minute window, so
// any process of the deployment that holds the key accepts them and nothing is stored.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../lib/clock.js';
import { DPOP_MAX_AGE_S, DPOP_SKEW_S, DpopProofError, type DpopProofVerifier } from '../tokens/dpop-proof.js';
import type { OnceCheck } from '../lib/replay-guard.js';

const NONCE_WINDOW_S = 300;

export interface DpopNonces {
  current(): string;
  valid(nonce: string | undefined): boolean;
}

export function createDpopNonces(key: Buffer, clock: Pick<Clock, 'nowMs'>): DpopNonces {
  const mac = (window: number) => createHmac('sha256', key).update(`dpop-nonce:${window}`).digest('base64url').slice(0, 22);
  const windowNow = () => Math.floor(clock.nowMs() / 1000 / NONCE_WINDOW_S);
  return {
    current: () => {
      const w = windowNow();
      return `${w.toString(36)}.${mac(w)}`;
    },
    valid(nonce) {
      if (nonce === undefined) return false;
      const [w36, tag] = nonce.split('.');
      const w = Number.parseInt(w36 ?? '', 36);
      const now = windowNow();
      // this window or the one before: a nonce lives five to ten minutes
      if (!Number.isInteger(w) || (w !== now && w !== now - 1) || tag === undefined) return false;
      const expected = Buffer.from(mac(w));
      const given = Buffer.from(tag);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/** Why a proof is refused: invalid_dpop_proof, or use_dpop_nonce with the nonce to use (RFC 9449 7.1, 8). */
export class DpopRefusal extends Error {
  override name = 'DpopRefusal';
  constructor(
    readonly error: 'invalid_dpop_proof' | 'use_dpop_nonce',
    description: string,
    readonly nonce?: string,
  ) {
    super(description);
  }
}

export interface Dpop {
  /**
   * The key thumbprint a request's proof binds, undefined without a DPoP header; rejects with DpopRefusal.
   * `path` is the endpoint's, joined to the issuer for htu; `accessToken` at a resource (ath).
   */
  check(header: string | undefined, method: string, path: string, accessToken?: string): Promise<string | undefined>;
  /** the nonce to send along (DPoP-Nonce) when nonces are required */
  nonce(): string | undefined;
}

export function createDpop(deps: { verifier: DpopProofVerifier; replays: OnceCheck; nonces: DpopNonces | undefined; issuer(): string }): Dpop {
  return {
    nonce: () => deps.nonces?.current(),
    async check(header, method, path, accessToken) {
      if (header === undefined) return undefined;
      if (header.includes(',')) throw new DpopRefusal('invalid_dpop_proof', 'DPoP: exactly one proof');
      let proof;
      try {
        proof = await deps.verifier.verify(header, { method, url: deps.issuer() + path, ...(accessToken !== undefined && { accessToken }) });
      } catch (error) {
        if (error instanceof DpopProofError) throw new DpopRefusal('invalid_dpop_proof', error.message);
        throw error;
      }
      if (deps.nonces !== undefined && !deps.nonces.valid(proof.nonce)) throw new DpopRefusal('use_dpop_nonce', 'DPoP: the proof must carry the nonce of the DPoP-Nonce header', deps.nonces.current());
      // RFC 9449 11.1: a proof is used once while it could be accepted
      if (!(await deps.replays.firstUse(`${proof.jkt}\u0000${proof.jti}`, proof.iat + DPOP_MAX_AGE_S + DPOP_SKEW_S))) throw new DpopRefusal('invalid_dpop_proof', 'DPoP: this proof (its jti) was used already; make a new proof for each request');
      return proof.jkt;
    },
  };
}
