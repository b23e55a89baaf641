// Claim names an identity token keeps for itself: custom claims may not use them, nor may a groups claim.

/**
 * Claim names custom claims (API, hooks) may not set; the configured groups claim name is reserved too.
 * The one list: tokens/claims.ts and the PATCH of groups_claim_name read it here.
 */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  'aud', 'exp', 'jti', 'iat', 'iss', 'nbf', 'sub', 'prev_token_id', 'oid', 'org_id', 'user_id', 'person_id',
  'first_token', 'authenticated_methods', 'oidc_tokens', 'user_token', 'groups', 'roles', 'access_token',
  'refresh_token', 'id', 'id_token', 'gdpr', 'gdpr_consent', 'gdpr_consent_level', 'parent_user_id',
  'parent_person_id', 'parent_org_id', 'parent_oid', 'attributes', 'custom_claims', 'service', 'sid',
  // ours (the original's list lacks them): an anonymous person's token and an upgrade's carry them
  'person_type', 'prev_anonymous_person_id',
]);

export const DEFAULT_GROUPS_CLAIM = 'groups';

/** Claims every identity token carries besides the reserved ones: a groups claim of that name would overwrite them. */
export const TOKEN_OWNED_CLAIMS: ReadonlySet<string> = new Set(['region']);
