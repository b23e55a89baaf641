// The sign-in methods (factors) and what each proves: a typed proof the edge builds once the method's credential
// checked out, and the one table by which the entry that records the sign-in checks it again against the state
// as it is then and uses it up. A new method adds its name, its proof and its checker here, and nothing else in
// the domain.
import type { Change } from './changes.js';
import type { DecideContext } from './decision.js';
import { ServiceError } from '../errors.js';
import { checkDirectIdRedeemable, DIRECT_ID_REFUSED } from './direct-id.js';
import type { OrgState } from './state.js';
import { useTotpProof } from './totp.js';
import { usePasskeyProof, type UsedChallenge } from './passkeys.js';
import { oneTimeProofCheck } from './one-time-codes.js';

/** Every method a person signs in by, as allowed_factor_methods, AuthenticationSucceeded and tokens name them. */
export const FACTOR_METHODS = ['password', 'oidc', 'direct_id', 'anonymous', 'totp', 'webauthn', 'otp_via_email', 'email_link', 'otp_via_sms', 'sms_link'] as const;
export type FactorMethod = (typeof FACTOR_METHODS)[number];

/**
 * The methods an organization's configuration names (allowed_factor_methods): every one a person signs in by.
 * Not `anonymous`: no credential and no hooks, and POST /persons/anonymous has its own per-address rate.
 */
export const SIGN_IN_METHODS = FACTOR_METHODS.filter((m): m is Exclude<FactorMethod, 'anonymous'> => m !== 'anonymous');
export type SignInMethod = (typeof SIGN_IN_METHODS)[number];

/** Where each method may stand in a sign-in: first (it names the person), second (it answers a challenge), or both. */
const ROLES: { readonly [M in SignInMethod]: { first: boolean; second: boolean } } = {
  password: { first: true, second: false },
  oidc: { first: true, second: false },
  direct_id: { first: true, second: false },
  totp: { first: false, second: true },
  webauthn: { first: true, second: true },
  otp_via_email: { first: true, second: false },
  email_link: { first: true, second: false },
  otp_via_sms: { first: true, second: false },
  sms_link: { first: true, second: false },
};
export const FIRST_FACTOR_METHODS = SIGN_IN_METHODS.filter((m) => ROLES[m].first);
export const SECOND_FACTOR_METHODS = SIGN_IN_METHODS.filter((m) => ROLES[m].second);

/** What a sign-in method proved, as the entry that records the sign-in is told it. */
export type Proof =
  | {
      method: 'password';
      /**
       * a sign-in that proved the password against a hash of another form or cost: its replacement in the
       * service's own form, set by the same entry as long as the person still holds the hash it replaces
       */
      rehash?: { password_hash: string; replaces: string };
    }
  /** the provider's ID token: its state was used up by the callback that read it */
  | { method: 'oidc' }
  /** the SHA-256 (hex) of the value, used up by the same entry that records the token */
  | { method: 'direct_id'; direct_id: string }
  /** a new anonymous person: nothing to prove, the person is created with its token */
  | { method: 'anonymous' }
  /** a code's time step, later than the last one used; or the SHA-256 (hex) of an unused recovery code */
  | { method: 'totp'; totp_step: number }
  | { method: 'totp'; recovery_code: string }
  /** a verified assertion: the credential, its new counter and backup state, and the ceremony's challenge */
  | { method: 'webauthn'; webauthn_credential_id: string; webauthn_counter: number; webauthn_backup_state: boolean; webauthn_challenge: UsedChallenge }
  /** the SHA-256 (hex) of a code or link sent to the person, used up by the entry that records the token */
  | { method: 'otp_via_email' | 'email_link' | 'otp_via_sms' | 'sms_link'; one_time_value: string };

export type ProofOf<M extends FactorMethod> = Extract<Proof, { method: M }>;

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/**
 * Every method's proof fields, each optional: how a sign-in record carries its proof next to the attempt's
 * method (a string, as events carry it). The checker of the record's method requires its own fields.
 */
export type ProofFields = Partial<UnionToIntersection<Proof extends infer P ? (P extends Proof ? Omit<P, 'method'> : never) : never>>;

/**
 * Checks a proof against the state the entry is decided on and answers the changes that use it up; throws
 * (401) a proof no longer good. `person_id`: the person signing in (for a registration, the one created).
 */
type ProofCheck = (state: OrgState, proof: ProofFields, person_id: string, ctx: DecideContext) => Change[];

const PROOF_CHECKS: { readonly [M in FactorMethod]: ProofCheck } = {
  password(state, proof, person_id) {
    const found = state.persons.get(person_id);
    // The same password in the service's own form: the credential (and its ID) stays, so no PasswordChanged.
    if (proof.rehash === undefined || found === undefined || found.password_hash !== proof.rehash.replaces) return [];
    const credential_id = found.password_credential_id;
    return [{ t: 'PersonPasswordSet', person_id, password_hash: proof.rehash.password_hash, ...(credential_id !== undefined && { credential_id }) }];
  },
  oidc: () => [],
  // A direct-id is used up by the entry that records its sign-in, so two requests with one value get one token.
  direct_id(state, proof, person_id, ctx) {
    if (proof.direct_id === undefined) throw new ServiceError('ERR_UNAUTHORIZED', DIRECT_ID_REFUSED);
    checkDirectIdRedeemable(state, proof.direct_id, person_id, ctx.nowMs);
    return [{ t: 'DirectIdRedeemed', hash: proof.direct_id }];
  },
  anonymous: () => [],
  totp: useTotpProof,
  webauthn: usePasskeyProof,
  otp_via_email: oneTimeProofCheck('otp_via_email'),
  email_link: oneTimeProofCheck('email_link'),
  otp_via_sms: oneTimeProofCheck('otp_via_sms'),
  sms_link: oneTimeProofCheck('sms_link'),
};

export function isFactorMethod(method: string): method is FactorMethod {
  return (FACTOR_METHODS as readonly string[]).includes(method);
}

/** The changes that use up a sign-in's proof, once it is checked again; a method without a checker proves nothing (401). */
export function useProof(state: OrgState, method: string, proof: ProofFields, person_id: string, ctx: DecideContext): Change[] {
  if (!isFactorMethod(method)) throw new ServiceError('ERR_UNAUTHORIZED', `the sign-in method ${method} is not known`);
  return PROOF_CHECKS[method](state, proof, person_id, ctx);
}
