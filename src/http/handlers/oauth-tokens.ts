// The OAuth 2.0 token endpoint and its companions (introspection, revocation): form-encoded, the client
// authenticated by its route's authenticator, errors as RFC 6749 5.2 JSON, bodies as the RFCs define them.
// The original's mint (with the API key) answers in the envelope, as the original does; revoke-all, a client's
// endpoint like the others here, answers as RFC 6749 5.2 does.
import { Type, type Static } from '@sinclair/typebox';
import type { GrantRequest, TokenParams } from '../../oauth/grants/grant.js';
import type { AccessTokens } from '../../oauth/introspect.js';
import type { TokenEndpoint } from '../../oauth/token-endpoint.js';
import type { UserTokens } from '../../oauth/user-tokens.js';
import { STANDARD_SCOPES } from '../../oauth/discovery.js';
import { admitCustomClaims } from '../../tokens/claims.js';
import { groupsClaimName } from '../../domain/org-config.js';
import { requireOAuthClient } from '../../domain/oauth-clients.js';
import { ServiceError, badRequest, quote } from '../../errors.js';
import { DpopRefusal, type Dpop } from '../../oauth/dpop.js';
import { oauthError } from '../../oauth/errors.js';
import type { Authenticator, Principal } from '../auth.js';
import { route, type Request, type Route } from '../route.js';
import { execute, type HandlerDeps } from './deps.js';

const TOKEN_PATH = '/oauth2/tokens';

/** RFC 6749 5.1: token responses (and so errors, and introspection answers) must not be cached. */
const NO_STORE = Object.freeze({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });

const Param = (description: string) => Type.Optional(Type.String({ maxLength: 4096, description }));
/** RFC 7523 2.2: private_key_jwt's form parameters */
export const AssertionParams = {
  client_assertion_type: Param('private_key_jwt: urn:ietf:params:oauth:client-assertion-type:jwt-bearer'),
  client_assertion: Type.Optional(Type.String({ maxLength: 16_384, description: 'private_key_jwt: a JWT signed with a key the client registered; iss and sub its client_id, aud the issuer, a fresh jti' })),
};
/** Unknown parameters are ignored (RFC 6749 3.2), so the object stays open. */
const TokenForm = Type.Object(
  {
    grant_type: Type.String({ minLength: 1, maxLength: 256, description: 'client_credentials, authorization_code, refresh_token, urn:ietf:params:oauth:grant-type:token-exchange or urn:ietf:params:oauth:grant-type:device_code' }),
    scope: Param('space-delimited; within the client\'s scopes'),
    resource: Param('RFC 8707: the absolute URI of the resource the token is for (its aud); default the issuer'),
    client_id: Param('client_secret_post and none; optional with private_key_jwt'),
    client_secret: Param('client_secret_post'),
    ...AssertionParams,
    code: Param('authorization_code'),
    redirect_uri: Param('authorization_code'),
    code_verifier: Param('authorization_code (PKCE)'),
    refresh_token: Param('refresh_token'),
    audience: Param('token exchange (RFC 8693): the target the new token is for'),
    subject_token: Type.Optional(Type.String({ maxLength: 16_384, description: 'token exchange: the token exchanged' })),
    subject_token_type: Param('token exchange: urn:ietf:params:oauth:token-type:access_token or :id_token'),
    actor_token: Type.Optional(Type.String({ maxLength: 16_384, description: 'token exchange: the token of the party acting for the subject (claim act)' })),
    actor_token_type: Param('token exchange: the actor token\'s type'),
    requested_token_type: Param('token exchange: urn:ietf:params:oauth:token-type:access_token, the only one issued'),
  },
  { additionalProperties: true },
);
const TokenDocument = Type.Object({
  access_token: Type.String(),
  token_type: Type.Union([Type.Literal('Bearer'), Type.Literal('DPoP')], { description: 'DPoP when the request carried a DPoP proof (RFC 9449 5)' }),
  expires_in: Type.Integer(),
  scope: Type.String(),
  id_token: Type.Optional(Type.String()),
  refresh_token: Type.Optional(Type.String()),
  issued_token_type: Type.Optional(Type.String({ description: 'token exchange (RFC 8693 2.2.1)' })),
});

