// The claims of an identity token and the names custom claims may not use.

/** Claim names custom claims (API, hooks) may not set; the configured groups claim name is reserved too. */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  'aud', 'exp', 'jti', 'iat', 'iss', 'nbf', 'sub', 'prev_token_id', 'oid', 'org_id', 'user_id', 'person_id',
  'first_token', 'authenticated_methods', 'oidc_tokens', 'user_token', 'groups', 'roles', 'access_token',
  'refresh_token', 'id', 'id_token', 'gdpr', 'gdpr_consent', 'gdpr_consent_level', 'parent_user_id',
  'parent_person_id', 'parent_org_id', 'parent_oid', 'attributes', 'custom_claims', 'service', 'sid',
]);

export const DEFAULT_GROUPS_CLAIM = 'groups';

/** The claims identityClaims may produce, besides custom ones (the discovery document lists them). */
export const IDENTITY_CLAIMS: readonly string[] = [
  'iss', 'aud', 'oid', 'sub', 'person_id', 'iat', 'exp', 'jti', 'first_token', 'authenticated_methods', 'region', 'prev_token_id', DEFAULT_GROUPS_CLAIM, 'roles',
];

/** __proto__ is refused too: assigned as a plain property it would replace the claims object's prototype. */
export function reservedClaim(name: string, groupsClaimName: string = DEFAULT_GROUPS_CLAIM): boolean {
  return RESERVED_CLAIMS.has(name) || name === groupsClaimName || name === '__proto__';
}

/** The first reserved name among custom claims, for a 400 that names it. */
export function firstReservedClaim(custom: Record<string, unknown>, groupsClaimName: string = DEFAULT_GROUPS_CLAIM): string | undefined {
  for (const name of Object.keys(custom)) if (reservedClaim(name, groupsClaimName)) return name;
  return undefined;
}

/** Custom claims with the reserved ones dropped (what a token_minted hook's answer becomes). */
export function withoutReservedClaims(custom: Record<string, unknown>, groupsClaimName: string = DEFAULT_GROUPS_CLAIM): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(custom)) if (!reservedClaim(name, groupsClaimName)) out[name] = custom[name];
  return out;
}

export interface IdentityClaimsInput {
  org: string | { id: string };
  person: { person_id: string; region: string; groups: readonly string[]; roles?: readonly string[] };
  /** e.g. ['api'] for the mint-token API, ['password'] for a password sign-in */
  authenticated_methods: readonly string[];
  first_token: boolean;
  /** jti of the person's previous token, when they had one */
  prev_token_id?: string | undefined;
  /** reserved names among them are dropped here; the mint API rejects them before, with a 400 */
  custom_claims?: Record<string, unknown> | undefined;
  groups_claim_name?: string | undefined;
}

/**
 * The claims of an identity token, in the order they appear in it. iss, iat, exp and jti are
 * placeholders that TokenIssuer.issue fills in: assigning an existing key keeps its place.
 */
export function identityClaims(input: IdentityClaimsInput): Record<string, unknown> {
  const orgId = typeof input.org === 'string' ? input.org : input.org.id;
  const { person } = input;
  const groupsClaim = input.groups_claim_name ?? DEFAULT_GROUPS_CLAIM;
  const claims: Record<string, unknown> = {
    iss: '',
    aud: orgId,
    oid: orgId,
    sub: person.person_id,
    person_id: person.person_id,
    iat: 0,
    exp: 0,
    jti: '',
    first_token: input.first_token,
    authenticated_methods: [...input.authenticated_methods],
    region: person.region,
  };
  if (input.prev_token_id !== undefined) claims['prev_token_id'] = input.prev_token_id;
  if (person.groups.length > 0) claims[groupsClaim] = [...person.groups];
  if (person.roles !== undefined && person.roles.length > 0) claims['roles'] = [...person.roles];
  const custom = input.custom_claims;
  if (custom !== undefined) for (const name of Object.keys(custom)) if (!reservedClaim(name, groupsClaim)) claims[name] = custom[name];
  return claims;
}
