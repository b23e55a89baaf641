// Password sign-in and registration: throttling, the organization's configuration and credential checks, the
// first step in front of the issuing pipeline (issue.ts), which runs the hooks and records the outcome; one
// per attempt (AuthenticationSucceeded or AuthenticationFailed). The hosted OAuth page signs in without a token.
import { ServiceError, conflict } from '../errors.js';
import { INVALID_CREDENTIALS, SIGN_IN_DENIED } from '../domain/sign-in.js';
import { checkFactorAllowed, checkSelfRegistration, PolicyRefused } from '../domain/org-config.js';
import { checkHandle } from '../domain/rules.js';
import { handleKey, type Handle, type Person } from '../domain/state.js';
import { rfc3339Nanos } from '../lib/time-text.js';
import type { Clock } from '../lib/clock.js';
import { checkPasswordPolicy, needsRehash, type PasswordHasher } from './password-hash.js';
import type { Limiter } from './throttle.js';
import type { Consistency, IssuePipeline, IssuingOrg, SignInIssue } from './issue.js';
import { AwaitingApproval, type SignedIn } from './verify.js';

const METHOD = 'password' as const;

export interface SignInDeps {
  clock: Clock;
  passwords: PasswordHasher;
  /** failures per handle (sign-in only) and per client IP (sign-in and registration), per organization */
  throttle: { handle: Limiter; ip: Limiter };
  pipeline: Pick<IssuePipeline, 'issue' | 'verify' | 'refuse'>;
  /** where self-registered persons live: the local region */
  region: string;
  newPersonId(): string;
}

export interface SignInAttempt {
  org: IssuingOrg;
  handle: Handle;
  password: string;
  ip: string;
  origin: string;
  userAgent: string;
  /** what the answer waits for, recorded failures included */
  consistency: Consistency;
  /**
   * the live anonymous person of this organization whose token the caller sent: registration upgrades it,
   * sign-in deletes it; both name it in the token and TokenMinted (see src/browser/anonymous.ts)
   */
  anonymous_person_id?: string | undefined;
  /** Service-Analytics-Correlation-ID: the browser SDK's correlation id, copied into the attempt's events */
  analytics_correlation_id?: string | undefined;
}

/** A registration's outcome: the person's token, or no token while the organization must approve them first. */
export type Registration = { token: string } | { awaiting_approval: true; person_id: string };

/** One attempt counted ahead as a failure, until it is known to be none. */
interface Reservation {
  releaseHandle(): void;
  releaseIp(): void;
}

/** A password proven against a hash to replace: the replacement and the hash it replaces. */
type Rehash = SignInIssue['rehash'];

export interface SignInService {
  /** The person's identity token. */
  authenticate(a: SignInAttempt): Promise<string>;
  /** The same sign-in, recorded without a token: the hosted OAuth page, whose client gets its own tokens later. */
  verify(a: SignInAttempt): Promise<SignedIn>;
  register(a: SignInAttempt): Promise<Registration>;
}

