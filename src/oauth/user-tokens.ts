// A person's tokens at the token endpoint: redeeming an authorization code (RFC 6749 4.1.3, RFC 7636 4.6) and
// rotating a refresh token (RFC 6749 6, RFC 9700 4.14.2). Each token goes through the issuing pipeline, so
// each emits TokenMinted; the grant's state (codes, refresh families) is the organization's, by its actor.
import { createHash, randomBytes } from 'node:crypto';
import type { Consistency, IssuePipeline } from '../auth/issue.js';
import type { GrantOutcome, MintGrantInput, OAuthGrant } from '../domain/oauth-grants.js';
import type { OrgActor } from '../org/actor.js';
import type { PendingToken } from '../tokens/sign.js';
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

export type RefusalCode = 'invalid_request' | 'invalid_grant' | 'unauthorized_client' | 'invalid_scope';

export interface UserTokenDeps {
  pipeline: Pick<IssuePipeline, 'issue'>;
  /** signs an access token (typ at+jwt) with this lifetime, seconds */
  signAccessToken(claims: Record<string, unknown>, ttl: number): PendingToken;
  /** the audience of the person's access tokens: the issuer, whose userinfo and introspection accept them */
  issuer(): string;
  newGrantId(): string;
  /** the error the token endpoint answers (RFC 6749 5.2) */
  refuse(code: RefusalCode, description: string): Error;
}

/** RFC 6749 5.1, as every grant answers it */
export type UserTokenResponse = TokenResponse;

export interface UserTokens {
  /** `binding`: the access token is DPoP-bound to that key (RFC 9449 6.1) */
  authorizationCode(org: OrgActor, client: UserTokenClient, params: { code?: string | undefined; redirect_uri?: string | undefined; code_verifier?: string | undefined }, consistency: Consistency, binding?: TokenBinding): Promise<UserTokenResponse>;
  refreshToken(org: OrgActor, client: UserTokenClient, params: { refresh_token?: string | undefined; scope?: string | undefined }, consistency: Consistency, binding?: TokenBinding): Promise<UserTokenResponse>;
  /**
   * POST /oauth2/tokens/mint: a grant the organization begins for a person, without a sign-in (amr ["api"]);
   * a refresh token with scope offline_access, an ID token with openid. custom_claims already admitted.
   */
  mint(org: OrgActor, client: UserTokenClient, input: MintInput, consistency: Consistency): Promise<UserTokenResponse>;
}