/** RFC 7662 2.1 and RFC 7009 2.1: the token, a hint of its type, and the client's own credentials. */
const TokenOnlyForm = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 16_384 }),
    token_type_hint: Param('access_token or refresh_token; a hint only'),
    client_id: Param('client_secret_post'),
    client_secret: Param('client_secret_post'),
    ...AssertionParams,
  },
  { additionalProperties: true },
);
const Introspection = Type.Object(
  {
    active: Type.Boolean(),
    scope: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    sub: Type.Optional(Type.String()),
    aud: Type.Optional(Type.String()),
    iss: Type.Optional(Type.String()),
    exp: Type.Optional(Type.Integer()),
    iat: Type.Optional(Type.Integer()),
    jti: Type.Optional(Type.String()),
    token_type: Type.Optional(Type.Union([Type.Literal('Bearer'), Type.Literal('DPoP')])),
    cnf: Type.Optional(Type.Object({ jkt: Type.String() }, { description: 'RFC 9449 6.2: a DPoP-bound token\'s key thumbprint' })),
  },
  { description: 'only {active: false} for a token that is invalid, expired, revoked, of a deleted client or of another organization' },
);

export interface OAuthTokenRouteDeps {
  handlers: HandlerDeps;
  /** the OAuth client authenticator (client_secret_basic, client_secret_post, none) */
  clientAuth: Authenticator;
  tokens: TokenEndpoint;
  accessTokens: AccessTokens;
  /** a person's grants: POST /oauth2/tokens/mint begins one */
  users: UserTokens;
  /** DPoP proofs at the token endpoint (RFC 9449 5) */
  dpop: Dpop;
}

/** The original's MintOAuth2TokensRequest. */
const MintBody = Type.Object(
  {
    person_id: Type.String({ minLength: 1, maxLength: 100 }),
    client_id: Type.String({ minLength: 1, maxLength: 256, description: 'an OAuth client of the organization' }),
    scopes: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 64, description: "openid adds an ID token, offline_access a refresh token; others among the client's scopes" })),
    custom_claims: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'claims added to the tokens; reserved names are refused' })),
  },
  { additionalProperties: false },
);
const MintRet = Type.Object({ access_token: Type.String(), id_token: Type.Optional(Type.String()), refresh_token: Type.Optional(Type.String()) });
/** The original's RevokeAllOAuth2TokensRequest, form-encoded like the other client endpoints. */
const RevokeAllForm = Type.Object(
  {
    person_id: Type.String({ minLength: 1, maxLength: 100 }),
    until: Type.Optional(Type.String({ maxLength: 64, description: 'RFC 3339: grants begun after it are kept; default now' })),
    client_id: Param('client_secret_post'),
    client_secret: Param('client_secret_post'),
    ...AssertionParams,
  },
  { additionalProperties: false },
);

/** The route's authenticator guarantees it; a principal of another kind here is a wiring mistake. */
export function callerOf(req: Request<unknown, unknown>): Principal & { kind: 'oauth_client' } {
  const p = req.principal;
  if (p.kind !== 'oauth_client') throw new Error(`${p.kind} principal on an OAuth client route`);
  return p;
}

/** The scopes a minted grant may hold: the standard ones, offline_access when the client may refresh, and the client's own. */
function mintScope(client: { scopes: readonly string[]; grant_types: readonly string[] }, asked: readonly string[]): string[] {
  const scope = [...new Set(asked)];
  scope.forEach((s, i) => {
    if (s === 'offline_access') {
      if (!client.grant_types.includes('refresh_token')) throw badRequest(`scopes[${i}]: offline_access needs a client registered for the refresh_token grant`);
    } else if (!STANDARD_SCOPES.includes(s) && !client.scopes.includes(s)) {
      throw badRequest(`scopes[${i}]: scope ${quote(s)} is not allowed for this client`);
    }
  });
  return scope;
}

