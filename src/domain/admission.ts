// Admitting a verified sign-in: the organization's configuration as it is now, the person (registered, an
// anonymous one upgraded, or found still active), a direct-id used up, and AuthenticationSucceeded. An entry
// records it with the token it ends (tokens.ts) or alone, for a page that signs a person in without a token
// (the hosted page of the OAuth authorization endpoint).
import { ServiceError } from '../errors.js';
import { discardAnonymous, upgradeAnonymous } from './anonymous.js';
import type { Change } from './changes.js';
import type { SignInEntry, SignInRecord, SignInSubject } from './commands.js';
import { decision, type DecideContext, type Decision, type EventDraft } from './decision.js';
import { checkDirectIdRedeemable } from './direct-id.js';
import { checkFactorAllowed, checkSelfRegistration, newPersonActive } from './org-config.js';
import { createPerson } from './persons.js';
import { analytics, personHandle, SIGN_IN_DENIED } from './sign-in.js';
import type { HandleVerification, OrgState, Person } from './state.js';

/** The reply to a registration whose person awaits the organization's approval: no token was recorded. */
export const AWAITING_APPROVAL = 'awaiting_approval';
/** The reply when the sign-in (and its token, if any) was recorded. */
export const RECORDED = 'recorded';
export type RecordTokenReply = typeof RECORDED | typeof AWAITING_APPROVAL;

/**
 * How a registration's handle is verified by its method: an SSO provider vouched for the address; a password
 * registration proves nothing about it.
 */
function verifiedBy(method: string, ctx: DecideContext): HandleVerification | null {
  return method === 'oidc' ? { method: 'oidc', at: new Date(ctx.nowMs).toISOString() } : null;
}

/** What an entry records of an admitted sign-in; the token's record and the anonymous person's discard follow. */
export type Admission =
  | { admitted: true; changes: Change[]; events: EventDraft[]; person_type: Person['person_type']; analytics_metadata: ReturnType<typeof analytics> }
  /** registered inactive: the organization approves new persons by hand (AuthenticationFailed awaiting_approval) */
  | { admitted: false; changes: Change[]; events: EventDraft[] };

/**
 * The sign-in was verified before this command was decided; it counts only if this decision commits. The
 * configuration is checked again as it is now (it may have changed while the hooks ran): a method or a
 * registration it no longer allows is a 403 (PolicyRefused). A person deleted or deactivated meanwhile is a
 * 401, a registration whose handle was taken meanwhile a 409; nothing changes.
 */
export function admitSignIn(state: OrgState, entry: SignInSubject, signIn: SignInRecord, ctx: DecideContext): Admission {
  if (signIn.registration) checkSelfRegistration(state.config, signIn.method, signIn.handle);
  else checkFactorAllowed(state.config, signIn.method);
  const analytics_metadata = analytics(signIn, ctx);
  const changes: Change[] = [];
  const events: EventDraft[] = [];
  let person: Pick<Person, 'region' | 'person_type'>;
  if (signIn.registration?.upgrade) {
    // The anonymous person the caller held registers: the same person, now regular, with the handle and password.
    const upgraded = upgradeAnonymous(state, entry.person_id, signIn.handle, analytics_metadata, verifiedBy(signIn.method, ctx));
    changes.push(...upgraded.changes);
    if (signIn.registration.password_hash !== undefined) changes.push({ t: 'PersonPasswordSet', person_id: entry.person_id, password_hash: signIn.registration.password_hash });
    events.push(...upgraded.events);
    person = { region: (state.persons.get(entry.person_id) as Person).region, person_type: 'regular' };
  } else if (signIn.registration) {
    const { region, password_hash, groups } = signIn.registration;
    const active = newPersonActive(state.config);
    const created = createPerson(state, { handles: [signIn.handle], region, active, ...(groups && { groups }) }, ctx, {
      person_id: entry.person_id,
      analytics_metadata,
      verified_by: verifiedBy(signIn.method, ctx)?.method ?? null,
    });
    changes.push(...created.changes);
    // SSO registers without a password.
    if (password_hash !== undefined) changes.push({ t: 'PersonPasswordSet', person_id: entry.person_id, password_hash });
    events.push(...created.events);
    if (!active) {
      events.push({
        name: 'AuthenticationFailed_v1',
        body: {
          analytics_metadata,
          person_id: entry.person_id,
          region,
          authenticated_methods: [signIn.method],
          failed_authn_method: signIn.method,
          failure_reason: AWAITING_APPROVAL,
          failure_detail: 'the person was registered inactive: the organization requires manual approval',
          handle: personHandle(signIn.handle),
        },
      });
      return { admitted: false, changes, events };
    }
    person = { region, person_type: 'regular' };
  } else {
    // The person was read before the hooks ran; deleted or deactivated since, the sign-in must not count.
    const found = state.persons.get(entry.person_id);
    if (!found || !found.active) throw new ServiceError('ERR_UNAUTHORIZED', SIGN_IN_DENIED);
    person = found;
    // A direct-id is used up by the entry that records its sign-in, so two requests with one value get one token.
    if (signIn.direct_id !== undefined) {
      checkDirectIdRedeemable(state, signIn.direct_id, found.person_id, ctx.nowMs);
      changes.push({ t: 'DirectIdRedeemed', hash: signIn.direct_id });
    }
    // The same password in the service's own form: the credential (and its ID) stays, so no PasswordChanged.
    if (signIn.rehash !== undefined && found.password_hash === signIn.rehash.replaces) {
      const credential_id = found.password_credential_id;
      changes.push({ t: 'PersonPasswordSet', person_id: found.person_id, password_hash: signIn.rehash.password_hash, ...(credential_id !== undefined && { credential_id }) });
    }
  }
  events.push({
    name: 'AuthenticationSucceeded_v1',
    body: {
      analytics_metadata,
      person_id: entry.person_id,
      region: person.region,
      success_authn_method: signIn.method,
      authenticated_methods: entry.authentications.map((a) => a.method),
      handle: personHandle(signIn.handle),
    },
  });
  return { admitted: true, changes, events, person_type: person.person_type, analytics_metadata };
}

/** The anonymous person the caller held is deleted by a sign-in to another person (a registration upgraded it). */
export function leaveAnonymous(state: OrgState, entry: SignInSubject, signIn: SignInRecord, changes: Change[], events: EventDraft[]): void {
  if (entry.prev_anonymous_person_id === undefined || signIn.registration) return;
  const discarded = discardAnonymous(state, entry.prev_anonymous_person_id, entry.person_id);
  changes.push(...discarded.changes);
  events.push(...discarded.events);
}

/** A sign-in that ends without a token: AuthenticationSucceeded alone (with the person, for a registration). */
export function recordSignIn(state: OrgState, entry: SignInEntry, ctx: DecideContext): Decision<RecordTokenReply> {
  const admission = admitSignIn(state, entry, entry.sign_in, ctx);
  if (!admission.admitted) return decision(AWAITING_APPROVAL, admission.changes, admission.events);
  leaveAnonymous(state, entry, entry.sign_in, admission.changes, admission.events);
  return decision(RECORDED, admission.changes, admission.events);
}
