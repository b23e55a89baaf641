// A person's passkeys (WebAuthn credentials): the public key, signature counter and backup flags of each, and
// the ceremony challenges already used (single-use: an entry that records a registration or a sign-in refuses
// a challenge seen before, until it has expired anyway). The ceremonies themselves are verified at the edge.
import { conflict, ServiceError } from '../errors.js';
import type { Change } from './changes.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import { requirePerson } from './lookup.js';
import type { OrgState, Person } from './state.js';

/** passkeys a person may hold */
export const MAX_PASSKEYS = 20;
/** The one answer to an assertion that does not sign in, whatever the reason. */
export const PASSKEY_REFUSED = 'the passkey was not accepted';

export interface Passkey {
  /** the credential's ID in this service (GET/DELETE /persons/{id}/credentials) */
  id: string;
  /** the authenticator's credential ID, base64url */
  webauthn_credential_id: string;
  /** COSE public key, base64url */
  public_key: string;
  /** the signature counter last seen; 0 for authenticators that keep none */
  counter: number;
  transports: string[];
  aaguid: string;
  attestation_type: string;
  /** the relying-party ID it was registered for: the organization's domain the ceremony ran on */
  rp_id: string;
  /** may be synced to other devices (BE), and is now (BS) */
  backup_eligible: boolean;
  backup_state: boolean;
  label?: string;
  /** RFC 3339 */
  created: string;
  last_used?: string;
}

/** What the state keeps of a person's WebAuthn use: a versioned record, so a later shape upgrades it on read. */
export interface PersonWebauthn {
  v: 1;
  credentials: Passkey[];
  /** SHA-256 (hex) of ceremony challenges used, kept until they expire */
  used_challenges: Array<{ hash: string; exp_ms: number }>;
}

/** A ceremony's challenge as the entry checks it: its hash and when it expires. */
export interface UsedChallenge {
  hash: string;
  exp_ms: number;
}

const none = (): PersonWebauthn => ({ v: 1, credentials: [], used_challenges: [] });

/** The record with the challenge marked used (those expired dropped); a challenge seen before is a 401. */
function usingChallenge(w: PersonWebauthn, challenge: UsedChallenge, nowMs: number): PersonWebauthn {
  if (challenge.exp_ms <= nowMs || w.used_challenges.some((c) => c.hash === challenge.hash)) throw new ServiceError('ERR_UNAUTHORIZED', PASSKEY_REFUSED);
  return { ...w, used_challenges: [...w.used_challenges.filter((c) => c.exp_ms > nowMs), challenge] };
}

/** A new passkey of the person, recorded with its registration ceremony's challenge used. */
export function addPasskey(state: OrgState, person_id: string, passkey: Omit<Passkey, 'id' | 'created'>, challenge: UsedChallenge, ctx: DecideContext): Decision<Passkey> {
  const person = requirePerson(state, person_id);
  const w = usingChallenge(person.webauthn ?? none(), challenge, ctx.nowMs);
  if (w.credentials.some((c) => c.webauthn_credential_id === passkey.webauthn_credential_id)) throw conflict('this passkey is registered already');
  if (w.credentials.length >= MAX_PASSKEYS) throw conflict(`a person holds at most ${MAX_PASSKEYS} passkeys; delete one first`);
  const added: Passkey = { ...passkey, id: ctx.uuid(), created: new Date(ctx.nowMs).toISOString() };
  return decision(added, [{ t: 'PersonWebauthnSet', person_id, webauthn: { ...w, credentials: [...w.credentials, added] } }]);
}

/**
 * The proof of a passkey assertion, checked again by the entry that records the sign-in: the credential is
 * still the person's, the challenge unused, and the counter moved on (a clone's counter would not); the new
 * counter and backup state are stored.
 */
export function usePasskeyProof(
  state: OrgState,
  proof: { webauthn_credential_id?: string; webauthn_counter?: number; webauthn_backup_state?: boolean; webauthn_challenge?: UsedChallenge },
  person_id: string,
  ctx: DecideContext,
): Change[] {
  const w = state.persons.get(person_id)?.webauthn;
  const credential = w?.credentials.find((c) => c.webauthn_credential_id === proof.webauthn_credential_id);
  if (w === undefined || credential === undefined || proof.webauthn_challenge === undefined || proof.webauthn_counter === undefined) {
    throw new ServiceError('ERR_UNAUTHORIZED', PASSKEY_REFUSED);
  }
  if ((proof.webauthn_counter > 0 || credential.counter > 0) && proof.webauthn_counter <= credential.counter) throw new ServiceError('ERR_UNAUTHORIZED', PASSKEY_REFUSED);
  const used = usingChallenge(w, proof.webauthn_challenge, ctx.nowMs);
  const updated: Passkey = { ...credential, counter: proof.webauthn_counter, backup_state: proof.webauthn_backup_state ?? credential.backup_state, last_used: new Date(ctx.nowMs).toISOString() };
  return [{ t: 'PersonWebauthnSet', person_id, webauthn: { ...used, credentials: used.credentials.map((c) => (c.id === credential.id ? updated : c)) } }];
}

/** The original's ExportedPublicKeyCredential. */
export interface ExportedPasskey {
  id: string;
  type: 'public-key';
  params: { webauthn_credential_id: string; public_key: string; attestation_type: string; authenticator: { aaguid: string; sign_count: number; clone_warning: boolean } };
  label?: string;
  last_used?: string;
}

export function exportedPasskeys(person: Person): ExportedPasskey[] {
  return (person.webauthn?.credentials ?? []).map((c) => ({
    id: c.id,
    type: 'public-key',
    params: { webauthn_credential_id: c.webauthn_credential_id, public_key: c.public_key, attestation_type: c.attestation_type, authenticator: { aaguid: c.aaguid, sign_count: c.counter, clone_warning: false } },
    ...(c.label !== undefined && { label: c.label }),
    ...(c.last_used !== undefined && { last_used: c.last_used }),
  }));
}

/** DELETE of passkeys: one by its ID, or all (credentialId undefined); undefined when the ID is none of them. */
export function removePasskeys(person: Person, credentialId?: string): Change[] | undefined {
  const w = person.webauthn;
  if (w === undefined || w.credentials.length === 0) return credentialId === undefined ? [] : undefined;
  const kept = credentialId === undefined ? [] : w.credentials.filter((c) => c.id !== credentialId);
  if (kept.length === w.credentials.length) return undefined;
  return [{ t: 'PersonWebauthnSet', person_id: person.person_id, webauthn: { ...w, credentials: kept } }];
}