export function oauthTokenRoutes(deps: OAuthTokenRouteDeps): Route[] {
  return [
    route<Static<typeof MintBody>>({
      method: 'post',
      path: '/oauth2/tokens/mint',
      summary: "Mint a person's OAuth 2.0 tokens for a client of the organization, without a sign-in (authenticated_methods [\"api\"]): a grant like a signed-in person's",
      tag: 'oauth2',
      auth: 'key',
      body: MintBody,
      success: { status: 200, result: MintRet },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const client = requireOAuthClient(req.org.state, req.body.client_id);
        const scope = mintScope(client, req.body.scopes ?? []);
        const custom = req.body.custom_claims === undefined ? undefined : admitCustomClaims(req.body.custom_claims, 'api', groupsClaimName(req.org.state.config));
        const minted = await deps.users.mint(req.org, client, { person_id: req.body.person_id, scope, custom_claims: custom }, req.consistency);
        const result: Static<typeof MintRet> = { access_token: minted.access_token };
        if (minted.id_token !== undefined) result.id_token = minted.id_token;
        if (minted.refresh_token !== undefined) result.refresh_token = minted.refresh_token;
        return { status: 200, result, headers: NO_STORE };
      },
    }),
    route<Static<typeof RevokeAllForm>>({
      method: 'post',
      path: '/oauth2/tokens/revoke-all',
      summary: "Revoke every grant (refresh and access tokens) of the authenticated client for a person, begun until `until` (default now)",
      tag: 'oauth2',
      auth: deps.clientAuth,
      codec: 'form',
      body: RevokeAllForm,
      errorFormat: 'oauth',
      success: { status: 200 },
      errors: [400, 401, 408],
      handler: async (req) => {
        const caller = callerOf(req);
        // A public client's ID is no secret: anyone could name it and end its grants of any person.
        if (caller.method === 'none') throw oauthError('invalid_client', 'revoke-all needs an authenticated client: a public client cannot authenticate, so it may not revoke a person\'s grants');
        // No until: every grant begun before the decision, which is every grant there is.
        const until = req.body.until === undefined ? Number.MAX_SAFE_INTEGER : Date.parse(req.body.until);
        if (req.body.until !== undefined && (!/^\d{4}-\d\d-\d\dT/.test(req.body.until) || Number.isNaN(until))) throw badRequest(`until: ${quote(req.body.until)} is not an RFC 3339 date-time`);
        await execute(deps.handlers, req, { kind: 'RevokeOAuthGrants', client_id: caller.client.client_id, person_id: req.body.person_id, until_ms: until });
        return { status: 200, headers: NO_STORE };
      },
    }),
    route<Static<typeof TokenForm>>({
      method: 'post',
      path: TOKEN_PATH,
      summary: 'OAuth 2.0 token endpoint (RFC 6749): client_credentials, and the grants of the authorization code flow',
      tag: 'oauth2',
      auth: deps.clientAuth,
      codec: 'form',
      body: TokenForm,
      errorFormat: 'oauth',
      headers: ['dpop'],
      success: { status: 200, document: TokenDocument },
      errors: [400, 401],
      handler: async (req) => {
        let jkt: string | undefined;
        try {
          jkt = await deps.dpop.check(req.headers['dpop'], 'POST', TOKEN_PATH);
        } catch (error) {
          if (!(error instanceof DpopRefusal)) throw error;
          // RFC 9449 7.1, 8: in the token endpoint's error form, with the nonce to retry with
          throw new ServiceError('ERR_BAD_REQUEST', error.message, { oauth: error.error, ...(error.nonce !== undefined && { headers: { 'DPoP-Nonce': error.nonce } }) });
        }
        const request: GrantRequest = { caller: callerOf(req), params: req.body as TokenParams, consistency: req.consistency, ...(jkt !== undefined && { dpop: { jkt } }) };
        const nonce = deps.dpop.nonce();
        const document = await deps.tokens.exchange(request);
        return { status: 200, document, headers: nonce === undefined ? NO_STORE : { ...NO_STORE, 'DPoP-Nonce': nonce } };
      },
    }),
    route<Static<typeof TokenOnlyForm>>({
      method: 'post',
      path: '/oauth2/tokens/introspect',
      summary: 'Token introspection (RFC 7662) for clients of the organization: whether an access token is active, and its claims',
      tag: 'oauth2',
      auth: deps.clientAuth,
      codec: 'form',
      body: TokenOnlyForm,
      errorFormat: 'oauth',
      success: { status: 200, document: Introspection },
      errors: [400, 401],
      handler: async (req) => ({ status: 200, document: await deps.accessTokens.introspect(callerOf(req), req.body.token), headers: NO_STORE }),
    }),
    route<Static<typeof TokenOnlyForm>>({
      method: 'post',
      path: '/oauth2/tokens/revoke',
      summary: "Token revocation (RFC 7009): the client's access token stops being active; 200 for any well-formed request",
      tag: 'oauth2',
      auth: deps.clientAuth,
      codec: 'form',
      body: TokenOnlyForm,
      errorFormat: 'oauth',
      success: { status: 200, description: 'empty body' },
      errors: [400, 401, 408],
      handler: async (req) => {
        const command = await deps.accessTokens.revocation(callerOf(req), req.body.token);
        if (command) await execute(deps.handlers, req, command);
        return { status: 200, text: '', headers: NO_STORE };
      },
    }),
  ];
}
