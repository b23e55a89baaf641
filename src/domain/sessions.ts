// Decisions about a person's sign-in sessions: a sign-in at the hosted page opens one; the grants its clients
// redeem belong to it; ending it (the person, the organization, RP-initiated logout) revokes those grants, so
// their refresh, access and ID tokens stop, and names each client's share of it for back-channel logout.
import { notFound, quote } from '../errors.js';
import type { Change } from './changes.js';
import { decision, type Decision } from './decision.js';
import type { OAuthGrant } from './oauth-grants.js';
import type { OrgState } from './state.js';

/** A durable sign-in session: who, how, from where, and which client applications received tokens in it. */
export interface PersonSession {
  session_id: string;
  person_id: string;
  /** the sign-in's methods, e.g. ['password'] */
  methods: string[];
  /** client_ids of the OAuth clients that received tokens in it, in the order they first did */
  clients: string[];
  created_ms: number;
  last_used_ms: number;
  /** past it the session is over: its browser sign-in and every grant begun in it have expired */
  expires_at_ms: number;
  ip: string;
  user_agent: string;
  /** identity tokens handed out in it (an SSO sign-in's), revoked when it ends; absent when none */
  tokens?: Array<{ jti: string; exp: number }>;
}

/** Why a session ended, as its SessionEnded records it; limit: the person's newest sessions pushed it out. */
export type SessionEndReason = 'person' | 'organization' | 'logout' | 'limit';

/** A client to tell, by back-channel logout, that its share of the session (sid: the grant) ended; owed until delivered or given up. */
export interface LogoutNotice {
  client_id: string;
  /** the sid of the ID tokens the client received: its grant */
  sid: string;
  person_id: string;
}

/** Sessions a person holds at most; the oldest end first, so a script signing in in a loop cannot grow the state. */
export const MAX_SESSIONS_PER_PERSON = 100;
export const MAX_USER_AGENT = 512;

export interface SessionView {
  session_id: string;
  person_id: string;
  methods: string[];
  clients: string[];
  created_at: string;
  last_used_at: string;
  expires_at: string;
  ip_address: string;
  user_agent: string;
}

export function sessionView(s: PersonSession): SessionView {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    session_id: s.session_id,
    person_id: s.person_id,
    methods: [...s.methods],
    clients: [...s.clients],
    created_at: iso(s.created_ms),
    last_used_at: iso(s.last_used_ms),
    expires_at: iso(s.expires_at_ms),
    ip_address: s.ip,
    user_agent: s.user_agent,
  };
}

/** Whether a session exists and has not expired: the hosted page's cookie and its grants stand only while it does. */
export function sessionActive(state: OrgState, sessionId: string, nowMs: number): boolean {
  const s = state.sessions.get(sessionId);
  return s !== undefined && s.expires_at_ms > nowMs;
}

/** The person's unexpired sessions, newest first. */
export function sessionsOf(state: OrgState, personId: string, nowMs: number): PersonSession[] {
  const out: PersonSession[] = [];
  for (const s of state.sessions.values()) if (s.person_id === personId && s.expires_at_ms > nowMs) out.push(s);
  return out.sort((a, b) => b.created_ms - a.created_ms);
}

/** The changes ending a session: its grants and identity tokens revoked, then its end with a notice per client's share. */
function ending(state: OrgState, session: PersonSession, reason: SessionEndReason, nowMs: number): Change[] {
  const changes: Change[] = [];
  const now = Math.floor(nowMs / 1000);
  for (const t of session.tokens ?? []) if (t.exp > now && !state.revoked_tokens.has(t.jti)) changes.push({ t: 'IdentityTokenRevoked', jti: t.jti, exp: t.exp, now });
  const logouts: LogoutNotice[] = [];
  for (const g of state.oauth_grants.values()) {
    if (g.session_id !== session.session_id) continue;
    if (!g.revoked) changes.push({ t: 'OAuthGrantRevoked', grant_id: g.grant_id });
    // Only clients that listen are owed a logout token; it stays owed (state) until delivered or given up.
    if (state.oauth_clients.get(g.client_id)?.backchannel_logout_uri !== undefined) logouts.push({ client_id: g.client_id, sid: g.grant_id, person_id: session.person_id });
  }
  changes.push({ t: 'SessionEnded', session_id: session.session_id, reason, logouts });
  return changes;
}

/**
 * Opening a session, in the entry of the sign-in's authorization code. Sessions past their time are dropped
 * here, and the person's oldest beyond MAX_SESSIONS_PER_PERSON end (with their grants).
 */
