// What a grant of the token endpoint is: a function from the authenticated client and the form to the token
// response. The table of grants (index.ts) maps grant_type to one; each grant is its own file.
import type { Consistency } from '../../regions/consistency.js';
import type { Identified, Verdict } from '../../tokens/validate.js';
import type { AccessTokenIssuer } from '../access-tokens.js';
import type { AuthenticatedClient } from '../client-auth.js';
import type { ActiveToken } from '../introspect.js';
import type { PollPacer } from '../device-polls.js';
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
  /** DPoP when the access token is bound to the key of the request's DPoP proof (RFC 9449 5) */
  token_type: 'Bearer' | 'DPoP';
  /** seconds */
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
  /** RFC 8693 2.2.1: the token exchange's answer names what it issued */
  issued_token_type?: string;
}

/** The service's own tokens presented back to it (token exchange), each checked by its own kind's validator. */
export interface OwnTokens {
  /** an active access token (introspect.ts): its claims and organization */
  accessToken(token: string): Promise<ActiveToken | undefined>;
  /** an identity token (tokens/validate.ts): its person and claims when valid, else the verdict */
  identityToken(token: string): Promise<Identified | Verdict>;
}

/** What grants are built from; a grant that needs more adds it here. */
export interface GrantDeps {
  accessTokens: AccessTokenIssuer;
  /** the deployment's issuer URL, read per use */
  issuer(): string;
  /** a person's grants: beginning one, and issuing its tokens (user-tokens.ts) */
  users: UserTokens;
  ownTokens: OwnTokens;
  /** the pace of device_code polls (RFC 8628 3.5) */
  devicePolls: PollPacer;
  nowMs(): number;
}

/** RFC 9449 6.1: the access token's confirmation of the key it is bound to */
export interface TokenBinding {
  /** the JWK SHA-256 thumbprint (RFC 7638) of the request's DPoP proof key */
  jkt: string;
}

export interface GrantRequest {
  caller: AuthenticatedClient;
  params: TokenParams;
  consistency: Consistency;
  /** the request came with a valid DPoP proof: its tokens are bound to that key */
  dpop?: TokenBinding;
}

export type Grant = (request: GrantRequest, deps: GrantDeps) => Promise<TokenResponse>;
