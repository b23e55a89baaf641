// Decisions about identity tokens: recording one that was signed for a person, for the mint-token API or a
// sign-in, with the one builder of its TokenMinted (or AnonymousTokenMinted) event.
import { badRequest, ServiceError } from '../errors.js';
import type { Change } from './changes.js';
import type { TokenRecord } from './commands.js';
import { decision, type DecideContext, type Decision, type EventDraft } from './decision.js';
import { requirePerson } from './lookup.js';
import { checkFactorAllowed, checkSelfRegistration, newPersonActive } from './org-config.js';
import { createPerson } from './persons.js';
import { checkDirectIdRedeemable } from './direct-id.js';
import { anonymousCreated, discardAnonymous, upgradeAnonymous } from './anonymous.js';
import { analytics, personHandle, SIGN_IN_DENIED } from './sign-in.js';
import type { HandleVerification, OrgState, Person } from './state.js';

/**
 * The event a recorded token emits. The token's own iat and exp are its issued_at and expires_at, so the
 * event and the token agree to the second; a sign-in's event shares its AuthenticationSucceeded's analytics.
 */
export function tokenMintedEvent(personType: Person['person_type'], token: TokenRecord, analytics_metadata?: object): EventDraft {
  if (personType === 'anonymous') {
    return {
      name: 'AnonymousTokenMinted_v1',
      body: { ...(analytics_metadata !== undefined && { analytics_metadata }), token_id: token.token_id, person_id: token.person_id, mint_token_api: token.mint_token_api, issued_at: token.issued_at, expires_at: token.expires_at },
    };
  }
  return {
    name: 'TokenMinted_v1',
    body: {
      ...(analytics_metadata !== undefined && { analytics_metadata }),
      token_id: token.token_id,
      person_id: token.person_id,
      mint_token_api: token.mint_token_api,
      issued_at: token.issued_at,
      expires_at: token.expires_at,
      ...(token.prev_anonymous_person_id !== undefined && { prev_anonymous_person_id: token.prev_anonymous_person_id }),
      first_token: token.first_token,
      authentications: token.authentications,
    },
  };
}

/**
 * How a registration's handle is verified by its method: an SSO provider vouched for the address; a password
 * registration proves nothing about it.
 */
function verifiedBy(method: string, ctx: DecideContext): HandleVerification | null {
  return method === 'oidc' ? { method: 'oidc', at: new Date(ctx.nowMs).toISOString() } : null;
}

/** recordToken's reply to a registration whose person awaits the organization's approval: the token was not recorded. */
export const AWAITING_APPROVAL = 'awaiting_approval';
/** recordToken's reply when the token was recorded. */
export const RECORDED = 'recorded';
export type RecordTokenReply = typeof RECORDED | typeof AWAITING_APPROVAL;

/**
 * The token was signed before this command was decided; it is handed out only if this decision commits.
 * A person deleted or deactivated in between therefore never receives it: the mint-token API answers
 * 404 or 400, a sign-in 401 (and a registration whose handle was taken meanwhile 409).
 * The organization's configuration is checked again here, as it is now: it may have changed while the hooks
 * ran. A method it no longer allows, or a registration it no longer allows, is a 403 (PolicyRefused) and
 * nothing changes. A registration while it requires manual approval creates the person inactive, with
 * their password, and records AuthenticationFailed (awaiting_approval) instead of the token.
 */
