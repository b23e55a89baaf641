// The admission step every sign-in method shares once its own credential checked out: the organization's policy
// for the method, the person found (still active) or registered (a new person, or the anonymous one the caller
// held upgraded), the one refusal (AuthenticationFailed) and the request the issuing pipeline takes, with the
// method's proof (domain/factors.ts) that the entry recording the sign-in checks again and uses up. A method
// keeps only what is its own: reading and checking its credential, and its throttling.
import { badRequest, ServiceError } from '../errors.js';
import type { Authentication } from '../domain/commands.js';
import { hasTotp } from '../domain/totp.js';
import type { Sealer } from '../lib/signed.js';
import type { Handle, Person } from '../domain/state.js';
import type { Proof } from '../domain/factors.js';
import {
  checkFactorAllowed,
  checkFactorPlace,
  checkSelfRegistration,
  PolicyRefused,
  secondFactorMissing,
  secondFactorRequired,
  secondFactorsAllowed,
  type OrgConfig,
} from '../domain/org-config.js';
import { SIGN_IN_DENIED } from '../domain/sign-in.js';
import { rfc3339Nanos } from '../lib/time-text.js';
import type { Clock } from '../lib/clock.js';
import type { Consistency, IssuePipeline, IssuingOrg, SignInIssue } from './issue.js';
import type { AuthenticationMethod, SignedIn } from './verify.js';

/** The request a sign-in arrives with, whatever its method. */
export interface SignInContext {
  org: IssuingOrg;
  ip: string;
  origin: string;
  userAgent: string;
  /** what the answer waits for, recorded refusals included */
  consistency: Consistency;
  /**
   * the live anonymous person of this organization whose token the caller sent: a registration upgrades it, a
   * sign-in deletes it; both name it in the token and TokenMinted (see src/browser/anonymous.ts)
   */
  anonymous_person_id?: string | undefined;
  /** Service-Analytics-Correlation-ID: the browser SDK's correlation id, copied into the attempt's events */
  analytics_correlation_id?: string | undefined;
}

/** Who a refused attempt was about, as far as it is known. */
export interface Refused {
  handle?: Handle | undefined;
  /** set once the credentials were verified */
  person_id?: string | undefined;
}

/** A sign-in admitted so far: its person (found, or as a registration creates them) and what its method proved. */
export interface Admitted {
  method: AuthenticationMethod;
  person: Person;
  handle: Handle;
  proof?: Proof | Promise<Proof> | undefined;
  /** a registration: the person is created (or the held anonymous one upgraded) by the entry recording the sign-in */
  registration?: { password_hash?: Promise<string>; groups?: string[]; upgrade?: true } | undefined;
  /** the factors proven before this one, from the challenge they answered */
  earlier?: Pick<Challenge, 'authentications' | 'proofs'> | undefined;
}

/**
 * What a second-factor challenge carries, signed (not secret: the caller may read it): who proved which
 * factors, and the request's own facts the sign-in goes on with. A password proof carries no re-hash.
 */
export interface Challenge {
  org: string;
  person_id: string;
  handle: Handle;
  authentications: Authentication[];
  proofs: Proof[];
  anonymous_person_id?: string | undefined;
  analytics_correlation_id?: string | undefined;
}

/** How long a second-factor challenge may be answered: long enough to open an authenticator app. */
export const CHALLENGE_TTL_S = 300;

/** The answer to a first factor that is not enough: no token, a challenge and the methods that can answer it. */
export interface SecondFactorRequired {
  challenge: string;
  /** the second factors the person holds, each answered at /authenticate/<method> */
  methods: string[];
  /** seconds */
  expires_in: number;
}

export type SignInOutcome = { token: string } | { second_factor: SecondFactorRequired };

/** A person about to be created: regular with handles, or anonymous with the end of its life. */
export interface NewPerson {
  person_id: string;
  region: string;
  handles: Handle[];
  groups?: string[] | undefined;
  /** an anonymous person: when it expires (ms since the epoch) */
  anonymous_expires_ms?: number | undefined;
}

export interface AdmissionDeps {
  clock: Pick<Clock, 'nowMs' | 'nowNs'>;
  pipeline: Pick<IssuePipeline, 'issue' | 'verify' | 'refuse'>;
  /** signs second-factor challenges; a method that never asks for one needs none */
  challenges?: Sealer | undefined;
}

/** The second factors a person holds that the organization accepts, as the methods that answer a challenge. */
export function secondFactors(config: OrgConfig, person: Person): string[] {
  const held = [...(hasTotp(person) ? ['totp'] : []), ...((person.webauthn?.credentials.length ?? 0) > 0 ? ['webauthn'] : [])];
  return secondFactorsAllowed(config, held);
}

