// How a sign-in is named to relying parties: amr (RFC 8176 values) and acr, one of two levels the authorization
// endpoint's acr_values may ask for. A request asking only for the multi-factor level makes a one-factor
// session sign in again, where the hosted page asks for the person's second factor.

/** A sign-in with one factor. */
export const ACR_ONE_FACTOR = 'urn:service:acr:one-factor';
/** A sign-in with two different factors. */
export const ACR_MULTI_FACTOR = 'urn:service:acr:multi-factor';
export const ACR_VALUES = [ACR_ONE_FACTOR, ACR_MULTI_FACTOR] as const;

/** RFC 8176 2: the value of each sign-in method that has one; others keep their own name. */
const RFC8176: Readonly<Record<string, string>> = {
  password: 'pwd',
  totp: 'otp',
  // a passkey is a proof of possession of a key held by an authenticator
  webauthn: 'hwk',
};

/** The distinct factors a sign-in's methods count, in order. */
const factors = (methods: readonly string[]): string[] => [...new Set(methods)];

/** amr: each method's RFC 8176 value, and mfa when two different factors were used. */
export function amrOf(methods: readonly string[]): string[] {
  const values = factors(methods).map((m) => RFC8176[m] ?? m);
  return factors(methods).length > 1 ? [...values, 'mfa'] : values;
}

export function acrOf(methods: readonly string[]): string {
  return factors(methods).length > 1 ? ACR_MULTI_FACTOR : ACR_ONE_FACTOR;
}

/**
 * Whether a sign-in satisfies the acr_values asked for (OpenID Connect Core 3.1.2.1: in order of preference,
 * voluntary): nothing known asked, or one of the known values asked is met. The multi-factor level meets both.
 */
export function acrSatisfied(requested: readonly string[] | undefined, methods: readonly string[]): boolean {
  const known = (requested ?? []).filter((v) => (ACR_VALUES as readonly string[]).includes(v));
  if (known.length === 0) return true;
  const level = acrOf(methods);
  return known.some((v) => v === level || v === ACR_ONE_FACTOR);
}
