// Decisions about identity tokens: recording one that was signed for a person, for the mint-token API or a
// sign-in, with the one builder of its TokenMinted (or AnonymousTokenMinted) event.
import { badRequest, ServiceError } from '../errors.js';
import type { TokenRecord } from './commands.js';
import { decision, type DecideContext, type Decision, type EventDraft } from './decision.js';
import { requirePerson } from './lookup.js';
import { anonymousCreated } from './anonymous.js';
import { admitSignIn, AWAITING_APPROVAL, leaveAnonymous, RECORDED, type RecordTokenReply } from './admission.js';
import type { OrgState, Person } from './state.js';

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
 * The token was signed before this command was decided; it is handed out only if this decision commits.
 * A person deleted or deactivated in between therefore never receives it: the mint-token API answers
 * 404 or 400. A sign-in's token is recorded with its admission (admission.ts), whose refusals it shares;
 * a registration the organization must approve first records no token (AWAITING_APPROVAL).
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
  const admission = admitSignIn(state, token, signIn, ctx);
  if (!admission.admitted) return decision(AWAITING_APPROVAL, admission.changes, admission.events);
  const { changes, events } = admission;
  changes.push({ t: 'PersonTokenMinted', person_id: token.person_id, token_id: token.token_id });
  events.push(tokenMintedEvent(admission.person_type, token, admission.analytics_metadata));
  leaveAnonymous(state, token, signIn, changes, events);
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
