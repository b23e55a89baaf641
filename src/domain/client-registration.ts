// Dynamic client registration's decisions (RFC 7591, RFC 7592): the initial access tokens an organization
// issues to those it lets register clients, and the registration itself, which creates a client exactly as
// the management API does (the same change and event) plus its registration access token. Every token is
// returned once and stored as its SHA-256 (ctx.hashKey) only.
import { ServiceError, badRequest, notFound, quote } from '../errors.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import { createOAuthClient, type OAuthClientInput, type OAuthClientRet } from './oauth-clients.js';
import type { OrgState, RegistrationToken } from './state.js';

export const MAX_REGISTRATION_TOKENS = 100;
/** seconds; absent: the token works until revoked */
export const REGISTRATION_TOKEN_DURATION = { min: 60, max: 365 * 86_400 };

export interface RegistrationTokenInput {
  description?: string;
  expires_in?: number;
}

export interface RegistrationTokenView {
  id: string;
  description: string;
  created_at: string;
  expires_at: string | null;
}

export function registrationTokenView(t: RegistrationToken): RegistrationTokenView {
  return { id: t.id, description: t.description ?? '', created_at: t.created, expires_at: t.expires_at_ms === undefined ? null : new Date(t.expires_at_ms).toISOString() };
}

export const registrationTokens = (state: OrgState): readonly RegistrationToken[] => state.oauth_registration_tokens ?? [];

const live = (t: RegistrationToken, nowMs: number) => t.expires_at_ms === undefined || t.expires_at_ms > nowMs;

/** The unexpired token with this hash, if any. */
export function findRegistrationToken(state: OrgState, tokenHash: string, nowMs: number): RegistrationToken | undefined {
  return registrationTokens(state).find((t) => t.token_hash === tokenHash && live(t, nowMs));
}

/** The token names its organization (`{org id}.{secret}`), so the registration endpoint needs no organization header. */
export function issueRegistrationToken(state: OrgState, input: RegistrationTokenInput, ctx: DecideContext): Decision<RegistrationTokenView & { token: string }> {
  const kept = registrationTokens(state).filter((t) => live(t, ctx.nowMs));
  if (kept.length >= MAX_REGISTRATION_TOKENS) throw badRequest(`an organization may have at most ${MAX_REGISTRATION_TOKENS} unexpired registration tokens; revoke one first`);
  const description = (input.description ?? '').trim();
  if (description.length > 256) throw badRequest('description: at most 256 characters');
  const { expires_in } = input;
  if (expires_in !== undefined && (!Number.isInteger(expires_in) || expires_in < REGISTRATION_TOKEN_DURATION.min || expires_in > REGISTRATION_TOKEN_DURATION.max)) {
    throw badRequest(`expires_in: must be an integer from ${REGISTRATION_TOKEN_DURATION.min} to ${REGISTRATION_TOKEN_DURATION.max} seconds, got ${expires_in}`);
  }
  const token = `${state.id}.${ctx.secret()}`;
  const record: RegistrationToken = {
    id: ctx.uuid(),
    token_hash: ctx.hashKey(token),
    created: new Date(ctx.nowMs).toISOString(),
    ...(description !== '' && { description }),
    ...(expires_in !== undefined && { expires_at_ms: ctx.nowMs + expires_in * 1000 }),
  };
  // expired tokens leave with this change: the list only holds what could still be used
  return decision({ ...registrationTokenView(record), token }, [{ t: 'OAuthRegistrationTokensSet', tokens: [...kept, record] }]);
}

export function revokeRegistrationToken(state: OrgState, id: string): Decision<null> {
  const all = registrationTokens(state);
  if (!all.some((t) => t.id === id)) throw notFound(`registration token ${quote(id)} not found`);
  return decision(null, [{ t: 'OAuthRegistrationTokensSet', tokens: all.filter((t) => t.id !== id) }]);
}

/**
 * RFC 7591 3: a client registered with an initial access token, checked here again so that a token revoked
 * a moment before cannot register. The client's own registration access token is `{client_id}.{secret}`.
 */
export function registerOAuthClient(
  state: OrgState,
  input: OAuthClientInput,
  initialTokenHash: string,
  ctx: DecideContext,
  allowInsecure = false,
): Decision<OAuthClientRet & { client_secret?: string; registration_access_token: string }> {
  const by = findRegistrationToken(state, initialTokenHash, ctx.nowMs);
  if (by === undefined) throw new ServiceError('ERR_UNAUTHORIZED', 'the initial access token is unknown, revoked or expired', { oauth: 'invalid_token' });
  const created = createOAuthClient(state, input, ctx, allowInsecure);
  const change = created.changes[0];
  if (change?.t !== 'OAuthClientCreated') throw new Error('createOAuthClient decided no OAuthClientCreated');
  const token = `${change.client.client_id}.${ctx.secret()}`;
  const client = { ...change.client, registration_access_token_hash: ctx.hashKey(token), registration_token_id: by.id };
  return { ...created, reply: { ...created.reply, registration_access_token: token }, changes: [{ t: 'OAuthClientCreated', client }, ...created.changes.slice(1)] };
}