export interface MintInput {
  person_id: string;
  scope: string[];
  custom_claims?: Record<string, unknown> | undefined;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');
/** RFC 7636 4.1 */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** A refresh token names its grant, so the grant is found without an index; only its hash is stored. */
const newRefreshToken = (grantId: string) => `${grantId}.${randomBytes(32).toString('base64url')}`;

export function createUserTokens(deps: UserTokenDeps): UserTokens {
  /** The access token, then the ID token whose at_hash names it (openid scope only). */
  async function tokens(org: OrgActor, client: UserTokenClient, grant: OAuthGrant, consistency: Consistency, nonce: string | undefined, refresh_token: string | undefined, binding?: TokenBinding): Promise<UserTokenResponse> {
    const g: GrantContext = { client_id: client.client_id, scope: grant.scope, grant_id: grant.grant_id, facts: grant };
    const access = await deps.pipeline.issue(org, {
      method: 'api',
      person_id: grant.person_id,
      mint_token_api: false,
      consistency,
      profile: accessTokenProfile(g, deps.issuer()),
      sign: (claims) => deps.signAccessToken(binding === undefined ? claims : { ...claims, cnf: { jkt: binding.jkt } }, client.access_token_duration),
    });
    const response: UserTokenResponse = { access_token: access.token, token_type: binding === undefined ? 'Bearer' : 'DPoP', expires_in: access.exp - access.iat, scope: grant.scope.join(' ') };
    if (grant.scope.includes('openid')) {
      const person = org.state.persons.get(grant.person_id);
      const id = await deps.pipeline.issue(org, {
        method: 'api',
        person_id: grant.person_id,
        mint_token_api: false,
        consistency,
        profile: idTokenProfile(g, { person: person ?? { handles: [] }, nonce, access_token: access.token }),
      });
      response.id_token = id.token;
    }
    if (refresh_token !== undefined) response.refresh_token = refresh_token;
    return response;
  }

  /** A person deleted or deactivated since the sign-in gets nothing more from the grant. */
  function requirePerson(org: OrgActor, grant: OAuthGrant): void {
    if (org.state.persons.get(grant.person_id)?.active !== true) throw deps.refuse('invalid_grant', 'the person of this grant is no longer active');
  }

  return {
    async authorizationCode(org, client, params, consistency, binding) {
      if (!client.grant_types.includes('authorization_code')) throw deps.refuse('unauthorized_client', 'the client may not use the authorization_code grant');
      if (!params.code) throw deps.refuse('invalid_request', 'code is required');
      // RFC 6749 4.1.3: required when the authorization request had it; it could omit it only for a client
      // with one registered redirect URI, which the code is then bound to.
      const redirectUri = params.redirect_uri || (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined);
      if (!redirectUri) throw deps.refuse('invalid_request', 'redirect_uri is required: the one of the authorization request');
      if (params.code_verifier !== undefined && !VERIFIER.test(params.code_verifier)) throw deps.refuse('invalid_grant', 'code_verifier must be 43-128 characters of A-Z a-z 0-9 - . _ ~');
      const grantId = deps.newGrantId();
      const refresh = client.grant_types.includes('refresh_token') ? newRefreshToken(grantId) : undefined;
      // A grant without a refresh token still lives as long as its access token, so that revoking it (a
      // replayed code) reaches that token.
      const ttl = Math.max(client.access_token_duration, refresh === undefined ? 0 : client.refresh_token_duration) * 1000;
      const { reply } = await org.execute<GrantOutcome>({
        kind: 'RedeemOAuthCode',
        input: {
          code_hash: sha256(params.code),
          client_id: client.client_id,
          redirect_uri: redirectUri,
          verifier_challenge: params.code_verifier === undefined ? undefined : sha256(params.code_verifier),
          grant_id: grantId,
          ...(refresh !== undefined && { refresh_hash: sha256(refresh) }),
          grant_ttl_ms: ttl,
          ...(refresh !== undefined && binding !== undefined && client.public === true && { jkt: binding.jkt }),
        },
      });
      if (!reply.ok) throw deps.refuse(reply.error, reply.description);
      requirePerson(org, reply.grant);
      return tokens(org, client, reply.grant, consistency, reply.code?.nonce, refresh, binding);
    },

    async mint(org, client, input, consistency) {
      const grantId = deps.newGrantId();
      const refresh = input.scope.includes('offline_access') ? newRefreshToken(grantId) : undefined;
      const ttl = Math.max(client.access_token_duration, refresh === undefined ? 0 : client.refresh_token_duration) * 1000;
      const grant: MintGrantInput = {
        grant_id: grantId,
        client_id: client.client_id,
        person_id: input.person_id,
        amr: ['api'],
        ...(input.custom_claims !== undefined && Object.keys(input.custom_claims).length > 0 && { custom_claims: input.custom_claims }),
        scope: input.scope,
        ...(refresh !== undefined && { refresh_hash: sha256(refresh) }),
        grant_ttl_ms: ttl,
      };
      const { reply } = await org.execute<OAuthGrant>({ kind: 'MintOAuthGrant', input: grant });
      return tokens(org, client, reply, consistency, undefined, refresh);
    },

    async refreshToken(org, client, params, consistency, binding) {
      if (!client.grant_types.includes('refresh_token')) throw deps.refuse('unauthorized_client', 'the client may not use the refresh_token grant');
      const presented = params.refresh_token;
      if (!presented) throw deps.refuse('invalid_request', 'refresh_token is required');
      const dot = presented.indexOf('.');
      if (dot <= 0) throw deps.refuse('invalid_grant', 'the refresh token is unknown or expired');
      const grantId = presented.slice(0, dot);
      const current = org.state.oauth_grants.get(grantId);
      // RFC 6749 6: a narrower scope may be asked for, never a wider one.
      let scope = current?.scope;
      if (params.scope !== undefined && current !== undefined && current.client_id === client.client_id) {
        const asked = [...new Set(params.scope.split(' ').filter((s) => s !== ''))];
        const wider = asked.find((s) => !current.scope.includes(s));
        if (wider !== undefined) throw deps.refuse('invalid_scope', `scope "${wider.slice(0, 100)}" was not granted`);
        scope = asked;
      }
      const next = newRefreshToken(grantId);
      const { reply } = await org.execute<GrantOutcome>({
        kind: 'RotateOAuthRefresh',
        input: { grant_id: grantId, presented_hash: sha256(presented), client_id: client.client_id, next_hash: sha256(next), grant_ttl_ms: client.refresh_token_duration * 1000, ...(binding !== undefined && { jkt: binding.jkt }) },
      });
      if (!reply.ok) throw deps.refuse(reply.error, reply.description);
      requirePerson(org, reply.grant);
      return tokens(org, client, { ...reply.grant, scope: scope ?? reply.grant.scope }, consistency, undefined, next, binding);
    },
  };
}
