// Pushed authorization requests (RFC 9126): the checked parameters a client posted, under a request_uri the
// authorization endpoint redeems once, within a minute. Kept in the client's organization like authorization
// codes (domain/pushed-requests.ts), under the SHA-256 of the reference: a restart loses none, any process that
// serves the organization finds them, and a reference used once is refused again even after a restart.
import { createHash, randomBytes } from 'node:crypto';
import type { IssuingOrg } from '../auth/issue.js';
import type { PushOutcome, RedeemPushedOutcome } from '../domain/pushed-requests.js';

/** RFC 9126 2.2: the prefix of request_uri values (RFC 9101 10.2's URN namespace) */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';
/** RFC 9126 2.2 suggests a short lifetime: long enough to send the browser, short enough to be useless when leaked */
export const PUSHED_REQUEST_TTL_S = 60;

export type PushedParams = Record<string, string>;
export type Redeemed = RedeemPushedOutcome;

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

/** undefined when the organization holds too many pushed requests already */
export async function pushRequest(org: IssuingOrg, clientId: string, params: PushedParams, ttlS = PUSHED_REQUEST_TTL_S): Promise<{ request_uri: string; expires_in: number } | undefined> {
  const requestUri = REQUEST_URI_PREFIX + randomBytes(32).toString('base64url');
  const { reply } = await org.execute({ kind: 'PushOAuthRequest', input: { request_uri_hash: digest(requestUri), client_id: clientId, params, ttl_ms: ttlS * 1000 } });
  return (reply as PushOutcome) === undefined ? undefined : { request_uri: requestUri, expires_in: ttlS };
}

/** once: a redeemed, expired or unknown reference is never found again */
export async function redeemRequest(org: IssuingOrg, requestUri: string, clientId: string): Promise<Redeemed> {
  // A reference that is not one of ours is unknown without an entry.
  if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return { ok: false, reason: 'unknown' };
  const { reply } = await org.execute({ kind: 'RedeemOAuthPushedRequest', input: { request_uri_hash: digest(requestUri), client_id: clientId } });
  return reply as Redeemed;
}
