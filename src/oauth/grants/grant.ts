// What a grant of the token endpoint is: a function from the authenticated client and the form to the token
// response. The table of grants (index.ts) maps grant_type to one; each grant is its own file.
import type { Consistency } from '../../regions/consistency.js';
import type { AccessTokenIssuer } from '../access-tokens.js';
import type { AuthenticatedClient } from '../client-auth.js';
import type { UserTokens } from '../user-tokens.js';

/** The token endpoint's form: RFC 6749 4.x parameters; unknown ones are ignored, as 3.2 requires. */
export interface TokenParams {
  grant_type: string;
  scope?: string;
  /** RFC 8707 resource indicator */
  resource?: string;
  code?: string;
  redirect_uri?: string;
  code_verifier?: string;
  refresh_token?: string;
  [name: string]: string | undefined;
}

/** RFC 6749 5.1 */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  /** seconds */
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
}

/** What grants are built from; a grant that needs more adds it here. */
export interface GrantDeps {
  accessTokens: AccessTokenIssuer;
  /** the deployment's issuer URL, read per use */
  issuer(): string;
  /** a person's grants: beginning one, and issuing its tokens (user-tokens.ts) */
  users: UserTokens;
}

export interface GrantRequest {
  caller: AuthenticatedClient;
  params: TokenParams;
  consistency: Consistency;
}

export type Grant = (request: GrantRequest, deps: GrantDeps) => Promise<TokenResponse>;
