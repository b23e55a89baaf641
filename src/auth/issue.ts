// The one path every token for a person is issued on: the person → the token_minted hooks (for an
// authentication) → a claims profile → the signature, made while the durable record commits → the
// consistency wait. Mint-token (method 'api') and every sign-in method come through here; a new method is
// a new first step in front of it (like auth/sign-in.ts for passwords), not a copy of it.
import { badRequest, ServiceError } from '../errors.js';
import type { Authentication, AuthenticationFailure, Command, SignInRecord, TokenRecord } from '../domain/commands.js';
import { requirePerson } from '../domain/lookup.js';
import { groupsClaimName, PolicyRefused, tokenLifetime } from '../domain/org-config.js';
import { authenticationDetails, SIGN_IN_DENIED } from '../domain/sign-in.js';
import type { Handle, OrgState, Person } from '../domain/state.js';
import { rfc3339Seconds } from '../lib/time-text.js';
import type { ConsistencyWaiter } from '../regions/consistency.js';
import { AWAITING_APPROVAL } from '../domain/tokens.js';
import { DIRECT_ID_REFUSED } from '../domain/direct-id.js';
import { admitCustomClaims, identityClaims, type ClaimsProfile } from '../tokens/claims.js';
import type { IssuedToken, PendingToken, TokenIssuer } from '../tokens/sign.js';
import type { SyncHooks } from '../webhooks/sync-hook.js';
import { createTokenTemplates } from '../tokens/token-template.js';

/** A rejection awaited elsewhere: see signAndRecord. */
const ignore = (): void => undefined;

/** The consistency a request asked for, as the waiter takes it. */
export type Consistency = Parameters<ConsistencyWaiter['wait']>[2];

/** What issuing needs of an organization: its state to read, and its actor to decide commands. */
export interface IssuingOrg {
  readonly id: string;
  readonly state: OrgState;
  execute(command: Command): Promise<{ readonly offset: number; readonly reply?: unknown }>;
}

/** A method by which a person proves who they are: it runs the token_minted hooks and is recorded as a sign-in. */
export type AuthenticationMethod = 'password' | 'oidc' | 'direct_id';
/** 'api': the organization mints with its API key; no hooks, no sign-in, first_token always false. */
export type IssueMethod = 'api' | AuthenticationMethod;

interface IssueCommon {
  /** the consistency the caller asked for; the answer waits for it */
  consistency: Consistency;
  /** what kind of token; the identity token when absent */
  profile?: ClaimsProfile | undefined;
  /** how it is signed; the identity-token issuer when absent (an OAuth access token: typ at+jwt, the client's lifetime) */
  sign?: ((claims: Record<string, unknown>) => PendingToken) | undefined;
}

export interface ApiIssue extends IssueCommon {
  method: 'api';
  person_id: string;
  /** a reserved name among them is refused with a 400 naming it */
  custom_claims?: Record<string, unknown> | undefined;
  /** false for a token of an OAuth grant: issued for the person's earlier sign-in, not by the mint-token API */
  mint_token_api?: boolean | undefined;
}

export interface SignInIssue extends IssueCommon {
  method: AuthenticationMethod;
  /** the person whose credentials were verified, or the one a registration creates */
  person: Person;
  /** the handle the person signed in with */
  handle: Handle;
  /** the sign-in's steps, as the hooks and TokenMinted are told them */
  authentications: Authentication[];
  /** the seed's request_metadata of the hooks' trigger_content */
  request_metadata: { client_ip_address: string; origin: string; user_agent: string };
  /**
   * a registration: the token's entry creates the person, with this password hash (computed while the hooks
   * run; none for SSO) and these groups
   */
  registration?: { password_hash?: Promise<string>; groups?: string[]; upgrade?: true } | undefined;
  /** a password sign-in against a hash to replace: the replacement (computed while the hooks run) and the hash it replaces */
  rehash?: { password_hash: Promise<string>; replaces: string } | undefined;
  /** a direct-id sign-in: the SHA-256 (hex) of the value, used up by the entry that records the token */
  direct_id?: string | undefined;
  /**
   * the anonymous person whose token the caller held: the token and TokenMinted name it; a registration
   * upgrades it (registration.upgrade, `person` is that person), a sign-in to another person deletes it
   */
  prev_anonymous_person_id?: string | undefined;
  /** the browser SDK's correlation id, copied into the attempt's events */
  analytics_correlation_id?: string | undefined;
}