export function openingSession(state: OrgState, session: PersonSession, nowMs: number): Change[] {
  const changes: Change[] = [];
  const expired: string[] = [];
  const own: PersonSession[] = [];
  for (const s of state.sessions.values()) {
    if (s.expires_at_ms <= nowMs) expired.push(s.session_id);
    else if (s.person_id === session.person_id) own.push(s);
  }
  if (expired.length > 0) changes.push({ t: 'SessionsExpired', session_ids: expired });
  own.sort((a, b) => a.created_ms - b.created_ms);
  for (const s of own.slice(0, Math.max(0, own.length + 1 - MAX_SESSIONS_PER_PERSON))) changes.push(...ending(state, s, 'limit', nowMs));
  changes.push({ t: 'SessionStarted', session: { ...session, user_agent: session.user_agent.slice(0, MAX_USER_AGENT) } });
  return changes;
}

/**
 * A grant of the session was begun or its refresh token rotated: the client is among its clients, it was used
 * now, and it lasts at least as long as the grant. Nothing for a grant outside any session.
 */
export function usingSession(state: OrgState, grant: Pick<OAuthGrant, 'session_id' | 'client_id' | 'expires_at_ms'>, nowMs: number): Change[] {
  if (grant.session_id === undefined || !state.sessions.has(grant.session_id)) return [];
  return [{ t: 'SessionUsed', session_id: grant.session_id, client_id: grant.client_id, at_ms: nowMs, expires_at_ms: grant.expires_at_ms }];
}

/** Ends one session of the person; an unknown one (or another person's) is 404, so IDs are not probed. */
export function endSession(state: OrgState, personId: string, sessionId: string, reason: SessionEndReason, nowMs: number): Decision<null> {
  const session = state.sessions.get(sessionId);
  if (!session || session.person_id !== personId || session.expires_at_ms <= nowMs) throw notFound(`session ${quote(sessionId)} of person ${quote(personId)} not found`);
  return decision(null, ending(state, session, reason, nowMs));
}

/**
 * A person deleted or deactivated is signed out everywhere: the changes ending each of their sessions, put
 * before the decision's own (whose reply and events stay as they are).
 */
export function signedOut(state: OrgState, personId: string, d: Decision, nowMs: number): Decision {
  const changes: Change[] = [];
  for (const s of state.sessions.values()) if (s.person_id === personId && s.expires_at_ms > nowMs) changes.push(...ending(state, s, 'organization', nowMs));
  return changes.length === 0 ? d : { ...d, changes: [...changes, ...d.changes] };
}

/** A sign-in that hands out its own identity token (SSO) opens its session in an entry of its own. */
export function startSession(state: OrgState, session: PersonSession, nowMs: number): Decision<null> {
  return decision(null, openingSession(state, session, nowMs));
}

/**
 * Ends the session a token belongs to: the session of the grant its sid names (RP-initiated logout with an
 * id_token_hint, an ID token signing out), or the one it was handed out in (its jti). None, or another
 * person's than the token's subject, no change.
 */
export function endSessionOf(state: OrgState, of: { person_id: string; grant_id?: string; jti?: string }, nowMs: number): Decision<{ ended: string | null }> {
  const sessionId = of.grant_id === undefined ? undefined : state.oauth_grants.get(of.grant_id)?.session_id;
  let session = sessionId === undefined ? undefined : state.sessions.get(sessionId);
  if (!session && of.jti !== undefined) {
    for (const s of state.sessions.values()) if (s.tokens?.some((t) => t.jti === of.jti)) session = s;
  }
  if (!session || session.person_id !== of.person_id || session.expires_at_ms <= nowMs) return decision({ ended: null });
  return decision({ ended: session.session_id }, ending(state, session, 'logout', nowMs));
}

/** Back-channel logouts delivered or given up: no longer owed. */
export function completeLogouts(state: OrgState, sids: readonly string[]): Decision<null> {
  const done = sids.filter((sid) => state.backchannel_logouts.has(sid));
  return decision(null, done.length === 0 ? [] : [{ t: 'BackchannelLogoutsDone', sids: done }]);
}

/** apply(): a session's use. */
export function withUse(s: PersonSession, clientId: string, atMs: number, expiresAtMs: number): PersonSession {
  return {
    ...s,
    clients: s.clients.includes(clientId) ? s.clients : [...s.clients, clientId],
    last_used_ms: Math.max(s.last_used_ms, atMs),
    expires_at_ms: Math.max(s.expires_at_ms, expiresAtMs),
  };
}
