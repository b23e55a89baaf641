// The identity-token interface that sign-in codes against, served by the token core of src/tokens: the same
// claims, keys and signer as the mint-token API, so every identity token verifies against one published set.
import type { OrgState, Person } from '../domain/state.js';
import { DEFAULT_GROUPS_CLAIM, identityClaims, RESERVED_CLAIMS } from '../tokens/claims.js';
import type { TokenMinter } from '../tokens/mint.js';
import type { PendingToken, TokenIssuer } from '../tokens/sign.js';

export { RESERVED_CLAIMS };

export interface IdentityClaimsInput {
  org: OrgState;
  person: Person;
  authenticated_methods: string[];
  first_token: boolean;
  prev_token_id: string | undefined;
  /** reserved names among them are dropped */
  custom_claims: Record<string, unknown>;
  groups_claim_name: string;
}

export interface TokenPort {
  identityClaims(input: IdentityClaimsInput): Record<string, unknown>;
  /** sets iss, iat, exp and jti, and signs with the current key */
  issue(claims: Record<string, unknown>): PendingToken;
  /** the claim that carries a person's groups in this organization's tokens */
  groupsClaimName(org: OrgState): string;
  /** the person's newest token, so that concurrent sign-ins and mints keep one prev_token_id chain */
  previousToken: TokenMinter['previousToken'];
  record: TokenMinter['record'];
}

export function createTokenPort(issuer: TokenIssuer, minter: TokenMinter): TokenPort {
  return {
    identityClaims: (input) => identityClaims(input),
    issue: (claims) => issuer.issue(claims),
    groupsClaimName: () => DEFAULT_GROUPS_CLAIM,
    previousToken: (org, personId) => minter.previousToken(org, personId),
    record: (org, personId, token, commit) => minter.record(org, personId, token, commit),
  };
}
