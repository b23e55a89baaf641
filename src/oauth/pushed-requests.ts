// Pushed authorization requests (RFC 9126): the checked parameters a client posted, under a request_uri the
// authorization endpoint redeems once, within a minute. In memory and keyed by the SHA-256 of the reference: a
// pushed request that a restart loses is pushed again by its client (it has not yet sent the browser, or the
// browser's next step fails and the client starts over), which is cheaper than a WAL write per request.
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../lib/clock.js';

/** RFC 9126 2.2: the prefix of request_uri values (RFC 9101 10.2's URN namespace) */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
/** RFC 9126 2.2 suggests a short lifetime: long enough to send the browser, short enough to be useless when leaked */
export const PUSHED_REQUEST_TTL_S = 60;
/** beyond this many unexpired pushed requests a new push is refused: a bound on memory */
export const MAX_PUSHED_REQUESTS = 100_000;

export type PushedParams = Record<string, string>;

export type Redeemed = { ok: true; params: PushedParams } | { ok: false; reason: 'unknown' | 'expired' | 'other_client' };

export interface PushedRequests {
  /** undefined when full */
  push(clientId: string, params: PushedParams, ttlS?: number): { request_uri: string; expires_in: number } | undefined;
  /** once: a redeemed, expired or unknown reference is never found again */
  redeem(requestUri: string, clientId: string): Redeemed;
}

interface Entry {
  client_id: string;
  params: PushedParams;
  /** ms */
  expires: number;
}

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

export function createPushedRequests(clock: Pick<Clock, 'nowMs'>, max = MAX_PUSHED_REQUESTS): PushedRequests {
  const entries = new Map<string, Entry>();
  let sweptMs = 0;
  const sweep = (now: number) => {
    sweptMs = now;
    for (const [key, e] of entries) if (e.expires <= now) entries.delete(key);
  };
  return {
    push(clientId, params, ttlS = PUSHED_REQUEST_TTL_S) {
      const now = clock.nowMs();
      if (now - sweptMs >= 1000 || entries.size >= max) sweep(now);
      if (entries.size >= max) return undefined;
      const requestUri = REQUEST_URI_PREFIX + randomBytes(32).toString('base64url');
      entries.set(digest(requestUri), { client_id: clientId, params, expires: now + ttlS * 1000 });
      return { request_uri: requestUri, expires_in: ttlS };
    },
    redeem(requestUri, clientId) {
      const key = digest(requestUri);
      const e = entries.get(key);
      if (e === undefined) return { ok: false, reason: 'unknown' };
      // Another client's reference is not used up by a stranger naming it.
      if (e.client_id !== clientId) return { ok: false, reason: 'other_client' };
      entries.delete(key);
      if (e.expires <= clock.nowMs()) return { ok: false, reason: 'expired' };
      return { ok: true, params: e.params };
    },
  };
}
