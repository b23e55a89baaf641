// Decisions about what a person's sign-in grants an OAuth client: single-use authorization codes and the
// grants they start (the refresh-token family), with rotation, reuse detection and revocation. Codes and
// refresh tokens are stored only as hashes, so the WAL and snapshots never hold a usable one.
import { badRequest, notFound, quote } from '../errors.js';
import type { Change } from './changes.js';
import type { AuthenticationDetails } from './commands.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import type { OrgState } from './state.js';
import { openingSession, sessionActive, usingSession, type PersonSession } from './sessions.js';

/** RFC 6749 4.1.2: a code lives briefly; 60 s as the issue asks (the RFC's maximum is 10 minutes). */
export const CODE_TTL_MS = 60_000;
/** A redeemed or expired code is kept this long past its expiry, so that a late replay still revokes what it issued. */
export const CODE_RETAIN_MS = 10 * 60_000;
/** Rotated refresh-token hashes a grant remembers for reuse detection; older ones are merely unknown. */
export const ROTATED_KEPT = 32;

/** What the person's sign-in established, carried from the hosted page into every token of the grant. */
export interface SignInFacts {
  person_id: string;
  /** seconds since the epoch */
  auth_time: number;
  /** the sign-in's methods, e.g. ['password'] */
  amr: string[];
  /**
   * the sign-in as its AuthenticationSucceeded said it, for the TokenMinted of the grant's tokens; absent for a
   * grant the organization began, and in codes, grants and sessions made before it was kept
   */
  authentications?: AuthenticationDetails[];
  /** the token_minted hooks' claims at the sign-in, already admitted (reserved names dropped) */
  custom_claims?: Record<string, unknown>;
  /** the sign-in session (sessions.ts) its grants belong to; absent for the organization's grants and those made before sessions */
  session_id?: string;
}

export interface OAuthCode extends SignInFacts {
  /** SHA-256 of the code, base64url */
  code_hash: string;
  client_id: string;
  redirect_uri: string;
  /** S256 challenge; absent only for a confidential client that sent none */
  code_challenge?: string;
  scope: string[];
  nonce?: string;
  expires_at_ms: number;
  /** the grant its redemption started: a replay revokes it */
  redeemed_grant?: string;
}

/** A grant: the refresh-token family a redeemed code starts; every token it issues names it (claim sid). */
export interface OAuthGrant extends SignInFacts {
  grant_id: string;
  client_id: string;
  scope: string[];
  created_ms: number;
  /** past it, the refresh token is refused and the grant is pruned */
  expires_at_ms: number;
  /** SHA-256 of the current refresh token; absent when the client has no refresh_token grant */
  refresh_hash?: string;
  /** hashes of refresh tokens already rotated away, newest last: presenting one revokes the grant */
  rotated: string[];
  revoked: boolean;
  /** RFC 9449 5: a public client's refresh token bound to its DPoP key (JWK thumbprint); absent: unbound, and on grants stored before */
  jkt?: string;
}

export type IssueCodeInput = Omit<OAuthCode, 'expires_at_ms' | 'redeemed_grant'>;

export interface RedeemCodeInput {
  code_hash: string;
  client_id: string;
  redirect_uri: string;
  /** S256 of the code_verifier the client sent, or undefined when it sent none */
  verifier_challenge: string | undefined;
  grant_id: string;
  refresh_hash?: string;
  /** how long the grant (its refresh token) lives */
  grant_ttl_ms: number;
  /** the DPoP key its refresh token is bound to */
  jkt?: string;
}

export interface RotateRefreshInput {
  grant_id: string;
  presented_hash: string;
  client_id: string;
  next_hash: string;
  /** the client's refresh-token lifetime: each rotation extends the grant by it */
  grant_ttl_ms: number;
  /** the key of the request's DPoP proof, if it had one */
  jkt?: string;
}

/** An OAuth refusal is a reply, not a thrown error: a refusal may still commit (a replay revokes). */
export type GrantOutcome = { ok: true; grant: OAuthGrant; code?: OAuthCode } | { ok: false; error: 'invalid_grant'; description: string };

const refused = (description: string): GrantOutcome => ({ ok: false, error: 'invalid_grant', description });

/** Codes and grants past their time, dropped by the entry that issues a new code or grant. */
function pruned(state: OrgState, nowMs: number): Change[] {
  const code_hashes: string[] = [];
  for (const c of state.oauth_codes.values()) if (c.expires_at_ms + CODE_RETAIN_MS <= nowMs) code_hashes.push(c.code_hash);
  const grant_ids: string[] = [];
  for (const g of state.oauth_grants.values()) if (g.expires_at_ms <= nowMs) grant_ids.push(g.grant_id);
  return code_hashes.length + grant_ids.length === 0 ? [] : [{ t: 'OAuthPruned', code_hashes, grant_ids }];
}

