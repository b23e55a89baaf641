// The claims of a person's token (profiles: the identity token today) and the one place custom claims meet
// the names they may not use (domain/claim-names.ts lists them; domain/org-config.ts's groupsClaimName
// decides an organization's groups claim).
import { DEFAULT_GROUPS_CLAIM, RESERVED_CLAIMS } from '../domain/claim-names.js';
import { isReservedKey } from '../domain/reserved-keys.js';
import { badRequest } from '../errors.js';

/** Custom claims of one token, as JSON: enough for any sensible use, and a token still fits in a header. */
export const CUSTOM_CLAIMS_MAX_BYTES = 16 * 1024;

/** The claims identityClaims may produce, besides custom ones (the discovery document lists them). */
export const IDENTITY_CLAIMS: readonly string[] = [
  'iss', 'aud', 'oid', 'sub', 'person_id', 'iat', 'exp', 'jti', 'first_token', 'authenticated_methods', 'region', 'prev_token_id', DEFAULT_GROUPS_CLAIM, 'roles',
  'person_type', 'prev_anonymous_person_id',
];

/** __proto__, constructor and prototype are refused too (domain/reserved-keys.ts says why). */
export function reservedClaim(name: string, groupsClaimName: string = DEFAULT_GROUPS_CLAIM): boolean {
  return RESERVED_CLAIMS.has(name) || name === groupsClaimName || isReservedKey(name);
}

/** The first reserved name among custom claims, for a 400 that names it. */
export function firstReservedClaim(custom: Record<string, unknown>, groupsClaimName: string = DEFAULT_GROUPS_CLAIM): string | undefined {
  for (const name of Object.keys(custom)) if (reservedClaim(name, groupsClaimName)) return name;
  return undefined;
}

/** Custom claims with the reserved ones dropped. */
export function withoutReservedClaims(custom: Record<string, unknown>, groupsClaimName: string = DEFAULT_GROUPS_CLAIM): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(custom)) if (!reservedClaim(name, groupsClaimName)) out[name] = custom[name];
  return out;
}

/** Where custom claims come from: the mint-token API's request, or the answers of token_minted hooks. */
export type CustomClaimsSource = 'api' | 'hook';

/**
 * The one place custom claims meet the reserved names, before any profile sees them. The API's are refused
 * with a 400 naming the first reserved claim (and past CUSTOM_CLAIMS_MAX_BYTES); the hooks' reserved ones
 * are dropped. Answers `custom` itself when it passes as it is.
 */
export function admitCustomClaims(custom: Record<string, unknown>, source: CustomClaimsSource, groupsClaimName: string): Record<string, unknown> {
  const reserved = firstReservedClaim(custom, groupsClaimName);
  if (source === 'hook') return reserved === undefined ? custom : withoutReservedClaims(custom, groupsClaimName);
  if (reserved !== undefined) throw badRequest(`custom_claims: "${reserved}" is a reserved claim name and cannot be set`);
  const bytes = Buffer.byteLength(JSON.stringify(custom), 'utf8');
  if (bytes > CUSTOM_CLAIMS_MAX_BYTES) throw badRequest(`custom_claims: ${bytes} bytes of JSON; at most ${CUSTOM_CLAIMS_MAX_BYTES} are allowed`);
  return custom;
}

/** What every profile builds a person's token from. */
export interface ClaimsInput {
  org: string | { id: string };
  person: { person_id: string; region: string; groups: readonly string[]; roles?: readonly string[] };
  /** e.g. ['api'] for the mint-token API, ['password'] for a password sign-in */
  authenticated_methods: readonly string[];
  first_token: boolean;
  /** jti of the person's previous token, when they had one */
  prev_token_id?: string | undefined;
  /** the organization's token template rendered for the person, reserved names dropped; custom claims win over them */
  template_claims?: Record<string, unknown> | undefined;
  /** already admitted (admitCustomClaims): copied as they are */
  custom_claims?: Record<string, unknown> | undefined;
  groups_claim_name?: string | undefined;
  /** an anonymous person's token says so (person_type: "anonymous", and its authentications) */
  anonymous?: { authentications: ReadonlyArray<{ method: string; timestamp: string }> } | undefined;
  /** the anonymous person the caller held when signing in or registering */
  prev_anonymous_person_id?: string | undefined;
}

/**
 * A kind of token for a person: its audience and the claims of its own. The identity token is the one
 * profile today; an OAuth ID token (aud: the client, nonce) or access token (aud: the resource, scope) is
 * another function over the same input, built on personClaims with its own audience and extra claims.
 */
export type ClaimsProfile = (input: ClaimsInput) => Record<string, unknown>;

/**
 * The claims of a person's token for `aud`, in the order they appear in it. iss, iat, exp and jti are
 * placeholders that TokenIssuer.issue fills in: assigning an existing key keeps its place.
 */
export function personClaims(input: ClaimsInput, aud: string): Record<string, unknown> {
  const orgId = typeof input.org === 'string' ? input.org : input.org.id;
  const { person } = input;
  const claims: Record<string, unknown> = {
    iss: '',
    aud,
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
  if (input.anonymous !== undefined) {
    claims['person_type'] = 'anonymous';
    claims['authentications'] = input.anonymous.authentications.map((a) => ({ ...a }));
  }
  if (input.prev_anonymous_person_id !== undefined) claims['prev_anonymous_person_id'] = input.prev_anonymous_person_id;
  if (person.groups.length > 0) claims[input.groups_claim_name ?? DEFAULT_GROUPS_CLAIM] = [...person.groups];
  if (person.roles !== undefined && person.roles.length > 0) claims['roles'] = [...person.roles];
  const template = input.template_claims;
  if (template !== undefined) for (const name of Object.keys(template)) claims[name] = template[name];
  const custom = input.custom_claims;
  if (custom !== undefined) for (const name of Object.keys(custom)) claims[name] = custom[name];
  return claims;
}

/** The identity token's profile: the organization is its audience. */
export const identityClaims: ClaimsProfile = (input) => personClaims(input, typeof input.org === 'string' ? input.org : input.org.id);
