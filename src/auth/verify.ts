// Verifying a sign-in whose credentials a method has checked: the token_minted hooks, which may deny it or add
// claims, and the AuthenticationFailed of every later refusal. The first of a sign-in's two steps: what it
// establishes is then issued a token in the same entry (issue.ts), or recorded alone by a page that only signs
// a person in (the hosted page of the OAuth authorization endpoint), so no token is signed that nobody gets.
import { ServiceError } from '../errors.js';
import { AWAITING_APPROVAL } from '../domain/admission.js';
import type { Authentication, AuthenticationDetails, AuthenticationFailure, SignInRecord } from '../domain/commands.js';
import { DIRECT_ID_REFUSED } from '../domain/direct-id.js';
import { groupsClaimName, PolicyRefused } from '../domain/org-config.js';
import { authenticationDetails, SIGN_IN_DENIED } from '../domain/sign-in.js';
import type { Handle, Person } from '../domain/state.js';
import { admitCustomClaims } from '../tokens/claims.js';
import type { SyncHooks } from '../webhooks/sync-hook.js';
import type { ConsistencyWaiter } from '../regions/consistency.js';
import type { Consistency, IssuingOrg } from './issue.js';

/** A method by which a person proves who they are: it runs the token_minted hooks and is recorded as a sign-in. */
export type AuthenticationMethod = 'password' | 'oidc' | 'direct_id';

/** A sign-in whose credentials its method verified, as the hooks and the entry that records it are told. */
export interface SignInRequest {
  method: AuthenticationMethod;
  /** the person whose credentials were verified, or the one a registration creates */
  person: Person;
  /** the handle the person signed in with */
  handle: Handle;
  /** the sign-in's steps, as the hooks and the events are told them */
  authentications: Authentication[];
  /** the seed's request_metadata of the hooks' trigger_content */
  request_metadata: { client_ip_address: string; origin: string; user_agent: string };
  /** what the answer waits for, recorded refusals included */
  consistency: Consistency;
  /**
   * a registration: the entry that records the sign-in creates the person, with this password hash (computed
   * while the hooks run; none for SSO) and these groups
   */
  registration?: { password_hash?: Promise<string>; groups?: string[]; upgrade?: true } | undefined;
  /** a password sign-in against a hash to replace: the replacement (computed while the hooks run) and the hash it replaces */
  rehash?: { password_hash: Promise<string>; replaces: string } | undefined;
  /** a direct-id sign-in: the SHA-256 (hex) of the value, used up by the entry that records the sign-in */
  direct_id?: string | undefined;
  /**
   * the anonymous person whose token the caller held: the token and TokenMinted name it; a registration
   * upgrades it (registration.upgrade, `person` is that person), a sign-in to another person deletes it
   */
  prev_anonymous_person_id?: string | undefined;
  /** the browser SDK's correlation id, copied into the attempt's events */
  analytics_correlation_id?: string | undefined;
}

/** What verifying established: what the entry records of the sign-in, and what a token of it carries. */
export interface VerifiedSignIn {
  readonly request: SignInRequest;
  /** the organization's groups claim name as the hooks were told it: the token carries the same */
  readonly groups_claim_name: string;
  /** the hooks' claims, reserved names dropped */
  readonly custom_claims: Record<string, unknown>;
  /** the entry's record of the sign-in, a registration's password hash computed */
  readonly sign_in: SignInRecord;
  /** the sign-in's steps as AuthenticationSucceeded and TokenMinted carry them */
  readonly authentications: AuthenticationDetails[];
}

/** A sign-in recorded without a token: who signed in, how, and what the hooks added, for what follows (an OAuth code). */
export interface SignedIn {
  person_id: string;
  authentications: AuthenticationDetails[];
  /** the hooks' claims, reserved names dropped */
  custom_claims: Record<string, unknown>;
}

/**
 * A registration recorded while the organization requires manual approval: the person exists, inactive,
 * and no token was issued (the entry's AuthenticationFailed says awaiting_approval). A 403 to callers that
 * do not look further; password registration answers 202.
 */
export class AwaitingApproval extends ServiceError {
  readonly person_id: string;
  constructor(person_id: string) {
    super('ERR_FORBIDDEN', "the person was registered and awaits the organization's approval before they can sign in");
    this.person_id = person_id;
  }
}

export interface SignInVerifier {
  /**
   * Runs the hooks: a denial is a 401, a failure a 502, each recorded as AuthenticationFailed. Records
   * nothing on success: the sign-in counts only with the entry that records it (issue, or record).
   */
  verify(org: IssuingOrg, r: SignInRequest): Promise<VerifiedSignIn>;
  /**
   * The entry that was to record the sign-in refused it: the configuration changed while the hooks ran (403,
   * PolicyRefused), the person was deactivated or deleted (401), the handle registered meanwhile (409).
   * Records AuthenticationFailed for those and throws the error again.
   */
  refused(org: IssuingOrg, v: VerifiedSignIn, error: unknown): Promise<never>;
  /** Records the sign-in alone (AuthenticationSucceeded, no token) and waits for the consistency asked for. */
  record(org: IssuingOrg, v: VerifiedSignIn): Promise<SignedIn>;
  /** Records a failed sign-in attempt (AuthenticationFailed) and waits for the consistency asked for. */
  refuse(org: IssuingOrg, consistency: Consistency, failure: AuthenticationFailure): Promise<void>;
}

