// Password sign-in and registration: throttling, credential checks, the token_minted hooks, the token, and
// one recorded outcome (AuthenticationSucceeded or AuthenticationFailed) per attempt.
import { ServiceError, conflict } from '../errors.js';
import type { Command } from '../domain/commands.js';
import { INVALID_CREDENTIALS, SIGN_IN_DENIED } from '../domain/sign-in.js';
import { checkHandle } from '../domain/rules.js';
import { handleKey, type Handle, type OrgState, type Person } from '../domain/state.js';
import { rfc3339Nanos } from '../lib/time-text.js';
import type { Clock } from '../lib/clock.js';
import type { SyncHooks } from '../webhooks/sync-hook.js';
import { checkPasswordPolicy, type PasswordHasher } from './password-hash.js';
import type { Limiter } from './throttle.js';
import type { TokenPort } from './token-port.js';

const METHOD = 'password';

export interface SignInDeps {
  clock: Clock;
  passwords: PasswordHasher;
  /** failures per handle (sign-in only) and per client IP (sign-in and registration), per organization */
  throttle: { handle: Limiter; ip: Limiter };
  hooks: SyncHooks;
  tokens: TokenPort;
  issuer(): string;
  /** where self-registered persons live: the local region */
  region: string;
  newPersonId(): string;
}

export interface SignInAttempt {
  /** read for state; commands go through run() */
  org: { id: string; state: OrgState };
  handle: Handle;
  password: string;
  ip: string;
  origin: string;
  userAgent: string;
  /** executes a command on the organization with the request's consistency */
  run<R>(command: Command): Promise<R>;
}

export interface SignInService {
  authenticate(a: SignInAttempt): Promise<string>;
  register(a: SignInAttempt): Promise<string>;
}

