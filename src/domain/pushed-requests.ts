// Decisions about pushed authorization requests (RFC 9126): the checked parameters a client posted, under the
// hash of a request_uri the authorization endpoint redeems once before it expires. In the organization's state
// like authorization codes, so a restart loses none and any process serving the organization knows them; only the
// hash of a reference is stored, so the WAL and snapshots never hold a usable one.
import type { Change } from './changes.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import type { OrgState } from './state.js';

/** Pushed requests an organization holds at once: a bound on its state, reached only by a flood. */
export const MAX_PUSHED_REQUESTS = 10_000;

export interface OAuthPushedRequest {
  /** SHA-256 of the request_uri, base64url */
  request_uri_hash: string;
  client_id: string;
  /** the authorization request's parameters, as checked when pushed */
  params: Record<string, string>;
  expires_at_ms: number;
}

export interface PushRequestInput {
  request_uri_hash: string;
  client_id: string;
  params: Record<string, string>;
  ttl_ms: number;
}

/** undefined: the organization holds too many already */
export type PushOutcome = { expires_at_ms: number } | undefined;
export type RedeemPushedOutcome = { ok: true; params: Record<string, string> } | { ok: false; reason: 'unknown' | 'expired' | 'other_client' };

function expired(state: OrgState, nowMs: number): string[] {
  const hashes: string[] = [];
  for (const r of state.oauth_pushed.values()) if (r.expires_at_ms <= nowMs) hashes.push(r.request_uri_hash);
  return hashes;
}

export function pushOAuthRequest(state: OrgState, input: PushRequestInput, ctx: DecideContext): Decision<PushOutcome> {
  const gone = expired(state, ctx.nowMs);
  if (state.oauth_pushed.size - gone.length >= MAX_PUSHED_REQUESTS) return decision(undefined);
  const request: OAuthPushedRequest = { request_uri_hash: input.request_uri_hash, client_id: input.client_id, params: input.params, expires_at_ms: ctx.nowMs + input.ttl_ms };
  return decision({ expires_at_ms: request.expires_at_ms }, [{ t: 'OAuthRequestPushed', request, expired: gone }]);
}

/** Once: a redeemed or expired reference is removed by the entry that finds it; another client's is left alone. */
export function redeemOAuthPushedRequest(state: OrgState, input: { request_uri_hash: string; client_id: string }, ctx: DecideContext): Decision<RedeemPushedOutcome> {
  const request = state.oauth_pushed.get(input.request_uri_hash);
  if (!request) return decision({ ok: false, reason: 'unknown' });
  // Another client's reference is not used up by a stranger naming it.
  if (request.client_id !== input.client_id) return decision({ ok: false, reason: 'other_client' });
  const used: Change = { t: 'OAuthPushedRequestRedeemed', request_uri_hash: request.request_uri_hash };
  if (request.expires_at_ms <= ctx.nowMs) return decision({ ok: false, reason: 'expired' }, [used]);
  return decision({ ok: true, params: request.params }, [used]);
}
