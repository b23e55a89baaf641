// One-time codes and links sent to a person's email address or phone number (otp_via_email, email_link,
// otp_via_sms, sms_link): the edge makes the value and sends it, the state keeps only its SHA-256 beside the
// direct-id values (the same store: unexpired, single-use, redeemed by the entry recording the sign-in),
// marked with its method so that no method redeems another's value.
import { badRequest, ServiceError } from '../errors.js';
import type { Change } from './changes.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import { MAX_DIRECT_IDS } from './direct-id.js';
import { requirePerson } from './lookup.js';
import type { OrgState } from './state.js';

export const ONE_TIME_METHODS = ['otp_via_email', 'email_link', 'otp_via_sms', 'sms_link'] as const;
export type OneTimeMethod = (typeof ONE_TIME_METHODS)[number];

/** the longest a code or link may live: short, it travels in the clear */
export const MAX_ONE_TIME_SECS = 3600;
/** the one answer to an unknown, used, expired or wrong code, so none can be told from the others */
export const ONE_TIME_REFUSED = 'the code or link is not valid: wrong, already used or expired';

export interface IssueOneTimeCode {
  person_id: string;
  method: OneTimeMethod;
  /** the SHA-256 (hex) of the value the person receives (for a code: with the browser's ticket) */
  hash: string;
  /** the SHA-256 (hex) of the browser's ticket nonce: a link opened elsewhere asks for confirmation */
  ticket: string;
  ttl_secs: number;
}

export function issueOneTimeCode(state: OrgState, input: IssueOneTimeCode, ctx: DecideContext): Decision<null> {
  if (!Number.isInteger(input.ttl_secs) || input.ttl_secs < 1 || input.ttl_secs > MAX_ONE_TIME_SECS) {
    throw badRequest(`ttl_secs: must be an integer from 1 to ${MAX_ONE_TIME_SECS}, got ${input.ttl_secs}`);
  }
  const person = requirePerson(state, input.person_id);
  if (!person.active) throw badRequest(`person ${input.person_id} is not active`);
  const expired = [...state.direct_ids].filter(([, d]) => d.expires_at_ms <= ctx.nowMs).map(([hash]) => hash);
  if (state.direct_ids.size - expired.length >= MAX_DIRECT_IDS) {
    throw new ServiceError('ERR_TOO_MANY_REQUESTS', `more than ${MAX_DIRECT_IDS} one-time values are outstanding; retry once some are used or expire`);
  }
  const direct_id = { person_id: input.person_id, expires_at_ms: ctx.nowMs + input.ttl_secs * 1000, method: input.method, ticket: input.ticket };
  return decision(null, [{ t: 'DirectIdIssued', hash: input.hash, direct_id, expired }]);
}

/** The live value of a method by its hash, or undefined (unknown, used, expired or another method's). */
export function oneTimeValue(state: OrgState, method: OneTimeMethod, hash: string, nowMs: number): { person_id: string; ticket?: string | undefined } | undefined {
  const d = state.direct_ids.get(hash);
  return d !== undefined && d.method === method && d.expires_at_ms > nowMs ? d : undefined;
}

/** The proof checker of a method: the value still live for the person, used up by the entry recording the sign-in. */
export function oneTimeProofCheck(method: OneTimeMethod) {
  return (state: OrgState, proof: { one_time_value?: string }, person_id: string, ctx: DecideContext): Change[] => {
    const hash = proof.one_time_value;
    if (hash === undefined || oneTimeValue(state, method, hash, ctx.nowMs)?.person_id !== person_id) throw new ServiceError('ERR_UNAUTHORIZED', ONE_TIME_REFUSED);
    return [{ t: 'DirectIdRedeemed', hash }];
  };
}