/** `session`: the session the sign-in behind the code opens, in the same entry (its id is the code's session_id). */
export function issueOAuthCode(state: OrgState, input: IssueCodeInput, ctx: DecideContext, session?: PersonSession): Decision<{ expires_at_ms: number }> {
  const code: OAuthCode = { ...input, expires_at_ms: ctx.nowMs + CODE_TTL_MS };
  const opening = session === undefined ? [] : openingSession(state, session, ctx.nowMs);
  return decision({ expires_at_ms: code.expires_at_ms }, [...pruned(state, ctx.nowMs), ...opening, { t: 'OAuthCodeIssued', code }]);
}

/**
 * Single use: the first redemption starts a grant; any later one revokes that grant (RFC 6749 4.1.2: the
 * code was stolen, or the client is broken) and is refused. Bound to the client, the redirect_uri and the
 * PKCE challenge (RFC 7636 4.6).
 */
export function redeemOAuthCode(state: OrgState, input: RedeemCodeInput, ctx: DecideContext): Decision<GrantOutcome> {
  const code = state.oauth_codes.get(input.code_hash);
  if (!code) return decision(refused('the authorization code is unknown or expired'));
  if (code.redeemed_grant !== undefined) {
    const grant = state.oauth_grants.get(code.redeemed_grant);
    const changes: Change[] = grant && !grant.revoked ? [{ t: 'OAuthGrantRevoked', grant_id: grant.grant_id }] : [];
    return decision(refused('the authorization code was already used; the tokens it issued are revoked'), changes);
  }
  if (code.expires_at_ms <= ctx.nowMs) return decision(refused('the authorization code expired'));
  if (code.client_id !== input.client_id) return decision(refused('the authorization code was issued to another client'));
  if (code.redirect_uri !== input.redirect_uri) return decision(refused('redirect_uri differs from the one of the authorization request'));
  if (code.code_challenge !== undefined) {
    if (input.verifier_challenge === undefined) return decision(refused('code_verifier is required: the authorization request had a code_challenge'));
    if (input.verifier_challenge !== code.code_challenge) return decision(refused('code_verifier does not match the code_challenge'));
  } else if (input.verifier_challenge !== undefined) {
    return decision(refused('code_verifier given, but the authorization request had no code_challenge'));
  }
  if (code.session_id !== undefined && !sessionActive(state, code.session_id, ctx.nowMs)) return decision(refused('the sign-in session of the authorization code ended'));
  const grant = startedGrant(code, { ...input, client_id: code.client_id, scope: code.scope }, ctx.nowMs);
  return decision({ ok: true, grant, code }, [...pruned(state, ctx.nowMs), { t: 'OAuthCodeRedeemed', code_hash: code.code_hash, grant }, ...usingSession(state, grant, ctx.nowMs)]);
}

/** A grant begun by a person's sign-in (a redeemed authorization or device code): its tokens are of that sign-in, and it belongs to the sign-in's session. */
export function startedGrant(
  signIn: SignInFacts,
  start: { grant_id: string; client_id: string; scope: string[]; refresh_hash?: string | undefined; grant_ttl_ms: number; jkt?: string | undefined },
  nowMs: number,
): OAuthGrant {
  return {
    grant_id: start.grant_id,
    client_id: start.client_id,
    person_id: signIn.person_id,
    auth_time: signIn.auth_time,
    amr: signIn.amr,
    ...(signIn.authentications !== undefined && { authentications: signIn.authentications }),
    ...(signIn.custom_claims !== undefined && { custom_claims: signIn.custom_claims }),
    ...(signIn.session_id !== undefined && { session_id: signIn.session_id }),
    scope: start.scope,
    created_ms: nowMs,
    expires_at_ms: nowMs + start.grant_ttl_ms,
    ...(start.refresh_hash !== undefined && { refresh_hash: start.refresh_hash }),
    rotated: [],
    revoked: false,
    ...(start.jkt !== undefined && { jkt: start.jkt }),
  };
}

/**
 * Rotation on every use (RFC 9700 4.14.2): the presented token is replaced; a token already rotated away
 * revokes the whole grant, since either the client or an attacker holds a copy it should not.
 */