export function createSignIn(deps: SignInDeps): SignInService {
  const keys = (a: SignInAttempt) => ({ handle: `${a.org.id}\n${handleKey(a.handle)}`, ip: `${a.org.id}\n${a.ip}` });

  /**
   * Refuses a throttled attempt, else counts it as a failure before any work: checked and counted in one
   * tick, so concurrent attempts cannot all pass the check while the first hashes run. The caller releases
   * the reservation when the attempt turns out not to be a failure that counts.
   */
  function reserve(a: SignInAttempt, byHandle: boolean): Reservation {
    const now = deps.clock.nowMs();
    const k = keys(a);
    const wait = Math.max(byHandle ? deps.throttle.handle.retryAfterMs(k.handle, now) : 0, deps.throttle.ip.retryAfterMs(k.ip, now));
    if (wait > 0) {
      throw new ServiceError('ERR_TOO_MANY_REQUESTS', 'too many failed attempts; retry later', { headers: { 'Retry-After': String(Math.max(1, Math.ceil(wait / 1000))) } });
    }
    deps.throttle.ip.fail(k.ip, now);
    if (byHandle) deps.throttle.handle.fail(k.handle, now);
    return {
      releaseHandle: () => {
        if (byHandle) deps.throttle.handle.release(k.handle, now);
      },
      releaseIp: () => deps.throttle.ip.release(k.ip, now),
    };
  }

  async function recordFailure(a: SignInAttempt, failure_reason: string, failure_detail: string, personId?: string): Promise<void> {
    const failure = {
      handle: a.handle,
      method: METHOD,
      client_ip_address: a.ip,
      ...(a.analytics_correlation_id !== undefined && { analytics_correlation_id: a.analytics_correlation_id }),
      failure_reason,
      failure_detail,
      ...(personId !== undefined && { person_id: personId }),
    };
    await deps.pipeline.refuse(a.org, a.consistency, failure);
  }

  /**
   * The organization's configuration refuses the attempt before any credential is read: recorded with the
   * refusal's failure_reason, counted against the client IP only (it says nothing about the handle).
   */
  async function refuseByPolicy(a: SignInAttempt, reserved: Reservation, check: () => void): Promise<void> {
    try {
      check();
    } catch (error) {
      if (!(error instanceof PolicyRefused)) throw error;
      reserved.releaseHandle();
      await recordFailure(a, error.failure_reason, error.message);
      throw error;
    }
  }

  /** The rest is the issuing pipeline's: hooks, claims, signature, record; registration creates the person in the same entry. */
  async function issue(a: SignInAttempt, person: Person, password_hash?: Promise<string>, upgrade?: true, rehash?: Rehash): Promise<string> {
    const issued = await deps.pipeline.issue(a.org, request(a, person, password_hash, upgrade, rehash));
    return issued.token;
  }

  /** The attempt as the pipeline takes it, for a token (issue) or without one (verify). */
  function request(a: SignInAttempt, person: Person, password_hash?: Promise<string>, upgrade?: true, rehash?: Rehash): SignInIssue {
    return {
      method: METHOD,
      person,
      handle: a.handle,
      authentications: [{ handle: a.handle, method: METHOD, timestamp: rfc3339Nanos(deps.clock.nowNs()) }],
      request_metadata: { client_ip_address: a.ip, origin: a.origin, user_agent: a.userAgent },
      consistency: a.consistency,
      registration: password_hash === undefined ? undefined : { password_hash, ...(upgrade && { upgrade }) },
      rehash,
      prev_anonymous_person_id: a.anonymous_person_id,
      analytics_correlation_id: a.analytics_correlation_id,
    };
  }

  /**
   * The password's own checks, each failure recorded: the person whose password it is, still active, and the
   * replacement of an imported hash (or an older cost), which lives until the password is first proven.
   */
  async function checkPassword(a: SignInAttempt): Promise<{ person: Person; rehash: Rehash }> {
    const reserved = reserve(a, true);
    await refuseByPolicy(a, reserved, () => checkFactorAllowed(a.org.state.config, METHOD));
    const id = a.org.state.handles.get(handleKey(a.handle));
    const found = id === undefined ? undefined : a.org.state.persons.get(id);
    const stored = found?.password_hash;
    const ok = await deps.passwords.verify(a.password, stored);
    if (!ok) {
      const detail = !found ? 'unknown handle' : found.password_hash === undefined ? 'the person has no password' : 'wrong password';
      await recordFailure(a, 'invalid_credentials', detail);
      throw new ServiceError('ERR_UNAUTHORIZED', INVALID_CREDENTIALS);
    }
    deps.throttle.handle.reset(keys(a).handle);
    reserved.releaseIp();
    // Read again: the state may have moved on while the hash was computed.
    const person = a.org.state.persons.get((found as Person).person_id);
    if (!person || !person.active) {
      await recordFailure(a, 'person_not_active', person ? 'the person is not active' : 'the person was deleted', (found as Person).person_id);
      throw new ServiceError('ERR_UNAUTHORIZED', SIGN_IN_DENIED);
    }
    const rehash = stored !== undefined && needsRehash(stored) ? { password_hash: deps.passwords.hash(a.password), replaces: stored } : undefined;
    return { person, rehash };
  }

  return {
    async authenticate(a) {
      const { person, rehash } = await checkPassword(a);
      return issue(a, person, undefined, undefined, rehash);
    },
    async verify(a) {
      const { person, rehash } = await checkPassword(a);
      return deps.pipeline.verify(a.org, request(a, person, undefined, undefined, rehash));
    },

    async register(a) {
      checkHandle(a.handle, 'handle');
      checkPasswordPolicy(a.password);
      const reserved = reserve(a, false);
      // Before the handle is looked up: a refused registration does not say whether the handle exists.
      await refuseByPolicy(a, reserved, () => checkSelfRegistration(a.org.state.config, METHOD, a.handle));
      if (a.org.state.handles.has(handleKey(a.handle))) {
        await recordFailure(a, 'handle_already_registered', 'a person with this handle exists');
        throw conflict(`a person with handle ${a.handle.type} "${a.handle.value}" already exists`);
      }
      // Past the checks, nothing the registration meets is a failure the client IP is throttled for.
      reserved.releaseIp();
      const held = a.anonymous_person_id === undefined ? undefined : a.org.state.persons.get(a.anonymous_person_id);
      // An organization that approves new persons by hand approves an anonymous person's registration too: it
      // registers a new, inactive person as without the token (SSO does the same), and the anonymous one stays.
      if (held !== undefined && held.person_type === 'anonymous' && !a.org.state.config.requires_manual_approval) {
        // The anonymous person itself registers: the hooks see it as it will be, regular with the handle.
        const upgraded: Person = { ...held, person_type: 'regular', handles: [...held.handles, { type: a.handle.type, value: a.handle.value }] };
        delete upgraded.anonymous_expires_ms;
        return { token: await issue(a, upgraded, deps.passwords.hash(a.password), true) };
      }
      const person: Person = {
        person_id: deps.newPersonId(),
        active: true,
        person_type: 'regular',
        region: deps.region,
        handles: [{ type: a.handle.type, value: a.handle.value }],
        groups: [],
        attributes: {},
        gdpr_consents: [],
        created: new Date(deps.clock.nowMs()).toISOString(),
      };
      try {
        return { token: await issue(a, person, deps.passwords.hash(a.password)) };
      } catch (error) {
        if (error instanceof AwaitingApproval) return { awaiting_approval: true, person_id: error.person_id };
        throw error;
      }
    },
  };
}
