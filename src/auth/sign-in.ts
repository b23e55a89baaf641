// Password sign-in and registration: throttling, the organization's configuration and credential checks, the
// first step in front of the issuing pipeline (issue.ts), which runs the hooks and records the outcome; one
// per attempt (AuthenticationSucceeded or AuthenticationFailed). The hosted OAuth page signs in without a token.
import { ServiceError, conflict } from '../errors.js';
import { INVALID_CREDENTIALS } from '../domain/sign-in.js';
import { PolicyRefused } from '../domain/org-config.js';
import { checkHandle } from '../domain/rules.js';
import { handleKey, type Handle, type Person } from '../domain/state.js';
import type { Clock } from '../lib/clock.js';
import type { Sealer } from '../lib/signed.js';
import { createAdmission, type Admitted, type SignInContext, type SecondFactorRequired, type SignInOutcome } from './admission.js';
import { checkPasswordPolicy, needsRehash, type PasswordHasher } from './password-hash.js';
import type { Limiter } from './throttle.js';
import type { IssuePipeline } from './issue.js';
import { AwaitingApproval, type SignedIn } from './verify.js';

const METHOD = 'password' as const;

export interface SignInDeps {
  clock: Clock;
  passwords: PasswordHasher;
  /** failures per handle (sign-in only) and per client IP (sign-in and registration), per organization */
  throttle: { handle: Limiter; ip: Limiter };
  pipeline: Pick<IssuePipeline, 'issue' | 'verify' | 'refuse'>;
  /** signs the challenge a person who holds a second factor answers */
  challenges: Sealer;
  /** where self-registered persons live: the local region */
  region: string;
  newPersonId(): string;
}

export interface SignInAttempt extends SignInContext {
  handle: Handle;
  password: string;
}

/** A registration's outcome: the person's token, or no token while the organization must approve them first. */
export type Registration = { token: string } | { awaiting_approval: true; person_id: string };

/** One attempt counted ahead as a failure, until it is known to be none. */
interface Reservation {
  releaseHandle(): void;
  releaseIp(): void;
}

export interface SignInService {
  /** The person's identity token, or a challenge for a person who holds a second factor. */
  authenticate(a: SignInAttempt): Promise<SignInOutcome>;
  /**
   * The same sign-in, recorded without a token: the hosted OAuth pages, whose client gets its own tokens later;
   * a challenge instead for a person who holds one of the second factors the page can ask for (`answerable`).
   */
  verify(a: SignInAttempt, answerable?: readonly string[]): Promise<SignedIn | { second_factor: SecondFactorRequired }>;
  register(a: SignInAttempt): Promise<Registration>;
}

export function createSignIn(deps: SignInDeps): SignInService {
  const admission = createAdmission(deps);
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

  /**
   * The organization's configuration refuses the attempt before any credential is read: recorded with the
   * refusal's failure_reason, counted against the client IP only (it says nothing about the handle).
   */
  async function refuseByPolicy(a: SignInAttempt, reserved: Reservation, register: boolean): Promise<void> {
    try {
      await admission.policy(a, METHOD, a.handle, { register });
    } catch (error) {
      if (error instanceof PolicyRefused) reserved.releaseHandle();
      throw error;
    }
  }

  /**
   * The password's own checks, each failure recorded: the person whose password it is, still active, and the
   * replacement of an imported hash (or an older cost), which lives until the password is first proven.
   */
  async function checkPassword(a: SignInAttempt): Promise<Admitted> {
    const reserved = reserve(a, true);
    await refuseByPolicy(a, reserved, false);
    const id = a.org.state.handles.get(handleKey(a.handle));
    const found = id === undefined ? undefined : a.org.state.persons.get(id);
    const stored = found?.password_hash;
    const ok = await deps.passwords.verify(a.password, stored);
    if (!ok) {
      const detail = !found ? 'unknown handle' : found.password_hash === undefined ? 'the person has no password' : 'wrong password';
      await admission.refuse(a, METHOD, 'invalid_credentials', detail, { handle: a.handle });
      throw new ServiceError('ERR_UNAUTHORIZED', INVALID_CREDENTIALS);
    }
    deps.throttle.handle.reset(keys(a).handle);
    reserved.releaseIp();
    // Read again: the state may have moved on while the hash was computed.
    const person = await admission.active(a, METHOD, (found as Person).person_id, a.handle);
    const proof: Admitted['proof'] =
      stored !== undefined && needsRehash(stored)
        ? deps.passwords.hash(a.password).then((password_hash) => ({ method: METHOD, rehash: { password_hash, replaces: stored } }))
        : { method: METHOD };
    return { method: METHOD, person, handle: a.handle, proof };
  }

  return {
    async authenticate(a) {
      return admission.complete(a, await checkPassword(a));
    },
    async verify(a, answerable) {
      return admission.record(a, await checkPassword(a), answerable);
    },

    async register(a) {
      checkHandle(a.handle, 'handle');
      checkPasswordPolicy(a.password);
      const reserved = reserve(a, false);
      // Before the handle is looked up: a refused registration does not say whether the handle exists.
      await refuseByPolicy(a, reserved, true);
      if (a.org.state.handles.has(handleKey(a.handle))) {
        await admission.refuse(a, METHOD, 'handle_already_registered', 'a person with this handle exists', { handle: a.handle });
        throw conflict(`a person with handle ${a.handle.type} "${a.handle.value}" already exists`);
      }
      // Past the checks, nothing the registration meets is a failure the client IP is throttled for.
      reserved.releaseIp();
      const { person, upgrade } = admission.registrant(a, { person_id: deps.newPersonId(), region: deps.region }, a.handle);
      const registration = { password_hash: deps.passwords.hash(a.password), ...(upgrade && { upgrade }) };
      try {
        return { token: await admission.issue(a, { method: METHOD, person, handle: a.handle, proof: { method: METHOD }, registration }) };
      } catch (error) {
        if (error instanceof AwaitingApproval) return { awaiting_approval: true, person_id: error.person_id };
        throw error;
      }
    },
  };
}