export function createSignIn(deps: SignInDeps): SignInService {
  const keys = (a: SignInAttempt) => ({ handle: `${a.org.id}\n${handleKey(a.handle)}`, ip: `${a.org.id}\n${a.ip}` });

  function refuseIfThrottled(a: SignInAttempt, byHandle: boolean): void {
    const now = deps.clock.nowMs();
    const k = keys(a);
    const wait = Math.max(byHandle ? deps.throttle.handle.retryAfterMs(k.handle, now) : 0, deps.throttle.ip.retryAfterMs(k.ip, now));
    if (wait > 0) {
      throw new ServiceError('ERR_TOO_MANY_REQUESTS', 'too many failed attempts; retry later', { headers: { 'Retry-After': String(Math.max(1, Math.ceil(wait / 1000))) } });
    }
  }

  function countFailure(a: SignInAttempt, byHandle: boolean): void {
    const now = deps.clock.nowMs();
    const k = keys(a);
    deps.throttle.ip.fail(k.ip, now);
    if (byHandle) deps.throttle.handle.fail(k.handle, now);
  }

  async function recordFailure(a: SignInAttempt, failure_reason: string, failure_detail: string, personId?: string): Promise<void> {
    await a.run({
      kind: 'RecordAuthenticationFailure',
      failure: { handle: a.handle, method: METHOD, client_ip_address: a.ip, failure_reason, failure_detail, ...(personId !== undefined && { person_id: personId }) },
    });
  }

  /** Runs the hooks, signs, and records the sign-in; registration creates the person in the same entry. */
  async function issue(a: SignInAttempt, person: Person, registration?: Promise<string>): Promise<string> {
    const state = a.org.state;
    // What the hooks are told: whether a token of the person exists, recorded or only signed, as they start.
    const hook_first_token = deps.tokens.previousToken(a.org, person.person_id) === undefined;
    const groups_claim_name = deps.tokens.groupsClaimName(state);
    const authentications = [{ handle: a.handle, method: METHOD, timestamp: rfc3339Nanos(deps.clock.nowNs()) }];
    const content = {
      aud: state.id,
      sub: person.person_id,
      iss: deps.issuer(),
      authentications,
      first_token: hook_first_token,
      groups_claim_name,
      region: person.region,
      request_metadata: { client_ip_address: a.ip, origin: a.origin, user_agent: a.userAgent },
    };
    // A registration's password is hashed while the hooks are called.
    const [hook, passwordHash] = await Promise.all([deps.hooks.tokenMinted(state, content), registration]);
    if (hook.kind === 'denied') {
      await recordFailure(a, 'hook_denied', hook.detail, person.person_id);
      throw new ServiceError('ERR_UNAUTHORIZED', SIGN_IN_DENIED);
    }
    if (hook.kind === 'failed') {
      await recordFailure(a, 'hook_failed', hook.detail, person.person_id);
      throw new ServiceError('ERR_BAD_GATEWAY', 'a token_minted webhook of this organization failed; no token was issued');
    }
    // Read now, after the hooks: a token minted for the person meanwhile is the one this follows, and then
    // this one is not their first, whatever the hooks were told (two first sign-ins at once: one is first).
    const prev_token_id = deps.tokens.previousToken(a.org, person.person_id);
    const first_token = prev_token_id === undefined;
    const claims = deps.tokens.identityClaims({
      org: state,
      person,
      authenticated_methods: [METHOD],
      first_token,
      prev_token_id,
      custom_claims: hook.claims,
      groups_claim_name,
    });
    const minted = deps.tokens.issue(claims);
    let token: string;
    try {
      [, token] = await deps.tokens.record(a.org, person.person_id, minted, () =>
        a.run({
          kind: 'CompleteSignIn',
          sign_in: {
            handle: a.handle,
            method: METHOD,
            client_ip_address: a.ip,
            person_id: person.person_id,
            token: { jti: minted.jti, iat: minted.iat, exp: minted.exp },
            first_token,
            authentications,
            ...(passwordHash !== undefined && { registration: { password_hash: passwordHash, region: person.region } }),
          },
        }),
      );
    } catch (error) {
      // The person changed while the hooks ran: deactivated or deleted, or the handle registered meanwhile.
      if (error instanceof ServiceError && (error.status === 401 || error.status === 409)) {
        await recordFailure(a, error.status === 401 ? 'person_not_active' : 'handle_already_registered', error.message, person.person_id);
      }
      throw error;
    }
    return token;
  }

  return {
    async authenticate(a) {
      refuseIfThrottled(a, true);
      const id = a.org.state.handles.get(handleKey(a.handle));
      const found = id === undefined ? undefined : a.org.state.persons.get(id);
      const ok = await deps.passwords.verify(a.password, found?.password_hash);
      if (!ok) {
        countFailure(a, true);
        const detail = !found ? 'unknown handle' : found.password_hash === undefined ? 'the person has no password' : 'wrong password';
        await recordFailure(a, 'invalid_credentials', detail);
        throw new ServiceError('ERR_UNAUTHORIZED', INVALID_CREDENTIALS);
      }
      deps.throttle.handle.reset(keys(a).handle);
      // Read again: the state may have moved on while the hash was computed.
      const person = a.org.state.persons.get((found as Person).person_id);
      if (!person || !person.active) {
        await recordFailure(a, 'person_not_active', person ? 'the person is not active' : 'the person was deleted', (found as Person).person_id);
        throw new ServiceError('ERR_UNAUTHORIZED', SIGN_IN_DENIED);
      }
      return issue(a, person);
    },

    async register(a) {
      checkHandle(a.handle, 'handle');
      checkPasswordPolicy(a.password);
      refuseIfThrottled(a, false);
      if (a.org.state.handles.has(handleKey(a.handle))) {
        countFailure(a, false);
        await recordFailure(a, 'handle_already_registered', 'a person with this handle exists');
        throw conflict(`a person with handle ${a.handle.type} "${a.handle.value}" already exists`);
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
      return issue(a, person, deps.passwords.hash(a.password));
    },
  };
}
