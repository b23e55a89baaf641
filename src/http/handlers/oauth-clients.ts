// OAuth 2.0 clients of the organization's authorization server: create (the secret shown once), list, get,
// change, delete, and a new secret. Management routes: API key, envelope.
import { Type, type Static } from '@sinclair/typebox';
import { ACCESS_TOKEN_DURATION, MAX_CLIENT_KEYS, MAX_EXCHANGE_AUDIENCES, MAX_EXCHANGE_SUBJECT_CLIENTS, MAX_OAUTH_SCOPES, MAX_REDIRECT_URIS, MAX_RESOURCES, OAUTH_GRANT_TYPES, REFRESH_TOKEN_DURATION, TOKEN_ENDPOINT_AUTH_METHODS, oauthClientView, requireOAuthClient, type OAuthClientInput, type OAuthClientPatch } from '../../domain/oauth-clients.js';
import { pageOfMap, PagingQuery, PaginationMeta, type PagingParams } from '../paging.js';
import { route, type Request, type Route } from '../route.js';
import { execute, type HandlerDeps } from './deps.js';

const PATH = '/oauth2/clients';
const WRITE_ERRORS = [400, 401, 403, 404, 408];
const READ_ERRORS = [400, 401, 403, 404];

const GrantType = Type.Union(OAUTH_GRANT_TYPES.map((g) => Type.Literal(g)));
const AuthMethod = Type.Union(TOKEN_ENDPOINT_AUTH_METHODS.map((m) => Type.Literal(m)), {
  description: 'RFC 7591 2: none for a public client; private_key_jwt (RFC 7523) with jwks or jwks_uri; unnamed, a client with a secret may use client_secret_basic or client_secret_post',
});
/** Public keys only; the domain checks each key (kty, no private members, loadable). */
export const Jwks = Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.Unknown()), { minItems: 1, maxItems: MAX_CLIENT_KEYS }) }, { description: 'RFC 7517 JWK Set of the public keys that verify its client assertions (private_key_jwt)' });
export const JwksUri = Type.String({ minLength: 1, maxLength: 2048, description: 'https URL of its JWK Set, fetched through the same address guard as webhook calls; instead of jwks' });
const Fields = {
  client_name: Type.String({ minLength: 1, maxLength: 256 }),
  scopes: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: MAX_OAUTH_SCOPES, description: 'the scopes the client may ask for (RFC 6749 3.3 scope tokens)' }),
  grant_types: Type.Array(GrantType, { minItems: 1, maxItems: OAUTH_GRANT_TYPES.length }),
  redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: MAX_REDIRECT_URIS, description: 'exact-match redirect URIs: absolute, no fragment; http only for loopback' }),
  resources: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: MAX_RESOURCES, description: 'RFC 8707 resources (absolute URIs, no fragment) its client_credentials tokens may name as their audience; default none, so only the issuer' }),
  access_token_duration: Type.Integer({ minimum: ACCESS_TOKEN_DURATION.min, maximum: ACCESS_TOKEN_DURATION.max, description: `seconds, default ${ACCESS_TOKEN_DURATION.default}` }),
  refresh_token_duration: Type.Integer({ minimum: REFRESH_TOKEN_DURATION.min, maximum: REFRESH_TOKEN_DURATION.max, description: `seconds, default ${REFRESH_TOKEN_DURATION.default}` }),
  post_logout_redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: MAX_REDIRECT_URIS, description: 'OpenID RP-Initiated Logout: exact-match URIs the end-session endpoint may send the browser back to; default none' }),
  backchannel_logout_uri: Type.String({ maxLength: 2048, description: "OpenID Back-Channel Logout: where logout tokens are POSTed when a session the client received tokens in ends; '' removes it" }),
  backchannel_logout_session_required: Type.Boolean({ description: 'the client needs sid in logout tokens (always sent); default false' }),
  token_endpoint_auth_method: AuthMethod,
  jwks: Type.Union([Jwks, Type.Null()]),
  jwks_uri: Type.Union([JwksUri, Type.Null()]),
  require_pushed_authorization_requests: Type.Boolean({ description: 'RFC 9126 6: its authorization requests must be pushed (POST /oauth2/par) first; default false' }),
  token_exchange: Type.Object(
    {
      audiences: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: MAX_EXCHANGE_AUDIENCES, description: 'the audience (or resource) values its exchanged tokens may be for' }),
      subject_clients: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: MAX_EXCHANGE_SUBJECT_CLIENTS, description: 'the clients whose access tokens it may exchange (subject or actor token)' }),
      identity_tokens: Type.Optional(Type.Boolean({ description: "whether it may exchange identity tokens of the organization's persons; default false" })),
    },
    { additionalProperties: false, description: 'RFC 8693 token exchange policy; needs the token-exchange grant type' },
  ),
};
const CreateBody = Type.Object(
  {
    client_name: Fields.client_name,
    scopes: Fields.scopes,
    grant_types: Fields.grant_types,
    redirect_uris: Type.Optional(Fields.redirect_uris),
    resources: Type.Optional(Fields.resources),
    public: Type.Optional(Type.Boolean({ description: 'a public client has no secret, may not use client_credentials, and must use PKCE' })),
    access_token_duration: Type.Optional(Fields.access_token_duration),
    refresh_token_duration: Type.Optional(Fields.refresh_token_duration),
    post_logout_redirect_uris: Type.Optional(Fields.post_logout_redirect_uris),
    backchannel_logout_uri: Type.Optional(Fields.backchannel_logout_uri),
    backchannel_logout_session_required: Type.Optional(Fields.backchannel_logout_session_required),
    token_endpoint_auth_method: Type.Optional(Fields.token_endpoint_auth_method),
    jwks: Type.Optional(Jwks),
    jwks_uri: Type.Optional(JwksUri),
    require_pushed_authorization_requests: Type.Optional(Fields.require_pushed_authorization_requests),
    token_exchange: Type.Optional(Fields.token_exchange),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Partial(Type.Object(Fields), { additionalProperties: false, description: 'client_id and public never change; jwks and jwks_uri replace each other, null removes one' });
const Client = Type.Object({
  client_id: Type.String(),
  client_name: Type.String(),
  grant_types: Type.Array(GrantType),
  response_types: Type.Array(Type.Array(Type.Literal('code')), { description: 'the allowed combinations of response types' }),
  scopes: Type.Array(Type.String()),
  public: Type.Boolean(),
  redirect_uris: Type.Array(Type.String()),
  resources: Type.Array(Type.String()),
  access_token_duration: Type.Integer(),
  refresh_token_duration: Type.Integer(),
  post_logout_redirect_uris: Type.Optional(Type.Array(Type.String(), { description: 'present once set' })),
  backchannel_logout_uri: Type.Optional(Type.String({ description: 'present once set' })),
  backchannel_logout_session_required: Type.Optional(Type.Boolean({ description: 'present once set' })),
  token_endpoint_auth_method: AuthMethod,
  jwks: Type.Optional(Jwks),
  jwks_uri: Type.Optional(Type.String()),
  require_pushed_authorization_requests: Type.Boolean(),
  registration_token_id: Type.Optional(Type.String({ description: 'a client that registered itself (RFC 7591): the initial access token it used' })),
  created_at: Type.String(),
  token_exchange: Type.Optional(Type.Object({ audiences: Type.Array(Type.String()), subject_clients: Type.Array(Type.String()), identity_tokens: Type.Boolean() })),
});
const Created = Type.Composite([Client, Type.Object({ client_secret: Type.Optional(Type.String({ description: 'shown only here; absent for a public client and for private_key_jwt' })) })]);
/** The original's hosted-UI configuration: these fields typed, any others kept as given. */
const UiConfiguration = Type.Object(
  {
    dynamicFlowConfig: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    dynamicFlowEnabled: Type.Optional(Type.Boolean()),
    handleTypes: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 16 })),
    logoUrl: Type.Optional(Type.String({ maxLength: 2048 })),
    pageBackgroundColor: Type.Optional(Type.String({ maxLength: 256 })),
    showBadge: Type.Optional(Type.Boolean()),
    storeLastFactor: Type.Optional(Type.Boolean()),
    supportURL: Type.Optional(Type.String({ maxLength: 2048 })),
    alternativeAuthURL: Type.Optional(Type.String({ maxLength: 2048 })),
    faviconUrl: Type.Optional(Type.String({ maxLength: 2048 })),
    pageTitle: Type.Optional(Type.String({ maxLength: 256 })),
    themeVars: Type.Optional(Type.Record(Type.String(), Type.String())),
    textOverrides: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: true, description: 'replaced whole by PUT; {} until set' },
);
const ListQuery = Type.Object(PagingQuery, { additionalProperties: false });

