// Decisions about direct-id values: one-time sign-in values an organization issues for a person
// (POST /persons/{id}/direct-id), redeemed once at the end-user sign-in, by the entry that records its token.
import { badRequest, ServiceError } from '../errors.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import { requirePerson } from './lookup.js';
import type { OrgState } from './state.js';

/** the longest a direct-id may live: a day (the original names no bound) */
export const MAX_DIRECT_ID_SECS = 86_400;
/** unexpired values an organization holds at most; the next is refused until some expire or are used */
export const MAX_DIRECT_IDS = 100_000;
/** the one answer to an unknown, used or expired value, so none can be told from the others */
export const DIRECT_ID_REFUSED = 'the direct-id is not valid: unknown, already used or expired';

/**
 * A fresh value, replied once: the state and the WAL hold only its SHA-256. Values past their time are
 * dropped by the same entry, so the map holds only live ones (and those since the last issue).
 */
export function issueDirectId(state: OrgState, personId: string, durationSecs: number, ctx: DecideContext): Decision<string> {
  if (!Number.isInteger(durationSecs) || durationSecs < 1 || durationSecs > MAX_DIRECT_ID_SECS) {
    throw badRequest(`duration_secs: must be an integer from 1 to ${MAX_DIRECT_ID_SECS}, got ${durationSecs}`);
  }
  const person = requirePerson(state, personId);
  if (!person.active) throw badRequest(`person ${personId} is not active`);
  if (person.handles.length === 0) throw badRequest(`person ${personId} has no handle to sign in with`);
  const expired = [...state.direct_ids].filter(([, d]) => d.expires_at_ms <= ctx.nowMs).map(([hash]) => hash);
  if (state.direct_ids.size - expired.length >= MAX_DIRECT_IDS) {
    throw new ServiceError('ERR_TOO_MANY_REQUESTS', `more than ${MAX_DIRECT_IDS} direct-ids are outstanding; retry once some are used or expire`);
  }
  const value = ctx.secret();
  const hash = ctx.hashKey(value);
  return decision(value, [{ t: 'DirectIdIssued', hash, direct_id: { person_id: personId, expires_at_ms: ctx.nowMs + durationSecs * 1000 }, expired }]);
}

/** The person a value signs in, if it is live now; undefined for an unknown, used or expired one. */
export function directIdPerson(state: OrgState, hash: string, nowMs: number): string | undefined {
  const d = state.direct_ids.get(hash);
  // a one-time code's entry is its own method's, never a direct-id
  return d !== undefined && d.method === undefined && d.expires_at_ms > nowMs ? d.person_id : undefined;
}

/** Checked again where the token is recorded: a value used meanwhile by another request never signs in twice. */
export function checkDirectIdRedeemable(state: OrgState, hash: string, personId: string, nowMs: number): void {
  if (directIdPerson(state, hash, nowMs) !== personId) throw new ServiceError('ERR_UNAUTHORIZED', DIRECT_ID_REFUSED);
}
