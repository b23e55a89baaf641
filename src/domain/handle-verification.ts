// Whether and how each handle of a person was shown to be theirs, and the rule that joins an SSO identity to
// an existing person only through a verified handle (an unverified one may be a registrant's pre-claim).
import { handleKey, type Handle, type HandleVerification, type Person, type VerificationMethod } from './state.js';

/** The verifications of `handles`, all by `method` at `nowMs`; none when no method vouched for them. */
export function verificationsOf(handles: readonly Handle[], method: VerificationMethod | undefined, nowMs: number): Record<string, HandleVerification> {
  if (method === undefined) return {};
  const at = new Date(nowMs).toISOString();
  return Object.fromEntries(handles.map((h) => [handleKey(h), { method, at }]));
}

/** What a change written before verifications were recorded stands for: each handle's verification unknown. */
export const UNRECORDED: HandleVerification = Object.freeze({ method: 'unrecorded' });

/** A person as stored before verifications were recorded gets `unrecorded` for each handle (upgrade on read). */
export function withRecordedVerifications(person: Person): Person {
  if (person.verified_handles !== undefined) return person;
  person.verified_handles = Object.fromEntries(person.handles.map((h) => [handleKey(h), UNRECORDED]));
  return person;
}

export function verificationOf(person: Person, handle: Handle): HandleVerification | undefined {
  return person.verified_handles?.[handleKey(handle)];
}

/**
 * The linking rule: an SSO sign-in with a provider-verified address signs into the person holding it only if
 * that handle was verified (by the organization, a provider or a link sent to it). A handle recorded before
 * verifications were kept counts as verified only while the person has no password: the password is what a
 * registrant who pre-claimed someone else's address would keep using.
 */
export function joinableBySso(person: Person, handle: Handle): boolean {
  const v = verificationOf(person, handle);
  if (v === undefined) return false;
  return v.method !== 'unrecorded' || person.password_hash === undefined;
}
