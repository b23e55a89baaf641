// The OAuth 2.0 token endpoint and its companions (introspection, revocation): form-encoded, the client
// authenticated by its route's authenticator, errors as RFC 6749 5.2 JSON, bodies as the RFCs define them.
import { Type, type Static } from '@sinclair/typebox';
import type { GrantRequest, TokenParams } from '../../oauth/grants/grant.js';
import type { AccessTokens } from '../../oauth/introspect.js';
import type { TokenEndpoint } from '../../oauth/token-endpoint.js';
import type { Authenticator, Principal } from '../auth.js';
import { route, type Request, type Route } from '../route.js';
import { execute, type HandlerDeps } from './deps.js';

/** RFC 6749 5.1: token responses (and so errors, and introspection answers) must not be cached. */
const NO_STORE = Object.freeze({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });

const Param = (description: string) => Type.Optional(Type.String({ maxLength: 4096, description }));
/** Unknown parameters are ignored (RFC 6749 3.2), so the object stays open. */
const TokenForm = Type.Object(
  {
    grant_type: Type.String({ minLength: 1, maxLength: 256, description: 'client_credentials, authorization_code or refresh_token' }),
    scope: Param('space-delimited; within the client\'s scopes'),
    resource: Param('RFC 8707: the absolute URI of the resource the token is for (its aud); default the issuer'),
    client_id: Param('client_secret_post and none'),
    client_secret: Param('client_secret_post'),
    code: Param('authorization_code'),
    redirect_uri: Param('authorization_code'),
    code_verifier: Param('authorization_code (PKCE)'),
    refresh_token: Param('refresh_token'),
  },
  { additionalProperties: true },
);
const TokenDocument = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  scope: Type.String(),
  id_token: Type.Optional(Type.String()),
  refresh_token: Type.Optional(Type.String()),
});

/** RFC 7662 2.1 and RFC 7009 2.1: the token, a hint of its type, and the client's own credentials. */
const TokenOnlyForm = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 16_384 }),
    token_type_hint: Param('access_token or refresh_token; a hint only'),
    client_id: Param('client_secret_post'),
    client_secret: Param('client_secret_post'),
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
    token_type: Type.Optional(Type.Literal('Bearer')),
  },
  { description: 'only {active: false} for a token that is invalid, expired, revoked, of a deleted client or of another organization' },
);

export interface OAuthTokenRouteDeps {
  handlers: HandlerDeps;
  /** the OAuth client authenticator (client_secret_basic, client_secret_post, none) */
  clientAuth: Authenticator;
  tokens: TokenEndpoint;
  accessTokens: AccessTokens;
}

/** The route's authenticator guarantees it; a principal of another kind here is a wiring mistake. */
export function callerOf(req: Request<unknown, unknown>): Principal & { kind: 'oauth_client' } {
  const p = req.principal;
  if (p.kind !== 'oauth_client') throw new Error(`${p.kind} principal on an OAuth client route`);
  return p;
}

export function oauthTokenRoutes(deps: OAuthTokenRouteDeps): Route[] {
  return [
    route<Static<typeof TokenForm>>({
      method: 'post',
      path: '/oauth2/tokens',
      summary: 'OAuth 2.0 token endpoint (RFC 6749): client_credentials, and the grants of the authorization code flow',
      tag: 'oauth2',
      auth: deps.clientAuth,
      codec: 'form',
      body: TokenForm,
      errorFormat: 'oauth',
      success: { status: 200, document: TokenDocument },
      errors: [400, 401],
      handler: (req) => {
        const request: GrantRequest = { caller: callerOf(req), params: req.body as TokenParams, consistency: req.consistency };
        return deps.tokens.exchange(request).then((document) => ({ status: 200, document, headers: NO_STORE }));
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
