// A person's credentials as the original's credential routes see them (a password today), and the decisions
// that add, remove and reset one. No answer ever carries the hash: `params` names the algorithm only.
import { badRequest, conflict, notFound } from '../errors.js';
import { decision, type DecideContext, type Decision, type EventDraft } from './decision.js';
import { requirePerson } from './lookup.js';
import { personHandle } from './sign-in.js';
import { handleKey, type Handle, type OrgState, type Person } from './state.js';

export type PasswordInitiator = 'AdminAPI' | 'EndUser';

/** A credential as the routes answer it: the original's ExportedPasswordCredential without its hash. */
export interface ExportedCredential {
  id: string;
  type: 'password';
  params: { algorithm: string };
}

/**
 * The ID of a person's password credential: the one recorded when it was set, or, for a password set before
 * credentials had IDs, one derived from the person (stable until the password changes).
 */
export function passwordCredentialId(person: Person): string | undefined {
  if (person.password_hash === undefined) return undefined;
  return person.password_credential_id ?? `password-${person.person_id}`;
}

/** The algorithm a self-describing hash names: scrypt, bcrypt, pbkdf2-sha256, argon2id, ... */
export function hashAlgorithm(passwordHash: string): string {
  if (/^\$2[aby]\$/.test(passwordHash)) return 'bcrypt';
  return (passwordHash.startsWith('$') ? passwordHash.slice(1) : passwordHash).split('$', 1)[0] as string;
}

/** The person's credentials, named by their hash's algorithm. */
export function exportedCredentials(person: Person): ExportedCredential[] {
  const id = passwordCredentialId(person);
  if (id === undefined || person.password_hash === undefined) return [];
  return [{ id, type: 'password', params: { algorithm: hashAlgorithm(person.password_hash) } }];
}

/** The handle PasswordChanged names: the one given, else an email address where the person has one. */
function contactHandle(handles: readonly Handle[]): Handle | undefined {
  return handles.find((h) => h.type === 'email_address') ?? handles[0];
}

/** A new password for the person, with its PasswordChanged; the credential gets a fresh ID. */
export function changePassword(state: OrgState, personId: string, passwordHash: string, initiatedBy: PasswordInitiator, ctx: DecideContext, handle?: Handle): Decision<ExportedCredential> {
  const person = requirePerson(state, personId);
  const named = handle ?? contactHandle(person.handles);
  const credentialId = ctx.uuid();
  const event: EventDraft = {
    name: 'PasswordChanged_v1',
    body: { person_id: personId, region: person.region, ...(named && { handle: personHandle(named) }), initiated_by: initiatedBy },
  };
  const reply: ExportedCredential = { id: credentialId, type: 'password', params: { algorithm: hashAlgorithm(passwordHash) } };
  return decision(reply, [{ t: 'PersonPasswordSet', person_id: personId, password_hash: passwordHash, credential_id: credentialId }], [event]);
}

/** POST /persons/{id}/credentials: a password imported as its hash; a person holds one password at most. */
export function addPasswordCredential(state: OrgState, personId: string, passwordHash: string, ctx: DecideContext): Decision<ExportedCredential> {
  const person = requirePerson(state, personId);
  if (person.password_hash !== undefined) throw conflict(`person ${personId} has a password credential already; delete it first, or rotate it`);
  return changePassword(state, personId, passwordHash, 'AdminAPI', ctx);
}

/** DELETE /persons/{id}/credentials[/{credential_id}]: without an ID every credential goes (none is no error). */
export function removeCredentials(state: OrgState, personId: string, credentialId?: string): Decision<null> {
  const person = requirePerson(state, personId);
  const id = passwordCredentialId(person);
  if (credentialId !== undefined && credentialId !== id) throw notFound(`person ${personId} has no credential ${JSON.stringify(credentialId.slice(0, 64))}`);
  if (id === undefined) return decision(null);
  return decision(null, [{ t: 'PersonPasswordRemoved', person_id: personId }]);
}

/** What a password-reset link carries, once its seal is checked. */
export interface PasswordReset {
  person_id: string;
  /** unique per link: the used ones are organization state until they expire */
  reset_id: string;
  /** the handle the link was sent to */
  handle: Handle;
  /** seconds since the epoch */
  exp: number;
}

export const RESET_NOT_VALID = 'the password-reset link is not valid (used already, expired, or not one this service sent)';
/** Used links are remembered until they expire; past this many unexpired ones new resets are refused. */
export const MAX_USED_PASSWORD_RESETS = 100_000;

/** POST /password-reset: the link's new password, once; the link is used from then on. */
export function completePasswordReset(state: OrgState, reset: PasswordReset, passwordHash: string, ctx: DecideContext): Decision<ExportedCredential> {
  const nowS = Math.floor(ctx.nowMs / 1000);
  if (reset.exp <= nowS || state.used_password_resets.has(reset.reset_id)) throw badRequest(RESET_NOT_VALID);
  if (!state.persons.has(reset.person_id)) throw badRequest(RESET_NOT_VALID);
  if (state.used_password_resets.size >= MAX_USED_PASSWORD_RESETS && [...state.used_password_resets.values()].filter((until) => until > nowS).length >= MAX_USED_PASSWORD_RESETS) {
    throw badRequest('too many password resets are in progress; try again later');
  }
  const changed = changePassword(state, reset.person_id, passwordHash, 'EndUser', ctx, reset.handle);
  changed.changes.push({ t: 'PasswordResetUsed', reset_id: reset.reset_id, exp: reset.exp, now: nowS });
  // The link reached its handle: the address is the person's (an SSO sign-in may join it from now on).
  if (state.handles.get(handleKey(reset.handle)) === reset.person_id) {
    changed.changes.push({ t: 'PersonHandleVerified', person_id: reset.person_id, handle: reset.handle, verified: { method: 'email_link', at: new Date(ctx.nowMs).toISOString() } });
  }
  return changed;
}