export function recordToken(state: OrgState, token: TokenRecord, ctx: DecideContext): Decision<RecordTokenReply> {
  if (token.anonymous !== undefined) {
    // POST /persons/anonymous: the person and its first token in one entry.
    const { person, analytics_metadata } = token.anonymous;
    const created = anonymousCreated(person, analytics_metadata);
    return decision(
      RECORDED,
      [...created.changes, { t: 'PersonTokenMinted', person_id: person.person_id, token_id: token.token_id }],
      [...created.events, tokenMintedEvent('anonymous', token, analytics_metadata)],
    );
  }
  const signIn = token.sign_in;
  if (signIn === undefined) {
    const person = requirePerson(state, token.person_id);
    if (!person.active) throw badRequest(`person ${person.person_id} is not active`);
    return decision(RECORDED, [{ t: 'PersonTokenMinted', person_id: person.person_id, token_id: token.token_id }], [tokenMintedEvent(person.person_type, token)]);
  }
  if (signIn.registration) checkSelfRegistration(state.config, signIn.method, signIn.handle);
  else checkFactorAllowed(state.config, signIn.method);
  const analytics_metadata = analytics(signIn, ctx);
  const changes: Change[] = [];
  const events: EventDraft[] = [];
  let person: Pick<Person, 'region' | 'person_type'>;
  if (signIn.registration?.upgrade) {
    // The anonymous person the caller held registers: the same person, now regular, with the handle and password.
    const upgraded = upgradeAnonymous(state, token.person_id, signIn.handle, analytics_metadata, verifiedBy(signIn.method, ctx));
    changes.push(...upgraded.changes);
    if (signIn.registration.password_hash !== undefined) changes.push({ t: 'PersonPasswordSet', person_id: token.person_id, password_hash: signIn.registration.password_hash });
    events.push(...upgraded.events);
    person = { region: (state.persons.get(token.person_id) as Person).region, person_type: 'regular' };
  } else if (signIn.registration) {
    const { region, password_hash, groups } = signIn.registration;
    const active = newPersonActive(state.config);
    const created = createPerson(state, { handles: [signIn.handle], region, active, ...(groups && { groups }) }, ctx, {
      person_id: token.person_id,
      analytics_metadata,
      verified_by: verifiedBy(signIn.method, ctx)?.method ?? null,
    });
    changes.push(...created.changes);
    // SSO registers without a password.
    if (password_hash !== undefined) changes.push({ t: 'PersonPasswordSet', person_id: token.person_id, password_hash });
    events.push(...created.events);
    if (!active) {
      events.push({
        name: 'AuthenticationFailed_v1',
        body: {
          analytics_metadata,
          person_id: token.person_id,
          region,
          authenticated_methods: [signIn.method],
          failed_authn_method: signIn.method,
          failure_reason: AWAITING_APPROVAL,
          failure_detail: 'the person was registered inactive: the organization requires manual approval',
          handle: personHandle(signIn.handle),
        },
      });
      return decision(AWAITING_APPROVAL, changes, events);
    }
    person = { region, person_type: 'regular' };
  } else {
    // The person was read before the hooks ran; deleted or deactivated since, the token must not count.
    const found = state.persons.get(token.person_id);
    if (!found || !found.active) throw new ServiceError('ERR_UNAUTHORIZED', SIGN_IN_DENIED);
    person = found;
    // A direct-id is used up by the entry that records its token, so two requests with one value get one token.
    if (signIn.direct_id !== undefined) {
      checkDirectIdRedeemable(state, signIn.direct_id, found.person_id, ctx.nowMs);
      changes.push({ t: 'DirectIdRedeemed', hash: signIn.direct_id });
    }
  }
  changes.push({ t: 'PersonTokenMinted', person_id: token.person_id, token_id: token.token_id });
  events.push(
    {
      name: 'AuthenticationSucceeded_v1',
      body: {
        analytics_metadata,
        person_id: token.person_id,
        region: person.region,
        success_authn_method: signIn.method,
        authenticated_methods: token.authentications.map((a) => a.method),
        handle: personHandle(signIn.handle),
      },
    },
    tokenMintedEvent(person.person_type, token, analytics_metadata),
  );
  if (token.prev_anonymous_person_id !== undefined && !signIn.registration) {
    const discarded = discardAnonymous(state, token.prev_anonymous_person_id, token.person_id);
    changes.push(...discarded.changes);
    events.push(...discarded.events);
  }
  return decision(RECORDED, changes, events);
}

/** unexpired revoked identity tokens an organization keeps at most; dropping one would make its token valid again */
export const MAX_REVOKED_IDENTITY_TOKENS = 100_000;

/**
 * POST /token/revoke: an identity token invalid from now on. Idempotent; a token already expired needs no entry.
 * `exp` is the token's own (seconds), so the entry is dropped once the token could not be valid anyway.
 */
export function revokeIdentityToken(state: OrgState, jti: string, exp: number, ctx: DecideContext): Decision<null> {
  const nowS = Math.floor(ctx.nowMs / 1000);
  if (exp <= nowS || state.revoked_tokens.has(jti)) return decision(null);
  if (state.revoked_tokens.size >= MAX_REVOKED_IDENTITY_TOKENS && [...state.revoked_tokens.values()].filter((until) => until > nowS).length >= MAX_REVOKED_IDENTITY_TOKENS) {
    throw new ServiceError('ERR_TOO_MANY_REQUESTS', `more than ${MAX_REVOKED_IDENTITY_TOKENS} unexpired identity tokens are revoked; retry once some expire`);
  }
  return decision(null, [{ t: 'IdentityTokenRevoked', jti, exp, now: nowS }]);
}
