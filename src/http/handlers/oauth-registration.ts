// Dynamic client registration (RFC 7591) and its management protocol (RFC 7592): the registration endpoint
// behind an initial access token, each client's configuration endpoint behind its registration access token,
// both in the standards' JSON and error forms; and the management routes (API key, envelope) that issue,
// list and revoke initial access tokens. Registering, replacing and deleting go through the commands the
// management API's client routes use, so the changes and events are the same.
import { Type, type Static } from '@sinclair/typebox';
import { REGISTRATION_TOKEN_DURATION, registrationTokens, registrationTokenView } from '../../domain/client-registration.js';
import { oauthClientView, requireOAuthClient, type OAuthClientRet } from '../../domain/oauth-clients.js';
import type { OAuthClient } from '../../domain/state.js';
import { ServiceError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { asRegistrationError, inputOf, metadataOf, registrationError, replacementOf, type ClientMetadata } from '../../oauth/client-metadata.js';
import type { Authenticator, Principal } from '../auth.js';
import { route, type Request, type Route } from '../route.js';
import { execute, type HandlerDeps } from './deps.js';
import { Jwks } from './oauth-clients.js';

export const REGISTRATION_PATH = '/oauth2/register';
const TOKENS_PATH = '/oauth2/registration-tokens';
const NO_STORE = Object.freeze({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });

/** RFC 7591 2: what this server understands, typed loosely (the use case says what is wrong in the standard's words); anything else is ignored. */
const Metadata = Type.Object(
  {
    client_id: Type.Optional(Type.String({ description: 'RFC 7592 2.2: required on update, and must be the client\'s' })),
    client_name: Type.Optional(Type.Unknown({ description: 'default "Dynamically registered client"' })),
    redirect_uris: Type.Optional(Type.Unknown({ description: 'array of exact-match redirect URIs' })),
    grant_types: Type.Optional(Type.Unknown({ description: 'default ["authorization_code"]; client_credentials, authorization_code, refresh_token' })),
    response_types: Type.Optional(Type.Unknown({ description: '["code"] with authorization_code, else []' })),
    token_endpoint_auth_method: Type.Optional(Type.Unknown({ description: 'client_secret_basic (default), client_secret_post, private_key_jwt, none (a public client)' })),
    scope: Type.Optional(Type.Unknown({ description: 'space-separated scopes the client may ask for' })),
    jwks: Type.Optional(Type.Unknown({ description: 'private_key_jwt: public keys' })),
    jwks_uri: Type.Optional(Type.Unknown({ description: 'private_key_jwt: https URL of the public keys' })),
    require_pushed_authorization_requests: Type.Optional(Type.Unknown({ description: 'RFC 9126 6; default false' })),
  },
  { additionalProperties: true },
);
const Registered = Type.Object(
  {
    client_id: Type.String(),
    client_secret: Type.Optional(Type.String({ description: 'only in the registration\'s answer; absent for none and private_key_jwt' })),
    client_secret_expires_at: Type.Optional(Type.Integer({ description: '0: never' })),
    client_id_issued_at: Type.Integer(),
    registration_access_token: Type.Optional(Type.String({ description: 'only in the registration\'s answer: the bearer token of registration_client_uri' })),
    registration_client_uri: Type.String(),
    client_name: Type.String(),
    redirect_uris: Type.Array(Type.String()),
    grant_types: Type.Array(Type.String()),
    response_types: Type.Array(Type.String()),
    token_endpoint_auth_method: Type.String(),
    scope: Type.String(),
    jwks: Type.Optional(Jwks),
    jwks_uri: Type.Optional(Type.String()),
    require_pushed_authorization_requests: Type.Boolean(),
  },
  { additionalProperties: false },
);

const TokenBody = Type.Object(
  {
    description: Type.Optional(Type.String({ maxLength: 256, description: 'who the token is for' })),
    expires_in: Type.Optional(Type.Integer({ minimum: REGISTRATION_TOKEN_DURATION.min, maximum: REGISTRATION_TOKEN_DURATION.max, description: 'seconds; default: until revoked' })),
  },
  { additionalProperties: false },
);
const TokenView = Type.Object({ id: Type.String(), description: Type.String(), created_at: Type.String(), expires_at: Type.Union([Type.String(), Type.Null()]) });
const IssuedToken = Type.Composite([TokenView, Type.Object({ token: Type.String({ description: 'shown only here: Authorization: Bearer at POST /oauth2/register' }) })]);

export interface RegistrationRouteDeps {
  handlers: HandlerDeps;
  initialAccessToken: Authenticator;
  registrationAccessToken: Authenticator;
  issuer(): string;
  allowInsecure: boolean;
  clock: Pick<Clock, 'nowMs'>;
}

/** The route's authenticator guarantees the kind; another here is a wiring mistake. */
function principal<K extends 'registrar' | 'registered_client'>(req: Request<unknown, unknown>, kind: K): Principal & { kind: K } {
  const p = req.principal;
  if (p.kind !== kind) throw new Error(`${p.kind} principal on a ${kind} route`);
  return p as Principal & { kind: K };
}

export function oauthRegistrationRoutes(deps: RegistrationRouteDeps): Route[] {
  const clientUri = (clientId: string) => `${deps.issuer()}${REGISTRATION_PATH}/${encodeURIComponent(clientId)}`;
  const document = (c: OAuthClient, view: OAuthClientRet = oauthClientView(c)) => metadataOf(c, view, clientUri(c.client_id));
  /** The path's client must be the token's: another client's configuration is as unknown as a wrong token (RFC 7592 3). */
  const self = (req: Request<unknown, unknown>): OAuthClient => {
    const { client } = principal(req, 'registered_client');
    if (req.params['client_id'] !== client.client_id) throw new ServiceError('ERR_UNAUTHORIZED', 'the registration access token is not this client\'s', { oauth: 'invalid_token', headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
    return client;
  };
  const protocol = { tag: 'oauth2', errorFormat: 'oauth' as const };
  return [
    route<Static<typeof Metadata>>({
      ...protocol,
      method: 'post',
      path: REGISTRATION_PATH,
      summary: 'Dynamic client registration (RFC 7591): a client registers itself with an initial access token; its secret and registration access token are in this answer only',
      auth: deps.initialAccessToken,
      body: Metadata,
      success: { status: 201, document: Registered },
      errors: [400, 401, 408],
      handler: async (req) => {
        const { token_hash } = principal(req, 'registrar');
        let input;
        try {
          input = inputOf(req.body as ClientMetadata);
        } catch (error) {
          throw asRegistrationError(error);
        }
        let reply: OAuthClientRet & { client_secret?: string; registration_access_token: string };
        try {
          reply = await execute(deps.handlers, req, { kind: 'RegisterOAuthClient', input, initial_token_hash: token_hash, allow_insecure: deps.allowInsecure });
        } catch (error) {
          throw asRegistrationError(error);
        }
        const client = requireOAuthClient(req.org.state, reply.client_id);
        const { client_secret, registration_access_token } = reply;
        return {
          status: 201,
          document: { ...document(client), ...(client_secret !== undefined && { client_secret, client_secret_expires_at: 0 }), registration_access_token },
          headers: NO_STORE,
        };
      },
    }),
    route({
      ...protocol,
      method: 'get',
      path: `${REGISTRATION_PATH}/{client_id}`,
      summary: "Read a dynamically registered client's metadata (RFC 7592 2.1) with its registration access token; never its secret",
      auth: deps.registrationAccessToken,
      success: { status: 200, document: Registered },
      errors: [400, 401],
      handler: (req) => ({ status: 200, document: document(self(req)), headers: NO_STORE }),
    }),
    route<Static<typeof Metadata>>({
      ...protocol,
      method: 'put',
      path: `${REGISTRATION_PATH}/{client_id}`,
      summary: "Replace a dynamically registered client's metadata (RFC 7592 2.2): omitted fields take their defaults",
      auth: deps.registrationAccessToken,
      body: Metadata,
      success: { status: 200, document: Registered },
      errors: [400, 401, 408],
      handler: async (req) => {
        const client = self(req);
        if (req.body.client_id !== client.client_id) throw registrationError('invalid_client_metadata', 'client_id: must be given, and be this client\'s');
        let view: OAuthClientRet;
        try {
          const patch = replacementOf(client, req.body as ClientMetadata);
          view = await execute(deps.handlers, req, { kind: 'UpdateOAuthClient', client_id: client.client_id, patch, allow_insecure: deps.allowInsecure });
        } catch (error) {
          throw asRegistrationError(error);
        }
        return { status: 200, document: document(requireOAuthClient(req.org.state, client.client_id), view), headers: NO_STORE };
      },
    }),
    route({
      ...protocol,
      method: 'delete',
      path: `${REGISTRATION_PATH}/{client_id}`,
      summary: 'Delete a dynamically registered client (RFC 7592 2.3); its tokens stop being active and its registration access token stops working',
      auth: deps.registrationAccessToken,
      success: { status: 204 },
      errors: [400, 401, 408],
      handler: async (req) => {
        await execute(deps.handlers, req, { kind: 'DeleteOAuthClient', client_id: self(req).client_id });
        return { status: 204 };
      },
    }),
    route<Static<typeof TokenBody>>({
      method: 'post',
      path: TOKENS_PATH,
      summary: 'Issue an initial access token for dynamic client registration; the token is in this answer only',
      tag: 'oauth2',
      auth: 'key',
      body: TokenBody,
      success: { status: 201, result: IssuedToken },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => ({ status: 201, result: await execute(deps.handlers, req, { kind: 'IssueOAuthRegistrationToken', input: req.body }) }),
    }),
    route({
      method: 'get',
      path: TOKENS_PATH,
      summary: "List the organization's unexpired initial access tokens, without their values",
      tag: 'oauth2',
      auth: 'key',
      success: { status: 200, result: Type.Array(TokenView) },
      errors: [400, 401, 403, 404],
      handler: (req) => {
        const now = deps.clock.nowMs();
        return { status: 200, result: registrationTokens(req.org.state).filter((t) => t.expires_at_ms === undefined || t.expires_at_ms > now).map(registrationTokenView) };
      },
    }),
    route({
      method: 'delete',
      path: `${TOKENS_PATH}/{token_id}`,
      summary: 'Revoke an initial access token: no client registers with it any more (clients registered with it stay)',
      tag: 'oauth2',
      auth: 'key',
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps.handlers, req, { kind: 'RevokeOAuthRegistrationToken', id: req.params['token_id'] as string });
        return { status: 204 };
      },
    }),
  ];
}
