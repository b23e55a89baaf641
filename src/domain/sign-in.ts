// Decisions about what a sign-in records: a failed attempt. A successful one is admitted by admission.ts and
// recorded with its token (tokens.ts) or alone.
import type { Attempt, AuthenticationDetails, Authentication, AuthenticationFailure } from './commands.js';
import { decision, type DecideContext, type Decision, type EventDraft } from './decision.js';
import { handleTypeEnum } from './rules.js';
import type { Handle, OrgState } from './state.js';

/** The one answer to an unknown handle and to a wrong password, so neither can be told from the other. */
export const INVALID_CREDENTIALS = 'the handle or password is not correct';
/** Credentials were right, but the person may not sign in (inactive, or a token_minted hook said no). */
export const SIGN_IN_DENIED = 'authentication was denied';

/** A handle as events carry it (PersonHandle: the type as the enum names it). */
export const personHandle = (h: Handle) => ({ type: handleTypeEnum(h.type), value: h.value });

/** A sign-in's steps as TokenMinted carries them (the seed's AuthenticationDetails). */
export function authenticationDetails(authentications: readonly Authentication[]): AuthenticationDetails[] {
  return authentications.map((a) => ({ timestamp: a.timestamp, method: a.method, handle: personHandle(a.handle) }));
}

/** The analytics_metadata of an attempt's events. */
export function analytics(attempt: Pick<Attempt, 'client_ip_address' | 'analytics_correlation_id'>, ctx: DecideContext) {
  return { analytics_correlation_id: attempt.analytics_correlation_id ?? ctx.uuid(), client_ip_address: attempt.client_ip_address };
}

export function recordAuthenticationFailure(state: OrgState, f: AuthenticationFailure, ctx: DecideContext): Decision<null> {
  const person = f.person_id === undefined ? undefined : state.persons.get(f.person_id);
  const event: EventDraft = {
    name: 'AuthenticationFailed_v1',
    body: {
      analytics_metadata: analytics(f, ctx),
      ...(person && { person_id: person.person_id, region: person.region, authenticated_methods: [f.method] }),
      failed_authn_method: f.method,
      failure_reason: f.failure_reason,
      failure_detail: f.failure_detail,
      ...(f.handle && { handle: personHandle(f.handle) }),
    },
  };
  return decision(null, [], [event]);
}