export interface VerifierDeps {
  hooks: SyncHooks;
  consistency: ConsistencyWaiter;
  /** the issuer URL the hooks are told */
  issuer(): string;
  /** whether the person has a token, recorded or only signed: the hooks are told first_token */
  previousToken(org: IssuingOrg, personId: string): string | undefined;
}

/** A sign-in refused after its credentials were verified. */
function failure(r: SignInRequest, failure_reason: string, failure_detail: string): AuthenticationFailure {
  return {
    handle: r.handle,
    method: r.method,
    client_ip_address: r.request_metadata.client_ip_address,
    ...(r.analytics_correlation_id !== undefined && { analytics_correlation_id: r.analytics_correlation_id }),
    failure_reason,
    failure_detail,
    person_id: r.person.person_id,
  };
}

export function createSignInVerifier(deps: VerifierDeps): SignInVerifier {
  const { hooks, consistency: waiter } = deps;

  async function refuse(org: IssuingOrg, consistency: Consistency, failure: AuthenticationFailure): Promise<void> {
    const outcome = await org.execute({ kind: 'RecordAuthenticationFailure', failure });
    await waiter.wait(org.id, outcome.offset, consistency);
  }

  async function verify(org: IssuingOrg, r: SignInRequest): Promise<VerifiedSignIn> {
    const state = org.state;
    const { person } = r;
    // Read once, before the hooks: the token carries the name the hooks were told and filtered their claims by.
    const groups = groupsClaimName(state.config);
    const content = {
      aud: state.id,
      sub: person.person_id,
      iss: deps.issuer(),
      authentications: r.authentications,
      // What the hooks are told: whether a token of the person exists, recorded or only signed, as they start.
      first_token: deps.previousToken(org, person.person_id) === undefined,
      groups_claim_name: groups,
      region: person.region,
      request_metadata: r.request_metadata,
    };
    // A registration's password, or a sign-in's re-hashed one, is hashed while the hooks are called.
    const [hook, passwordHash, rehash] = await Promise.all([hooks.tokenMinted(state, content), r.registration?.password_hash, r.rehash?.password_hash]);
    if (hook.kind === 'denied') {
      await refuse(org, r.consistency, failure(r, 'hook_denied', hook.detail));
      throw new ServiceError('ERR_UNAUTHORIZED', SIGN_IN_DENIED);
    }
    if (hook.kind === 'failed') {
      await refuse(org, r.consistency, failure(r, 'hook_failed', hook.detail));
      throw new ServiceError('ERR_BAD_GATEWAY', 'a token_minted webhook of this organization failed; no token was issued');
    }
    const sign_in: SignInRecord = { handle: r.handle, method: r.method, client_ip_address: r.request_metadata.client_ip_address };
    if (r.direct_id !== undefined) sign_in.direct_id = r.direct_id;
    if (r.analytics_correlation_id !== undefined) sign_in.analytics_correlation_id = r.analytics_correlation_id;
    if (r.rehash !== undefined && rehash !== undefined) sign_in.rehash = { password_hash: rehash, replaces: r.rehash.replaces };
    if (r.registration) {
      sign_in.registration = {
        region: person.region,
        ...(passwordHash !== undefined && { password_hash: passwordHash }),
        ...(r.registration.groups && { groups: r.registration.groups }),
        ...(r.registration.upgrade && { upgrade: true as const }),
      };
    }
    return { request: r, groups_claim_name: groups, custom_claims: admitCustomClaims(hook.claims, 'hook', groups), sign_in, authentications: authenticationDetails(r.authentications) };
  }

  async function refused(org: IssuingOrg, v: VerifiedSignIn, error: unknown): Promise<never> {
    const r = v.request;
    if (error instanceof PolicyRefused) await refuse(org, r.consistency, failure(r, error.failure_reason, error.message));
    else if (error instanceof ServiceError && (error.status === 401 || error.status === 409)) {
      const reason = error.status === 409 ? 'handle_already_registered' : error.message === DIRECT_ID_REFUSED ? 'invalid_credentials' : 'person_not_active';
      await refuse(org, r.consistency, failure(r, reason, error.message));
    }
    throw error;
  }

  async function record(org: IssuingOrg, v: VerifiedSignIn): Promise<SignedIn> {
    const r = v.request;
    const person_id = r.person.person_id;
    let outcome: { readonly offset: number; readonly reply?: unknown };
    try {
      outcome = await org.execute({
        kind: 'RecordSignIn',
        entry: { person_id, authentications: v.authentications, ...(r.prev_anonymous_person_id !== undefined && { prev_anonymous_person_id: r.prev_anonymous_person_id }), sign_in: v.sign_in },
      });
    } catch (error) {
      return refused(org, v, error);
    }
    await waiter.wait(org.id, outcome.offset, r.consistency);
    if (outcome.reply === AWAITING_APPROVAL) throw new AwaitingApproval(person_id);
    return { person_id, authentications: v.authentications, custom_claims: v.custom_claims };
  }

  return { verify, refused, record, refuse };
}
