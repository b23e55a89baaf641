// Decisions about end-user credentials and sign-in: setting a password, and recording each attempt with its
// events (AuthenticationSucceeded or AuthenticationFailed, TokenMinted, PersonCreated on registration).
import { ServiceError } from '../errors.js';
import { rfc3339Nanos } from '../lib/time-text.js';
import type { Change } from './changes.js';
import type { Attempt, AuthenticationFailure, SignIn } from './commands.js';
import { decision, type DecideContext, type Decision, type EventDraft } from './decision.js';
import { requirePerson } from './lookup.js';
import { createPerson } from './persons.js';
import { handleTypeEnum } from './rules.js';
import type { Handle, OrgState } from './state.js';

/** The one answer to an unknown handle and to a wrong password, so neither can be told from the other. */
export const INVALID_CREDENTIALS = 'the handle or password is not correct';
/** Credentials were right, but the person may not sign in (inactive, or a token_minted hook said no). */
export const SIGN_IN_DENIED = 'authentication was denied';

const personHandle = (h: Handle) => ({ type: handleTypeEnum(h.type), value: h.value });

function analytics(attempt: Attempt, ctx: DecideContext) {
  return { analytics_correlation_id: ctx.uuid(), client_ip_address: attempt.client_ip_address };
}

/** The handle PasswordChanged names: an email address where the person has one. */
function contactHandle(handles: readonly Handle[]): Handle | undefined {
  return handles.find((h) => h.type === 'email_address') ?? handles[0];
}

export function setPassword(state: OrgState, personId: string, passwordHash: string): Decision<null> {
  const person = requirePerson(state, personId);
  const handle = contactHandle(person.handles);
  const event: EventDraft = {
    name: 'PasswordChanged_v1',
    body: { person_id: personId, region: person.region, ...(handle && { handle: personHandle(handle) }), initiated_by: 'AdminAPI' },
  };
  return decision(null, [{ t: 'PersonPasswordSet', person_id: personId, password_hash: passwordHash }], [event]);
}

export function recordAuthenticationFailure(state: OrgState, f: AuthenticationFailure, ctx: DecideContext): Decision<null> {
  const person = f.person_id === undefined ? undefined : state.persons.get(f.person_id);
  const event: EventDraft = {
    name: 'AuthenticationFailed_v1',
    body: {
      analytics_metadata: analytics(f, ctx),
      ...(person && { person_id: person.person_id, region: person.region, authenticated_methods: [f.method] }),
      failed_authn_method: f.method,
      failure_reason: f.failure_reason,
      failure_detail: f.failure_detail,
      handle: personHandle(f.handle),
    },
  };
  return decision(null, [], [event]);
}

export function completeSignIn(state: OrgState, s: SignIn, ctx: DecideContext): Decision<null> {
  const analytics_metadata = analytics(s, ctx);
  const changes: Change[] = [];
  const events: EventDraft[] = [];
  let region: string;
  if (s.registration) {
    const created = createPerson(state, { handles: [s.handle], region: s.registration.region }, ctx, { person_id: s.person_id, analytics_metadata });
    changes.push(...created.changes, { t: 'PersonPasswordSet', person_id: s.person_id, password_hash: s.registration.password_hash });
    events.push(...created.events);
    region = s.registration.region;
  } else {
    // The person was read before the hooks ran; deleted or deactivated since, the token must not count.
    const person = state.persons.get(s.person_id);
    if (!person || !person.active) throw new ServiceError('ERR_UNAUTHORIZED', SIGN_IN_DENIED);
    region = person.region;
  }
  changes.push({ t: 'PersonTokenMinted', person_id: s.person_id, token_id: s.token.jti });
  const methods = s.authentications.map((a) => a.method);
  events.push(
    {
      name: 'AuthenticationSucceeded_v1',
      body: { analytics_metadata, person_id: s.person_id, region, success_authn_method: s.method, authenticated_methods: methods, handle: personHandle(s.handle) },
    },
    {
      name: 'TokenMinted_v1',
      body: {
        analytics_metadata,
        token_id: s.token.jti,
        person_id: s.person_id,
        mint_token_api: false,
        issued_at: rfc3339Nanos(BigInt(s.token.iat) * 1_000_000_000n),
        expires_at: rfc3339Nanos(BigInt(s.token.exp) * 1_000_000_000n),
        first_token: s.first_token,
        authentications: s.authentications.map((a) => ({ timestamp: a.timestamp, method: a.method, handle: personHandle(a.handle) })),
      },
    },
  );
  return decision(null, changes, events);
}