export interface Admission {
  /** Records the one refusal of an attempt (AuthenticationFailed, with its reason) and waits for the consistency asked for. */
  refuse(c: SignInContext, method: string, failure_reason: string, failure_detail: string, who?: Refused): Promise<void>;
  /**
   * The organization's configuration for the method as it is now, before any credential is read: a refusal is
   * recorded with its failure_reason and thrown (403, PolicyRefused). `register`: the attempt registers the
   * handle, which the self-registration rules judge; `second`: the method answers a second-factor challenge.
   */
  policy(c: SignInContext, method: string, handle?: Handle, place?: { register?: boolean; second?: boolean }): Promise<void>;
  /** The person a verified credential names, read now: deleted or deactivated meanwhile, recorded and 401. */
  active(c: SignInContext, method: string, person_id: string, handle?: Handle): Promise<Person>;
  /**
   * Who a registration creates: the anonymous person the caller held, upgraded (regular, with the handle), or a
   * new person. An organization that approves new persons by hand approves an anonymous person's registration
   * too: it registers a new, inactive person, and the anonymous one stays.
   */
  registrant(c: SignInContext, p: Omit<NewPerson, 'handles' | 'anonymous_expires_ms'>, handle: Handle): { person: Person; upgrade?: true };
  /** A person as a registration (or POST /persons/anonymous) creates them. */
  newPerson(p: NewPerson): Person;
  /** The sign-in as the issuing pipeline takes it: for a token (issue) or without one (record). */
  request(c: SignInContext, a: Admitted): SignInIssue;
  /** The person's identity token: hooks, claims, signature and the entry that records the sign-in with it. */
  issue(c: SignInContext, a: Admitted): Promise<string>;
  /**
   * A first factor's end: the token, or, for a person who holds a second factor, a challenge to answer with
   * it (no token, nothing recorded yet).
   */
  complete(c: SignInContext, a: Admitted): Promise<SignInOutcome>;
  /**
   * complete's decision for a method that issues the token itself (SSO keeps the token's jti): the challenge,
   * or undefined when the sign-in goes on to its token. A person who must use two factors and holds no second
   * one is refused (403, recorded).
   */
  secondFactor(c: SignInContext, a: Admitted): Promise<{ second_factor: SecondFactorRequired } | undefined>;
  /**
   * The same sign-in recorded without a token: the hosted OAuth pages, whose client gets its own tokens later.
   * `answerable`: the second factors the page can ask for; a person who holds one of them gets a challenge
   * naming those, one who holds only others is refused (403, recorded).
   */
  record(c: SignInContext, a: Admitted, answerable?: readonly string[]): Promise<SignedIn | { second_factor: SecondFactorRequired }>;
  /** The challenge a second factor answers, opened: forged, expired or another organization's is a 400. */
  challenge(org: IssuingOrg, sealed: string): Challenge;
}

const CHALLENGE_PURPOSE = 'second-factor challenge';

