// Decisions about the device authorization grant (RFC 8628): a device code and its user code issued to a client,
// the person's answer on the user code page (allowed with their sign-in, or denied), and the single redemption
// that starts a grant. Both codes are stored only as hashes, so the WAL and snapshots never hold a usable one.
import { ServiceError } from '../errors.js';
import type { Change } from './changes.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import { CODE_RETAIN_MS, startedGrant, type OAuthGrant, type SignInFacts } from './oauth-grants.js';
import type { OrgState } from './state.js';

/** RFC 8628 3.2: how long the person has to enter the code; oidc-provider's default too. */
export const DEVICE_CODE_TTL_MS = 10 * 60_000;
/** RFC 8628 3.2: the polling interval, seconds, when the server names none (5). */
export const DEVICE_POLL_INTERVAL_S = 5;
/** Device codes an organization holds at once (pending, answered, or kept past use for replays). */
export const MAX_DEVICE_CODES = 1000;

export interface OAuthDeviceCode {
  /** SHA-256 of the device code, base64url */
  device_code_hash: string;
  /** SHA-256 of the user code in its canonical form (device-code.ts), base64url */
  user_code_hash: string;
  client_id: string;
  scope: string[];
  expires_at_ms: number;
  /** the person's sign-in once they allowed the device */
  approved?: SignInFacts;
  /** the person refused */
  denied?: true;
  /** the grant its redemption started: a replay revokes it */
  redeemed_grant?: string;
}

export type IssueDeviceCodeInput = Pick<OAuthDeviceCode, 'device_code_hash' | 'user_code_hash' | 'client_id' | 'scope'>;

export interface DecideDeviceCodeInput {
  user_code_hash: string;
  /** the signed-in person allowing the device; undefined: they denied it */
  approved: SignInFacts | undefined;
}

export interface RedeemDeviceCodeInput {
  device_code_hash: string;
  client_id: string;
  grant_id: string;
  refresh_hash?: string;
  grant_ttl_ms: number;
}

/** RFC 8628 3.5's answers while no token is issued, and invalid_grant for an unknown, foreign or used code. */
export type DeviceError = 'authorization_pending' | 'access_denied' | 'expired_token' | 'invalid_grant';
export type DeviceOutcome = { ok: true; grant: OAuthGrant } | { ok: false; error: DeviceError; description: string };
export type DecideOutcome = { ok: true; client_id: string } | { ok: false; description: string };

const refused = (error: DeviceError, description: string): DeviceOutcome => ({ ok: false, error, description });

/** The device code a user code names, while it can still be answered or redeemed. */
export function deviceCodeByUser(state: OrgState, userCodeHash: string, nowMs: number): OAuthDeviceCode | undefined {
  for (const c of state.oauth_device_codes.values()) if (c.user_code_hash === userCodeHash && c.expires_at_ms > nowMs) return c;
  return undefined;
}

/** Codes past their time (and the replay window after it), dropped by the entry that issues a new one. */
function pruned(state: OrgState, nowMs: number): Change[] {
  const hashes: string[] = [];
  for (const c of state.oauth_device_codes.values()) if (c.expires_at_ms + CODE_RETAIN_MS <= nowMs) hashes.push(c.device_code_hash);
  return hashes.length === 0 ? [] : [{ t: 'OAuthDeviceCodesPruned', device_code_hashes: hashes }];
}

export function issueDeviceCode(state: OrgState, input: IssueDeviceCodeInput, ctx: DecideContext): Decision<{ expires_at_ms: number }> {
  const prune = pruned(state, ctx.nowMs);
  const dropped = prune.length === 0 ? 0 : (prune[0] as { device_code_hashes: string[] }).device_code_hashes.length;
  if (state.oauth_device_codes.size - dropped >= MAX_DEVICE_CODES) {
    throw new ServiceError('ERR_TOO_MANY_REQUESTS', `the organization has ${MAX_DEVICE_CODES} device codes in flight; retry once some expire`);
  }
  // The caller draws a fresh user code when this one is taken (device-code.ts); two live ones must never meet.
  if (deviceCodeByUser(state, input.user_code_hash, ctx.nowMs) !== undefined) throw new ServiceError('ERR_CONFLICT', 'the user code is in use');
  const code: OAuthDeviceCode = { ...input, expires_at_ms: ctx.nowMs + DEVICE_CODE_TTL_MS };
  return decision({ expires_at_ms: code.expires_at_ms }, [...prune, { t: 'OAuthDeviceCodeIssued', code }]);
}

/** The person's answer, once: a code already answered, used or expired is refused and keeps its answer. */
export function decideDeviceCode(state: OrgState, input: DecideDeviceCodeInput, ctx: DecideContext): Decision<DecideOutcome> {
  const code = deviceCodeByUser(state, input.user_code_hash, ctx.nowMs);
  if (!code) return decision({ ok: false, description: 'the code is unknown or expired; start again on the device' });
  if (code.approved !== undefined || code.denied) return decision({ ok: false, description: 'the code was already answered' });
  const answer = input.approved === undefined ? { denied: true as const } : { approved: input.approved };
  return decision({ ok: true, client_id: code.client_id }, [{ t: 'OAuthDeviceCodeDecided', device_code_hash: code.device_code_hash, ...answer }]);
}

/**
 * The device's poll: pending, denied or expired until the person allowed it; then single use, a replay revoking
 * the grant it started (as a replayed authorization code does).
 */
export function redeemDeviceCode(state: OrgState, input: RedeemDeviceCodeInput, ctx: DecideContext): Decision<DeviceOutcome> {
  const code = state.oauth_device_codes.get(input.device_code_hash);
  // Another client's code is refused before anything about it is learnt or changed.
  if (!code || code.client_id !== input.client_id) return decision(refused('invalid_grant', 'the device code is unknown, expired long ago, or of another client'));
  if (code.redeemed_grant !== undefined) {
    const grant = state.oauth_grants.get(code.redeemed_grant);
    const changes: Change[] = grant && !grant.revoked ? [{ t: 'OAuthGrantRevoked', grant_id: grant.grant_id }] : [];
    return decision(refused('invalid_grant', 'the device code was already used; the tokens it issued are revoked'), changes);
  }
  if (code.expires_at_ms <= ctx.nowMs) return decision(refused('expired_token', 'the device code expired; start the device flow again'));
  if (code.denied) return decision(refused('access_denied', 'the person denied the device'));
  if (code.approved === undefined) return decision(refused('authorization_pending', 'the person has not yet entered the user code and allowed the device'));
  const grant = startedGrant(code.approved, { ...input, client_id: code.client_id, scope: code.scope }, ctx.nowMs);
  return decision({ ok: true, grant }, [{ t: 'OAuthDeviceCodeRedeemed', device_code_hash: code.device_code_hash, grant }]);
}