export function rotateOAuthRefresh(state: OrgState, input: RotateRefreshInput, ctx: DecideContext): Decision<GrantOutcome> {
  const grant = state.oauth_grants.get(input.grant_id);
  if (!grant || grant.refresh_hash === undefined) return decision(refused('the refresh token is unknown or expired'));
  // Another client's token is refused before anything else is learnt or changed (RFC 6749 6).
  if (grant.client_id !== input.client_id) return decision(refused('the refresh token was issued to another client'));
  if (grant.revoked) return decision(refused(grant.session_id !== undefined && !state.sessions.has(grant.session_id) ? 'the refresh token was revoked: its sign-in session ended' : 'the refresh token was revoked'));
  if (grant.rotated.includes(input.presented_hash)) {
    return decision(refused('the refresh token was already used; its whole family is revoked'), [{ t: 'OAuthGrantRevoked', grant_id: grant.grant_id }]);
  }
  if (grant.refresh_hash !== input.presented_hash) return decision(refused('the refresh token is unknown or expired'));
  if (grant.expires_at_ms <= ctx.nowMs) return decision(refused('the refresh token expired'));
  // RFC 9449 5: a bound refresh token is used with a proof of its key; without one it is only refused, since its holder may be the client
  if (grant.jkt !== undefined && input.jkt !== grant.jkt) return decision(refused('the refresh token is bound to a DPoP key: present a DPoP proof of that key'));
  const rotated = [...grant.rotated, grant.refresh_hash].slice(-ROTATED_KEPT);
  const next: OAuthGrant = { ...grant, refresh_hash: input.next_hash, rotated, expires_at_ms: ctx.nowMs + input.grant_ttl_ms };
  return decision({ ok: true, grant: next }, [{ t: 'OAuthRefreshRotated', grant_id: grant.grant_id, refresh_hash: input.next_hash, rotated, expires_at_ms: next.expires_at_ms }, ...usingSession(state, next, ctx.nowMs)]);
}

/** Revocation (RFC 7009, a client's deletion): revoking an unknown or revoked grant changes nothing. */
export function revokeOAuthGrant(state: OrgState, grantId: string): Decision<null> {
  const grant = state.oauth_grants.get(grantId);
  return decision(null, grant && !grant.revoked ? [{ t: 'OAuthGrantRevoked', grant_id: grantId }] : []);
}

/** Whether tokens naming this grant (claim sid) may still be honoured. */
export function grantActive(state: OrgState, grantId: string): boolean {
  const grant = state.oauth_grants.get(grantId);
  return grant !== undefined && !grant.revoked;
}

/** A grant the organization begins for a person (POST /oauth2/tokens/mint): no code, no sign-in. */
export interface MintGrantInput extends Omit<SignInFacts, 'auth_time'> {
  grant_id: string;
  client_id: string;
  scope: string[];
  refresh_hash?: string;
  grant_ttl_ms: number;
}

/** The client and the person must exist, and the person be active: a grant is never begun for less. */
export function mintOAuthGrant(state: OrgState, input: MintGrantInput, ctx: DecideContext): Decision<OAuthGrant> {
  if (!state.oauth_clients.has(input.client_id)) throw notFound(`OAuth client ${quote(input.client_id)} not found`);
  const person = state.persons.get(input.person_id);
  if (!person) throw notFound(`person ${quote(input.person_id)} not found`);
  if (!person.active) throw badRequest(`person ${quote(input.person_id)} is not active`);
  const { grant_ttl_ms, refresh_hash, ...facts } = input;
  const grant: OAuthGrant = {
    ...facts,
    // the organization's call stands for the sign-in: its time is the decision's
    auth_time: Math.floor(ctx.nowMs / 1000),
    created_ms: ctx.nowMs,
    expires_at_ms: ctx.nowMs + grant_ttl_ms,
    ...(refresh_hash !== undefined && { refresh_hash }),
    rotated: [],
    revoked: false,
  };
  return decision(grant, [...pruned(state, ctx.nowMs), { t: 'OAuthGrantStarted', grant }]);
}

/** Every grant of the client for the person begun at or before untilMs: their refresh and access tokens stop. */
export function revokeOAuthGrants(state: OrgState, clientId: string, personId: string, untilMs: number): Decision<{ revoked: number }> {
  const changes: Change[] = [];
  for (const g of state.oauth_grants.values()) {
    if (g.client_id === clientId && g.person_id === personId && !g.revoked && g.created_ms <= untilMs) changes.push({ t: 'OAuthGrantRevoked', grant_id: g.grant_id });
  }
  return decision({ revoked: changes.length }, changes);
}