/** POST /persons/anonymous: a new anonymous person and its first token, recorded in one entry; no hooks. */
export interface AnonymousIssue extends IssueCommon {
  method: 'anonymous';
  /** the new person: person_type anonymous, anonymous_expires_ms set */
  person: Person;
  analytics_metadata: { analytics_correlation_id: string; client_ip_address: string };
  /** RFC 3339 with nanoseconds: when the person was created, its token's one authentication */
  timestamp: string;
}

export type IssueRequest = ApiIssue | SignInIssue | AnonymousIssue;

export interface Issued extends IssuedToken {
  /** the WAL offset of the token's record */
  offset: number;
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

/** What the chain of a person's tokens needs of an organization. */
type OrgChain = Pick<IssuingOrg, 'id' | 'state'>;

export interface IssuePipeline {
  /**
   * Resolves once the token is durably recorded and the consistency asked for is reached; only then may it
   * be handed out. Mint-token: unknown person 404, inactive 400. Sign-in: a hook's denial 401, its failure
   * 502, the person gone or inactive meanwhile 401, the handle registered meanwhile 409, the organization's
   * configuration refusing the method or the registration meanwhile 403 (PolicyRefused); each recorded as
   * AuthenticationFailed. A registration the organization must approve first: AwaitingApproval, no token.
   * The token lives the organization's token_duration and carries its groups_claim_name.
   */
  issue(org: IssuingOrg, request: IssueRequest): Promise<Issued>;
  /** Records a failed sign-in attempt (AuthenticationFailed) and waits for the consistency asked for. */
  refuse(org: IssuingOrg, consistency: Consistency, failure: AuthenticationFailure): Promise<void>;
  /** The prev_token_id of the person's next token: their newest token, signed and recorded or only signed. */
  previousToken(org: OrgChain, personId: string): string | undefined;
  /** Whether the person's next token would be their first. */
  firstToken(org: OrgChain, personId: string): boolean;
}

export interface IssueDeps {
  issuer: TokenIssuer;
  hooks: SyncHooks;
  consistency: ConsistencyWaiter;
  /** a token template that fails to render for a person: the token is issued without its claims, and this is told */
  warn?: ((message: string) => void) | undefined;
  /** the service's clock: an anonymous person's token never outlives the person */
  nowMs?: (() => number) | undefined;
}

const API_METHODS: readonly string[] = ['api'];

/**
 * rfc3339Seconds remembering its last two answers: every token of the same second has the same iat and
 * (with the same lifetime) exp, so a busy second formats them once, not twice per token.
 */
function cachedSecondsText(): (epochSeconds: number) => string {
  let lastKey = NaN;
  let lastText = '';
  let otherKey = NaN;
  let otherText = '';
  return (epochSeconds) => {
    if (epochSeconds === lastKey) return lastText;
    if (epochSeconds === otherKey) return otherText;
    otherKey = lastKey;
    otherText = lastText;
    lastKey = epochSeconds;
    return (lastText = rfc3339Seconds(epochSeconds));
  };
}

/** A sign-in refused after its credentials were verified. */
function failure(r: SignInIssue, failure_reason: string, failure_detail: string): AuthenticationFailure {
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

export function createIssuePipeline(deps: IssueDeps): IssuePipeline {
  const { issuer, hooks, consistency: waiter } = deps;
  const nowMs = deps.nowMs ?? (() => Date.now());
  /** seconds left of an anonymous person's fixed life, at most `ttl` */
  const lifeLeft = (person: Person, ttl: number) =>
    person.anonymous_expires_ms === undefined ? ttl : Math.max(1, Math.min(ttl, Math.floor(person.anonymous_expires_ms / 1000) - Math.floor(nowMs() / 1000)));
  const templates = createTokenTemplates(deps.warn ?? ((m) => console.warn(`warning: ${m}`)));
  // A person's tokens signed but not yet decided by the actor, newest last: the next token's prev_token_id
  // must name the newest of them, not the last one already in the state. By organization, then person: a key
  // joining the two would be a new string per mint, built and hashed on each read (about 0.3 µs a mint). An
  // organization's map stays once made (one per organization that mints), so a quiet one allocates none per token.
  const pending = new Map<string, Map<string, string>>();
  const secondsText = cachedSecondsText();

  const previousToken = (org: OrgChain, personId: string) => pending.get(org.id)?.get(personId) ?? org.state.persons.get(personId)?.last_token_id;

  async function refuse(org: IssuingOrg, consistency: Consistency, failure: AuthenticationFailure): Promise<void> {
    const outcome = await org.execute({ kind: 'RecordAuthenticationFailure', failure });
    await waiter.wait(org.id, outcome.offset, consistency);
  }

  /**
   * Signs `claims` while the token's record commits: one decision records it and emits its events. Until
   * both are done the token is the person's newest, so a token issued meanwhile follows it. Called in the
   * same turn as previousToken was read, or the chain could fork.
   */
  async function signAndRecord(org: IssuingOrg, record: TokenRecord, claims: Record<string, unknown>, ttl: number, r: IssueCommon): Promise<Issued> {
    const issued = r.sign === undefined ? issuer.issue(claims, ttl) : r.sign(claims);
    record.token_id = issued.jti;
    // The token's own iat and exp, so that the event and the token agree to the second.
    record.issued_at = secondsText(issued.iat);
    record.expires_at = secondsText(issued.exp);
    const personId = record.person_id;
    let signed = pending.get(org.id);
    if (signed === undefined) pending.set(org.id, (signed = new Map()));
    signed.set(personId, issued.jti);
    let outcome: { readonly offset: number; readonly reply?: unknown };
    let token: string;
    try {
      // The signature is made while the record commits; the token leaves only with both. Two awaits rather
      // than Promise.all, which builds an array, two resolve functions and a promise per token; the record's
      // rejection is marked handled meanwhile and still thrown by its own await. A token signed on this
      // thread is there already: only the record is waited for.
      const recorded = org.execute({ kind: 'RecordToken', token: record });
      if (issued.signed !== undefined) token = issued.signed;
      else {
        recorded.then(undefined, ignore);
        token = await issued.token;
      }
      outcome = await recorded;
    } finally {
      if (signed.get(personId) === issued.jti) signed.delete(personId);
    }
    // A local_region wait is reached once the record is durable: no promise, no turn lost (the usual case).
    const reaching = waiter.wait(org.id, outcome.offset, r.consistency);
    if (reaching !== undefined) await reaching;
    // The signed token was not recorded and never leaves: the person awaits approval.
    if (outcome.reply === AWAITING_APPROVAL) throw new AwaitingApproval(record.person_id);
    return { token, jti: issued.jti, iat: issued.iat, exp: issued.exp, kid: issued.kid, offset: outcome.offset };
  }

  // Not async: on the hot path of mint-token, the only promise hops are signAndRecord's own. A refusal
  // before it is still a rejection, never a throw.
  function mintByApi(org: IssuingOrg, r: ApiIssue): Promise<Issued> {
    let claims: Record<string, unknown>;
    let personId: string;
    let ttl: number;
    try {
      const config = org.state.config;
      const groups = groupsClaimName(config);
      ttl = tokenLifetime(config, issuer.ttl);
      // Refused before the person is looked up, so a reserved name is a 400 whoever the person.
      const custom = r.custom_claims === undefined ? undefined : admitCustomClaims(r.custom_claims, 'api', groups);
      const person = requirePerson(org.state, r.person_id);
      if (!person.active) throw badRequest(`person ${r.person_id} is not active`);
      personId = person.person_id;
      ttl = lifeLeft(person, ttl);
      claims = (r.profile ?? identityClaims)({
        org: org.id,
        person,
        authenticated_methods: API_METHODS,
        first_token: false,
        prev_token_id: previousToken(org, personId),
        template_claims: templates.claims(org, person, groups),
        custom_claims: custom,
        groups_claim_name: groups,
        anonymous: person.person_type === 'anonymous' ? { authentications: [] } : undefined,
      });
    } catch (error) {
      return Promise.reject(error);
    }
    const record: TokenRecord = { person_id: personId, token_id: '', mint_token_api: r.mint_token_api ?? true, first_token: false, issued_at: '', expires_at: '', authentications: [] };
    return signAndRecord(org, record, claims, ttl, r);
  }

  async function signIn(org: IssuingOrg, r: SignInIssue): Promise<Issued> {
    const state = org.state;
    const { person } = r;
    // Read once, before the hooks: the token carries the name the hooks were told and filtered their claims by.
    const groups = groupsClaimName(state.config);
    const content = {
      aud: state.id,
      sub: person.person_id,
      iss: issuer.issuer(),
      authentications: r.authentications,
      // What the hooks are told: whether a token of the person exists, recorded or only signed, as they start.
      first_token: previousToken(org, person.person_id) === undefined,
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
    // Read now, after the hooks: a token issued for the person meanwhile is the one this follows, and then
    // this one is not their first, whatever the hooks were told (two first sign-ins at once: one is first).
    const prev_token_id = previousToken(org, person.person_id);
    // An upgraded anonymous person's first token as a regular person is its first.
    const first_token = prev_token_id === undefined || r.registration?.upgrade === true;
    const claims = (r.profile ?? identityClaims)({
      org: org.id,
      person,
      authenticated_methods: [r.method],
      first_token,
      prev_token_id,
      template_claims: templates.claims(org, person, groups),
      custom_claims: admitCustomClaims(hook.claims, 'hook', groups),
      groups_claim_name: groups,
      prev_anonymous_person_id: r.prev_anonymous_person_id,
    });
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
    const record: TokenRecord = {
      person_id: person.person_id,
      token_id: '',
      mint_token_api: false,
      first_token,
      issued_at: '',
      expires_at: '',
      authentications: authenticationDetails(r.authentications),
      ...(r.prev_anonymous_person_id !== undefined && { prev_anonymous_person_id: r.prev_anonymous_person_id }),
      sign_in,
    };
    try {
      // The lifetime as configured now, when the token is signed.
      return await signAndRecord(org, record, claims, tokenLifetime(org.state.config, issuer.ttl), r);
    } catch (error) {
      // The configuration changed while the hooks ran (re-checked where the token is recorded), or the person
      // did: deactivated or deleted, or the handle registered meanwhile.
      if (error instanceof PolicyRefused) await refuse(org, r.consistency, failure(r, error.failure_reason, error.message));
      else if (error instanceof ServiceError && (error.status === 401 || error.status === 409)) {
        const reason = error.status === 409 ? 'handle_already_registered' : error.message === DIRECT_ID_REFUSED ? 'invalid_credentials' : 'person_not_active';
        await refuse(org, r.consistency, failure(r, reason, error.message));
      }
      throw error;
    }
  }

  /** No hooks (nobody authenticated) and no sign-in: the person and its token commit together. */
  function anonymous(org: IssuingOrg, r: AnonymousIssue): Promise<Issued> {
    const { person } = r;
    const groups = groupsClaimName(org.state.config);
    const authentications = [{ method: 'anonymous', timestamp: r.timestamp }];
    const claims = (r.profile ?? identityClaims)({
      org: org.id,
      person,
      authenticated_methods: ['anonymous'],
      first_token: true,
      template_claims: templates.claims(org, person, groups),
      groups_claim_name: groups,
      anonymous: { authentications },
    });
    const record: TokenRecord = {
      person_id: person.person_id,
      token_id: '',
      mint_token_api: false,
      first_token: true,
      issued_at: '',
      expires_at: '',
      authentications,
      anonymous: { person, analytics_metadata: r.analytics_metadata },
    };
    return signAndRecord(org, record, claims, lifeLeft(person, Number.MAX_SAFE_INTEGER), r);
  }

  return {
    issue: (org, request) => (request.method === 'api' ? mintByApi(org, request) : request.method === 'anonymous' ? anonymous(org, request) : signIn(org, request)),
    refuse,
    previousToken,
    firstToken: (org, personId) => previousToken(org, personId) === undefined,
  };
}
