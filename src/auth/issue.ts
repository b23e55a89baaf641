// The one path every token for a person is issued on: the person (a sign-in: verified first, verify.ts) → a
// claims profile → the signature, made while the durable record commits → the consistency wait. Mint-token
// (method 'api'), every sign-in method and the tokens of OAuth grants come through here; a new sign-in method
// is a new first step in front of it (like auth/sign-in.ts for passwords), not a copy of it.
import { badRequest } from '../errors.js';
import type { AuthenticationDetails, AuthenticationFailure, Command, TokenRecord } from '../domain/commands.js';
import { requirePerson } from '../domain/lookup.js';
import { groupsClaimName, tokenLifetime } from '../domain/org-config.js';
import type { OrgState, Person } from '../domain/state.js';
import { rfc3339Seconds } from '../lib/time-text.js';
import type { ConsistencyWaiter } from '../regions/consistency.js';
import { AWAITING_APPROVAL } from '../domain/admission.js';
import { admitCustomClaims, identityClaims, type ClaimsProfile } from '../tokens/claims.js';
import type { IssuedToken, PendingToken, TokenIssuer } from '../tokens/sign.js';
import type { SyncHooks } from '../webhooks/sync-hook.js';
import { createTokenTemplates } from '../tokens/token-template.js';
import { AwaitingApproval, createSignInVerifier, type AuthenticationMethod, type SignedIn, type SignInRequest } from './verify.js';

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

/**
 * 'api': the organization mints with its API key; no hooks, no sign-in, first_token always false. 'oauth': a
 * token of an OAuth grant, for the sign-in the grant began with. 'anonymous': a new anonymous person's first.
 */
export type IssueMethod = 'api' | AuthenticationMethod | 'anonymous' | 'oauth';

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

/** A sign-in's token: the sign-in is verified (the hooks), then recorded with the token in one entry. */
export interface SignInIssue extends IssueCommon, SignInRequest {}

/** POST /persons/anonymous: a new anonymous person and its first token, recorded in one entry; no hooks. */
export interface AnonymousIssue extends IssueCommon {
  method: 'anonymous';
  /** the new person: person_type anonymous, anonymous_expires_ms set */
  person: Person;
  analytics_metadata: { analytics_correlation_id: string; client_ip_address: string };
  /** RFC 3339 with nanoseconds: when the person was created, its token's one authentication */
  timestamp: string;
}

/**
 * A token of an OAuth grant (the token endpoint): issued for the sign-in the grant began with, which was
 * recorded then; no hooks. Its authenticated_methods and TokenMinted's authentications are that sign-in's.
 */
export interface GrantIssue extends IssueCommon {
  method: 'oauth';
  person_id: string;
  /** the grant's sign-in: its methods (['api'] for a grant the organization began) */
  authenticated_methods: readonly string[];
  /** the grant's sign-in as TokenMinted carries it; empty for a grant the organization began */
  authentications: AuthenticationDetails[];
  /** the access token's or the ID token's */
  profile: ClaimsProfile;
}

export type IssueRequest = ApiIssue | SignInIssue | AnonymousIssue | GrantIssue;

export interface Issued extends IssuedToken {
  /** the WAL offset of the token's record */
  offset: number;
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
   * The token lives the organization's token_duration and carries its groups_claim_name. An OAuth grant's
   * token: the person gone or inactive 404 or 400, as mint-token.
   */
  issue(org: IssuingOrg, request: IssueRequest): Promise<Issued>;
  /**
   * A sign-in that ends without a token (the hosted OAuth page): verified as issue's, with its refusals, and
   * recorded alone (AuthenticationSucceeded), so that no token is signed or recorded that nobody receives.
   */
  verify(org: IssuingOrg, request: SignInRequest): Promise<SignedIn>;
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

/** The person a token is minted for without a sign-in: unknown 404, inactive 400. */
function activePerson(state: OrgState, personId: string): Person {
  const person = requirePerson(state, personId);
  if (!person.active) throw badRequest(`person ${personId} is not active`);
  return person;
}

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
  const verifier = createSignInVerifier({ hooks, consistency: waiter, issuer: () => issuer.issuer(), previousToken });

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
      const person = activePerson(org.state, r.person_id);
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

  /** The sign-in verified (the hooks), then recorded with its token in one entry: the token counts only if the sign-in does. */
  async function signIn(org: IssuingOrg, r: SignInIssue): Promise<Issued> {
    const verified = await verifier.verify(org, r);
    const { person } = r;
    const groups = verified.groups_claim_name;
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
      custom_claims: verified.custom_claims,
      groups_claim_name: groups,
      prev_anonymous_person_id: r.prev_anonymous_person_id,
    });
    const record: TokenRecord = {
      person_id: person.person_id,
      token_id: '',
      mint_token_api: false,
      first_token,
      issued_at: '',
      expires_at: '',
      authentications: verified.authentications,
      ...(r.prev_anonymous_person_id !== undefined && { prev_anonymous_person_id: r.prev_anonymous_person_id }),
      sign_in: verified.sign_in,
    };
    try {
      // The lifetime as configured now, when the token is signed.
      return await signAndRecord(org, record, claims, tokenLifetime(org.state.config, issuer.ttl), r);
    } catch (error) {
      return verifier.refused(org, verified, error);
    }
  }

  /**
   * A token of an OAuth grant: the grant's sign-in is its authentication, recorded when it happened. Like
   * any token of the person it follows their newest one, and is first when they have none.
   */
  function ofGrant(org: IssuingOrg, r: GrantIssue): Promise<Issued> {
    let claims: Record<string, unknown>;
    let record: TokenRecord;
    let ttl: number;
    try {
      const config = org.state.config;
      const groups = groupsClaimName(config);
      const person = activePerson(org.state, r.person_id);
      ttl = lifeLeft(person, tokenLifetime(config, issuer.ttl));
      const prev_token_id = previousToken(org, person.person_id);
      const first_token = prev_token_id === undefined;
      claims = r.profile({
        org: org.id,
        person,
        authenticated_methods: r.authenticated_methods,
        first_token,
        prev_token_id,
        template_claims: templates.claims(org, person, groups),
        groups_claim_name: groups,
      });
      record = { person_id: person.person_id, token_id: '', mint_token_api: false, first_token, issued_at: '', expires_at: '', authentications: r.authentications };
    } catch (error) {
      return Promise.reject(error);
    }
    return signAndRecord(org, record, claims, ttl, r);
  }

  async function verify(org: IssuingOrg, r: SignInRequest): Promise<SignedIn> {
    return verifier.record(org, await verifier.verify(org, r));
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
    issue: (org, request) =>
      request.method === 'api' ? mintByApi(org, request) : request.method === 'anonymous' ? anonymous(org, request) : request.method === 'oauth' ? ofGrant(org, request) : signIn(org, request),
    verify,
    refuse: verifier.refuse,
    previousToken,
    firstToken: (org, personId) => previousToken(org, personId) === undefined,
  };
}
