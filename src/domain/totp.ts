// A person's TOTP credential (RFC 6238) and its recovery codes: enrolled with a secret sealed at the edge,
// confirmed by a first code, then a second factor whose time steps are used once each, in the order of the
// entries that record them. Recovery codes are ten single-use values, replied once and kept as SHA-256.
import { conflict, notFound, ServiceError } from '../errors.js';
import type { Change } from './changes.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import { requirePerson } from './lookup.js';
import type { OrgState, Person, StoredSecret } from './state.js';

/** How many recovery codes a confirmation or a regeneration gives. */
export const RECOVERY_CODES = 10;
/** The one answer to a code that does not sign in, whatever the reason, so none can be told from another. */
export const TOTP_REFUSED = 'the code is not valid';

/** A person's TOTP credential as the state keeps it. */
export interface TotpCredential {
  /** the record's format: a later shape upgrades it on read */
  v: 1;
  credential_id: string;
  /** the base32 secret, sealed under SERVICE_SECRETS_KEY when one is set */
  secret: StoredSecret;
  /** false until a first code proved the person's authenticator holds the secret */
  confirmed: boolean;
  /** the last time step a code was accepted for: a code of it or an earlier one is refused */
  last_step: number;
  /** SHA-256 (hex) of the unused recovery codes */
  recovery_codes: string[];
  recovery_codes_total: number;
  /** RFC 3339 */
  created: string;
  /** RFC 3339; absent before the first use */
  last_used?: string;
}

/** A TOTP credential as GET /persons/{id}/credentials answers it: the original's ExportedTOTPCredential. */
export interface ExportedTotpCredential {
  id: string;
  type: 'totp';
  params: { recovery_codes_total: number; recovery_codes_unused: number };
  last_used?: string;
}

export function exportedTotp(person: Person): ExportedTotpCredential[] {
  const t = person.totp;
  if (t === undefined || !t.confirmed) return [];
  return [{ id: t.credential_id, type: 'totp', params: { recovery_codes_total: t.recovery_codes_total, recovery_codes_unused: t.recovery_codes.length }, ...(t.last_used !== undefined && { last_used: t.last_used }) }];
}

/** A confirmed credential: a second factor the person can use. */
export const hasTotp = (person: Person | undefined): boolean => person?.totp?.confirmed === true;

/**
 * A new secret for the person, unconfirmed: it replaces an unconfirmed one (an enrollment begun again), but
 * not a confirmed one (409: delete it first, so that a stolen token alone cannot move the second factor).
 */
export function enrollTotp(state: OrgState, person_id: string, secret: StoredSecret, ctx: DecideContext): Decision<string> {
  const person = requirePerson(state, person_id);
  if (hasTotp(person)) throw conflict(`person ${person_id} has a confirmed TOTP credential already; delete it first`);
  const credential_id = ctx.uuid();
  const totp: TotpCredential = { v: 1, credential_id, secret, confirmed: false, last_step: 0, recovery_codes: [], recovery_codes_total: 0, created: new Date(ctx.nowMs).toISOString() };
  return decision(credential_id, [{ t: 'PersonTotpSet', person_id, totp }]);
}

/** Fresh recovery codes: replied once, kept hashed. */
function recoveryCodes(ctx: DecideContext): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODES }, () => ctx.secret());
  return { codes, hashes: codes.map((c) => ctx.hashKey(c)) };
}

/**
 * The first code, checked at the edge for `step`, confirms the enrollment of `credential_id` (the one the
 * person was shown) and uses that step; the reply is the recovery codes, shown this once.
 */
export function confirmTotp(state: OrgState, person_id: string, credential_id: string, step: number, ctx: DecideContext): Decision<string[]> {
  const person = requirePerson(state, person_id);
  const t = person.totp;
  if (t === undefined || t.credential_id !== credential_id) throw notFound(`person ${person_id} has no TOTP enrollment ${credential_id}`);
  if (t.confirmed) throw conflict(`the TOTP credential ${credential_id} is confirmed already`);
  const { codes, hashes } = recoveryCodes(ctx);
  const totp: TotpCredential = { ...t, confirmed: true, last_step: step, recovery_codes: hashes, recovery_codes_total: RECOVERY_CODES, last_used: new Date(ctx.nowMs).toISOString() };
  return decision(codes, [{ t: 'PersonTotpSet', person_id, totp }]);
}

/** New recovery codes in place of the old ones (used or not), replied once. */
export function regenerateRecoveryCodes(state: OrgState, person_id: string, ctx: DecideContext): Decision<string[]> {
  const person = requirePerson(state, person_id);
  if (!hasTotp(person)) throw notFound(`person ${person_id} has no confirmed TOTP credential`);
  const { codes, hashes } = recoveryCodes(ctx);
  return decision(codes, [{ t: 'PersonTotpSet', person_id, totp: { ...(person.totp as TotpCredential), recovery_codes: hashes, recovery_codes_total: RECOVERY_CODES } }]);
}

/**
 * The proof of a TOTP factor, checked again by the entry that records the sign-in: a time step later than
 * the last one used (two requests with one code: one signs in), or an unused recovery code, used up.
 */
export function useTotpProof(state: OrgState, proof: { totp_step?: number; recovery_code?: string }, person_id: string, ctx: DecideContext): Change[] {
  const t = state.persons.get(person_id)?.totp;
  if (t === undefined || !t.confirmed) throw new ServiceError('ERR_UNAUTHORIZED', TOTP_REFUSED);
  const last_used = new Date(ctx.nowMs).toISOString();
  if (proof.recovery_code !== undefined) {
    if (!t.recovery_codes.includes(proof.recovery_code)) throw new ServiceError('ERR_UNAUTHORIZED', TOTP_REFUSED);
    return [{ t: 'PersonTotpSet', person_id, totp: { ...t, recovery_codes: t.recovery_codes.filter((h) => h !== proof.recovery_code), last_used } }];
  }
  if (proof.totp_step === undefined || proof.totp_step <= t.last_step) throw new ServiceError('ERR_UNAUTHORIZED', TOTP_REFUSED);
  return [{ t: 'PersonTotpSet', person_id, totp: { ...t, last_step: proof.totp_step, last_used } }];
}

/** DELETE of the TOTP credential by its ID; undefined when the ID is not the person's TOTP credential. */
export function removeTotp(person: Person, credentialId?: string): Change[] | undefined {
  const t = person.totp;
  if (t === undefined || (credentialId !== undefined && credentialId !== t.credential_id)) return undefined;
  return [{ t: 'PersonTotpRemoved', person_id: person.person_id }];
}
