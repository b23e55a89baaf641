// A person's tokens of a grant: the access token and the ID token through the issuing pipeline, as tokens of
// the grant's sign-in (method 'oauth': its authenticated_methods, no hooks, no new sign-in), each emitting
// TokenMinted; refresh tokens as the grant's, stored only hashed. The grants that redeem a code or rotate a
// refresh token are grants/authorization-code.ts and grants/refresh-token.ts; POST /oauth2/tokens/mint is here.
import { createHash, randomBytes } from 'node:crypto';
import type { Consistency, IssuePipeline } from '../auth/issue.js';
import type { MintGrantInput, OAuthGrant } from '../domain/oauth-grants.js';
import type { OrgActor } from '../org/actor.js';
import type { PendingToken } from '../tokens/sign.js';
import { oauthError } from './errors.js';
import { accessTokenProfile, idTokenProfile, type GrantContext } from './id-token.js';
import type { TokenBinding, TokenResponse } from './grants/grant.js';

/** What a person's grants need of a client. */
export interface UserTokenClient {
  client_id: string;
  grant_types: readonly string[];
  redirect_uris: readonly string[];
  /** seconds */
  access_token_duration: number;
  refresh_token_duration: number;
  /** a public client's refresh tokens are bound to its DPoP key (RFC 9449 5); a confidential one authenticates instead */
  public?: boolean;
}

export interface UserTokenDeps {
  pipeline: Pick<IssuePipeline, 'issue'>;
  /** signs an access token (typ at+jwt) with this lifetime, seconds */
  signAccessToken(claims: Record<string, unknown>, ttl: number): PendingToken;
  /** the audience of the person's access tokens: the issuer, whose userinfo and introspection accept them */
  issuer(): string;
  newGrantId(): string;
}

/** A grant about to begin: its ID and refresh token, and how long it lives. */
export interface NewGrant {
  grant_id: string;
  /** handed out once; only refresh_hash is stored */
  refresh_token?: string | undefined;
  refresh_hash?: string;
  grant_ttl_ms: number;
}

/** What a grant's tokens carry besides the grant: the code's nonce, the refresh token handed out, the DPoP key. */
export interface IssueExtras {
  nonce?: string | undefined;
  refresh_token?: string | undefined;
  binding?: TokenBinding | undefined;
}

export interface UserTokens {
  /** A grant's new ID, with a refresh token when `refresh`. */
  begin(client: UserTokenClient, refresh: boolean): NewGrant;
  /**
   * The grant's access token, then its ID token (scope openid) naming the access token in at_hash, and the
   * refresh token given; with a binding, the access token is DPoP-bound to that key (RFC 9449 6.1). A person
   * deleted or deactivated since the sign-in gets nothing: invalid_grant.
   */
  issue(org: OrgActor, client: UserTokenClient, grant: OAuthGrant, consistency: Consistency, extras: IssueExtras): Promise<TokenResponse>;
  /**
   * POST /oauth2/tokens/mint: a grant the organization begins for a person, without a sign-in (amr ["api"]);
   * a refresh token with scope offline_access, an ID token with openid. custom_claims already admitted.
   */
  mint(org: OrgActor, client: UserTokenClient, input: MintInput, consistency: Consistency): Promise<TokenResponse>;
}

export interface MintInput {
  person_id: string;
  scope: string[];
  custom_claims?: Record<string, unknown> | undefined;
}

/** How codes, verifiers and refresh tokens are compared and stored: SHA-256, base64url. */
export const sha256 = (value: string): string => createHash('sha256').update(value).digest('base64url');

/** A refresh token names its grant, so the grant is found without an index; only its hash is stored. */
export const newRefreshToken = (grantId: string): string => `${grantId}.${randomBytes(32).toString('base64url')}`;

export function createUserTokens(deps: UserTokenDeps): UserTokens {
  async function issue(org: OrgActor, client: UserTokenClient, grant: OAuthGrant, consistency: Consistency, extras: IssueExtras): Promise<TokenResponse> {
    if (org.state.persons.get(grant.person_id)?.active !== true) throw oauthError('invalid_grant', 'the person of this grant is no longer active');
    const g: GrantContext = { client_id: client.client_id, scope: grant.scope, grant_id: grant.grant_id, facts: grant };
    // Both tokens are of the grant's sign-in, recorded when it happened: its methods, its authentications.
    const ofSignIn = { method: 'oauth', person_id: grant.person_id, authenticated_methods: grant.amr, authentications: grant.authentications ?? [], consistency } as const;
    const access = await deps.pipeline.issue(org, {
      ...ofSignIn,
      profile: accessTokenProfile(g, deps.issuer()),
      sign: (claims) => deps.signAccessToken(extras.binding === undefined ? claims : { ...claims, cnf: { jkt: extras.binding.jkt } }, client.access_token_duration),
    });
    const response: TokenResponse = { access_token: access.token, token_type: extras.binding === undefined ? 'Bearer' : 'DPoP', expires_in: access.exp - access.iat, scope: grant.scope.join(' ') };
    if (grant.scope.includes('openid')) {
      const person = org.state.persons.get(grant.person_id);
      const id = await deps.pipeline.issue(org, { ...ofSignIn, profile: idTokenProfile(g, { person: person ?? { handles: [] }, nonce: extras.nonce, access_token: access.token }) });
      response.id_token = id.token;
    }
    if (extras.refresh_token !== undefined) response.refresh_token = extras.refresh_token;
    return response;
  }

  function begin(client: UserTokenClient, refresh: boolean): NewGrant {
    const grant_id = deps.newGrantId();
    const refresh_token = refresh ? newRefreshToken(grant_id) : undefined;
    // A grant without a refresh token still lives as long as its access token, so that revoking it (a
    // replayed code) reaches that token.
    const grant_ttl_ms = Math.max(client.access_token_duration, refresh ? client.refresh_token_duration : 0) * 1000;
    return { grant_id, refresh_token, ...(refresh_token !== undefined && { refresh_hash: sha256(refresh_token) }), grant_ttl_ms };
  }

  return {
    begin,
    issue,
    async mint(org, client, input, consistency) {
      const { refresh_token, ...fresh } = begin(client, input.scope.includes('offline_access'));
      const grant: MintGrantInput = {
        ...fresh,
        client_id: client.client_id,
        person_id: input.person_id,
        amr: ['api'],
        ...(input.custom_claims !== undefined && Object.keys(input.custom_claims).length > 0 && { custom_claims: input.custom_claims }),
        scope: input.scope,
      };
      const { reply } = await org.execute<OAuthGrant>({ kind: 'MintOAuthGrant', input: grant });
      return issue(org, client, reply, consistency, { refresh_token });
    },
  };
}