/** Optional fields go into a command only when given, so that commands stay exact-optional. */
function given<T extends object>(fields: T): T {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as T;
}

export function oauthClientRoutes(deps: HandlerDeps, options: { allowInsecure: boolean }): Route[] {
  const id = (req: Request<unknown, unknown>) => req.params['oauth_client_id'] as string;
  return [
    route({
      method: 'get',
      path: `${PATH}/{oauth_client_id}/ui-configuration`,
      summary: "The client's hosted-UI configuration ({} until set)",
      tag: 'oauth2',
      auth: 'key',
      success: { status: 200, result: UiConfiguration },
      errors: READ_ERRORS,
      handler: (req) => ({ status: 200, result: requireOAuthClient(req.org.state, id(req)).ui_configuration ?? {} }),
    }),
    route<Static<typeof UiConfiguration>>({
      method: 'put',
      path: `${PATH}/{oauth_client_id}/ui-configuration`,
      summary: "Replace the client's hosted-UI configuration; answers it",
      tag: 'oauth2',
      auth: 'key',
      body: UiConfiguration,
      success: { status: 201, result: UiConfiguration },
      errors: WRITE_ERRORS,
      handler: async (req) => ({ status: 201, result: await execute(deps, req, { kind: 'SetOAuthClientUiConfiguration', client_id: id(req), ui: req.body }) }),
    }),
    route<Static<typeof CreateBody>>({
      method: 'post',
      path: PATH,
      summary: 'Create an OAuth 2.0 client; its secret is in this answer only',
      tag: 'oauth2',
      auth: 'key',
      body: CreateBody,
      success: { status: 201, result: Created },
      errors: WRITE_ERRORS,
      handler: async (req) => ({ status: 201, result: await execute(deps, req, { kind: 'CreateOAuthClient', input: given(req.body) as OAuthClientInput, allow_insecure: options.allowInsecure }) }),
    }),
    route<unknown, PagingParams>({
      method: 'get',
      path: PATH,
      summary: "List the organization's OAuth 2.0 clients, without secrets (offset or cursor paging)",
      tag: 'oauth2',
      auth: 'key',
      query: ListQuery,
      success: { status: 200, result: Type.Array(Client), meta: PaginationMeta },
      errors: READ_ERRORS,
      handler: (req) => {
        // Client IDs are UUIDv7: key order is creation order.
        return pageOfMap(deps.pager, req.org.id, req.query, req.org.state.oauth_clients, 'oauth2/clients', oauthClientView);
      },
    }),
    route({
      method: 'get',
      path: `${PATH}/{oauth_client_id}`,
      summary: 'Get an OAuth 2.0 client, without its secret',
      tag: 'oauth2',
      auth: 'key',
      success: { status: 200, result: Client },
      errors: READ_ERRORS,
      handler: (req) => ({ status: 200, result: oauthClientView(requireOAuthClient(req.org.state, id(req))) }),
    }),
    route<Static<typeof PatchBody>>({
      method: 'patch',
      path: `${PATH}/{oauth_client_id}`,
      summary: "Change an OAuth 2.0 client's name, scopes, grant types, redirect URIs or token durations",
      tag: 'oauth2',
      auth: 'key',
      body: PatchBody,
      success: { status: 200, result: Client },
      errors: WRITE_ERRORS,
      handler: async (req) => ({ status: 200, result: await execute(deps, req, { kind: 'UpdateOAuthClient', client_id: id(req), patch: given(req.body) as OAuthClientPatch, allow_insecure: options.allowInsecure }) }),
    }),
    route({
      method: 'delete',
      path: `${PATH}/{oauth_client_id}`,
      summary: 'Delete an OAuth 2.0 client; its access tokens stop being active',
      tag: 'oauth2',
      auth: 'key',
      success: { status: 204 },
      errors: WRITE_ERRORS,
      handler: async (req) => {
        await execute(deps, req, { kind: 'DeleteOAuthClient', client_id: id(req) });
        return { status: 204 };
      },
    }),
    route({
      method: 'put',
      path: `${PATH}/{oauth_client_id}/secret`,
      summary: 'Give a confidential OAuth 2.0 client a new secret (in this answer only); the old one stops working',
      tag: 'oauth2',
      auth: 'key',
      success: { status: 200, result: Type.Object({ client_secret: Type.String() }) },
      errors: WRITE_ERRORS,
      handler: async (req) => ({ status: 200, result: await execute(deps, req, { kind: 'RotateOAuthClientSecret', client_id: id(req) }) }),
    }),
  ];
}