export function createAdmission(deps: AdmissionDeps): Admission {
  const { clock, pipeline } = deps;
  const issue = async (c: SignInContext, a: Admitted) => (await pipeline.issue(c.org, request(c, a))).token;

  /** A person who must use two factors and holds no second one the organization accepts: refused (403), recorded. */
  async function requireNone(c: SignInContext, a: Admitted): Promise<void> {
    if (!secondFactorRequired(c.org.state.config, a.person.groups)) return;
    const error = secondFactorMissing();
    await refuse(c, a.method, error.failure_reason, error.message, { handle: a.handle, person_id: a.person.person_id });
    throw error;
  }

  /** A first factor on its own: neither answering a challenge nor registering. */
  const firstOnly = (a: Admitted) => a.earlier === undefined && a.registration === undefined;

  /** The first factor's answer when a second is needed: the signed challenge, no token, nothing recorded yet. */
  async function challengeFor(c: SignInContext, a: Admitted, methods: string[]): Promise<{ second_factor: SecondFactorRequired }> {
    if (deps.challenges === undefined) throw new Error('second-factor challenges need a sealer');
    // The first factor's proof goes on with the challenge; a re-hash waits for a sign-in without one.
    const proof: Proof = a.method === 'password' ? { method: 'password' } : ((await a.proof) ?? ({ method: a.method } as Proof));
    const challenge: Challenge = {
      org: c.org.id,
      person_id: a.person.person_id,
      handle: a.handle,
      authentications: [{ handle: a.handle, method: a.method, timestamp: rfc3339Nanos(clock.nowNs()) }],
      proofs: [proof],
      ...(c.anonymous_person_id !== undefined && { anonymous_person_id: c.anonymous_person_id }),
      ...(c.analytics_correlation_id !== undefined && { analytics_correlation_id: c.analytics_correlation_id }),
    };
    const expires = Math.floor(clock.nowMs() / 1000) + CHALLENGE_TTL_S;
    return { second_factor: { challenge: deps.challenges.seal(CHALLENGE_PURPOSE, challenge, expires), methods, expires_in: CHALLENGE_TTL_S } };
  }

  async function secondFactor(c: SignInContext, a: Admitted): Promise<{ second_factor: SecondFactorRequired } | undefined> {
    // A factor is not its own second: a passkey sign-in asks for TOTP, not for another passkey.
    const methods = firstOnly(a) ? secondFactors(c.org.state.config, a.person).filter((m) => m !== a.method) : [];
    if (methods.length > 0) return challengeFor(c, a, methods);
    if (firstOnly(a)) await requireNone(c, a);
    return undefined;
  }

  const refuse: Admission['refuse'] = async (c, method, failure_reason, failure_detail, who = {}) => {
    await pipeline.refuse(c.org, c.consistency, {
      method,
      client_ip_address: c.ip,
      ...(who.handle && { handle: who.handle }),
      ...(c.analytics_correlation_id !== undefined && { analytics_correlation_id: c.analytics_correlation_id }),
      failure_reason,
      failure_detail,
      ...(who.person_id !== undefined && { person_id: who.person_id }),
    });
  };

  function newPerson(p: NewPerson): Person {
    return {
      person_id: p.person_id,
      active: true,
      person_type: p.anonymous_expires_ms === undefined ? 'regular' : 'anonymous',
      ...(p.anonymous_expires_ms !== undefined && { anonymous_expires_ms: p.anonymous_expires_ms }),
      region: p.region,
      handles: p.handles.map((h) => ({ type: h.type, value: h.value })),
      // Nothing vouched for these handles at the edge; a registration's entry records who did (createPerson).
      verified_handles: {},
      groups: p.groups ?? [],
      attributes: {},
      gdpr_consents: [],
      created: new Date(clock.nowMs()).toISOString(),
    };
  }

  function request(c: SignInContext, a: Admitted): SignInIssue {
    return {
      method: a.method,
      person: a.person,
      handle: a.handle,
      authentications: [...(a.earlier?.authentications ?? []), { handle: a.handle, method: a.method, timestamp: rfc3339Nanos(clock.nowNs()) }],
      factors: a.earlier?.proofs,
      request_metadata: { client_ip_address: c.ip, origin: c.origin, user_agent: c.userAgent },
      consistency: c.consistency,
      registration: a.registration,
      proof: a.proof,
      prev_anonymous_person_id: c.anonymous_person_id,
      analytics_correlation_id: c.analytics_correlation_id,
    };
  }

  return {
    refuse,
    async policy(c, method, handle, place = {}) {
      const config = c.org.state.config;
      try {
        if (place.register && handle !== undefined) checkSelfRegistration(config, method, handle);
        else checkFactorAllowed(config, method);
        checkFactorPlace(config, method, place.second !== true);
      } catch (error) {
        if (error instanceof PolicyRefused) await refuse(c, method, error.failure_reason, error.message, { handle });
        throw error;
      }
    },
    async active(c, method, person_id, handle) {
      const person = c.org.state.persons.get(person_id);
      if (person && person.active) return person;
      await refuse(c, method, 'person_not_active', person ? 'the person is not active' : 'the person was deleted', { handle, person_id });
      throw new ServiceError('ERR_UNAUTHORIZED', SIGN_IN_DENIED);
    },
    registrant(c, p, handle) {
      const held = c.anonymous_person_id === undefined ? undefined : c.org.state.persons.get(c.anonymous_person_id);
      if (held !== undefined && held.person_type === 'anonymous' && !c.org.state.config.requires_manual_approval) {
        // The anonymous person itself registers: the hooks see it as it will be, regular with the handle.
        const upgraded: Person = { ...held, person_type: 'regular', handles: [...held.handles, { type: handle.type, value: handle.value }] };
        delete upgraded.anonymous_expires_ms;
        return { person: upgraded, upgrade: true };
      }
      return { person: newPerson({ ...p, handles: [handle] }) };
    },
    newPerson,
    request,
    issue,
    secondFactor,
    async complete(c, a) {
      return (await secondFactor(c, a)) ?? { token: await issue(c, a) };
    },
    async record(c, a, answerable = []) {
      if (firstOnly(a)) {
        const held = secondFactors(c.org.state.config, a.person).filter((m) => m !== a.method);
        const asked = held.filter((m) => answerable.includes(m));
        if (asked.length > 0) return challengeFor(c, a, asked);
        await requireNone(c, a);
        if (held.length > 0) {
          await refuse(c, a.method, 'second_factor_required', 'the person holds a second factor, which this page does not ask for', { handle: a.handle, person_id: a.person.person_id });
          throw new ServiceError('ERR_FORBIDDEN', `this person signs in with a second factor this page cannot ask for (${held.join(', ')}): use /authenticate/${a.method}, then /authenticate/${held[0]}`);
        }
      }
      return pipeline.verify(c.org, request(c, a));
    },
    challenge(org, sealed) {
      const opened = deps.challenges?.open<Challenge>(CHALLENGE_PURPOSE, sealed, Math.floor(clock.nowMs() / 1000));
      if (opened === undefined || opened.org !== org.id) throw badRequest('challenge: not a valid second-factor challenge of this organization, or expired');
      return opened;
    },
  };
}
