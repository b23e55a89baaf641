// The tokens a person's SSO provider issued at sign-in, for the organization's backend (API key): those of the
// SSO authentication behind an identity token, a person's by query, and their revocation (the v2 form by
// authentication, the deprecated one by the token itself). Tokens leave the service only in these answers.
import { Type, type Static } from '@sinclair/typebox';
import { notFound, quote, ServiceError } from '../../errors.js';
import { PROVIDER_TOKEN_TYPES, type ProviderTokens } from '../../sso/provider-tokens.js';
import type { TokenValidator } from '../../tokens/validate.js';
import { route, type Request, type Route } from '../route.js';
import type { HandlerDeps } from './deps.js';

const TokenType = Type.Union(
  PROVIDER_TOKEN_TYPES.map((t) => Type.Literal(t)),
  { description: 'access, refresh or id' },
);
const TokenTypes = Type.Array(TokenType, { maxItems: 3, description: 'the types wanted; absent or empty: all' });
const PersonId = Type.String({ minLength: 1, maxLength: 64 });

const QueryBody = Type.Object(
  {
    person_id: PersonId,
    authentication_ids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100, description: 'absent or empty: every authentication of the person' })),
    token_types: Type.Optional(TokenTypes),
  },
  { additionalProperties: false },
);
const RevokeBody = Type.Object(
  {
    person_id: PersonId,
    authentication_id: Type.String({ minLength: 1, maxLength: 64, description: 'the SSO authentication that obtained the tokens' }),
    token_types: Type.Optional(TokenTypes),
  },
  { additionalProperties: false },
);
const DeprecatedRevokeBody = Type.Object(
  {
    client_id: Type.String({ minLength: 1, maxLength: 256, description: 'the credential that obtained the token' }),
    token: Type.String({ minLength: 1, maxLength: 16384 }),
    token_type: Type.Union([Type.Literal('access_token'), Type.Literal('refresh_token')]),
  },
  { additionalProperties: false },
);

const Detail = Type.Object({
  token: Type.String(),
  token_type: TokenType,
  expiry: Type.String({ description: 'RFC 3339; 0001-01-01T00:00:00Z when the provider gave none' }),
  provider: Type.String(),
  client_id: Type.String(),
  authentication_id: Type.String({ description: 'the SSO authentication that obtained it: the jti of the identity token that sign-in issued' }),
  person_id: Type.String(),
  organization_id: Type.String(),
});
const Details = Type.Array(Detail);

/** Answers that carry tokens are never cached. */
const NO_STORE = { 'Cache-Control': 'no-store' };

function requirePerson(req: Request, personId: string): void {
  if (!req.org.state.persons.has(personId)) throw notFound(`person ${quote(personId)} not found`);
}

export function ssoTokenRoutes(_deps: HandlerDeps, sso: { tokens: ProviderTokens; validator: Pick<TokenValidator, 'identify'> }): Route[] {
  return [
    route({
      method: 'get',
      path: '/sso/oidc/tokens',
      summary: "The provider's tokens obtained by the SSO sign-in that issued the identity token in Service-Token (refreshed first when expired and the provider allows)",
      tag: 'sso',
      auth: 'key',
      headers: ['service-token'],
      success: { status: 200, result: Details },
      errors: [400, 401, 403, 404],
      handler: async (req) => {
        const token = req.headers['service-token'];
        if (!token) throw new ServiceError('ERR_BAD_REQUEST', 'Service-Token: the header is required: an identity token issued by an SSO sign-in');
        const who = await sso.validator.identify(token);
        if (!('person_id' in who) || who.org !== req.org.id) throw new ServiceError('ERR_UNAUTHORIZED', 'Service-Token: not a valid identity token of this organization');
        const jti = who.claims.jti;
        const found = typeof jti === 'string' ? await sso.tokens.query(req.org.id, who.person_id, { authentication_ids: [jti] }) : [];
        if (found.length === 0) throw notFound('no provider tokens are kept for the sign-in of this token (not an SSO sign-in, revoked, or replaced by a later sign-in through the same credential)');
        return { status: 200, result: found, headers: NO_STORE };
      },
    }),
    route<Static<typeof QueryBody>>({
      method: 'post',
      path: '/sso/oidc/tokens/query',
      summary: "A person's provider tokens from SSO sign-ins, of these authentications and types when given (expired access tokens refreshed first when the provider allows)",
      tag: 'sso',
      auth: 'key',
      body: QueryBody,
      success: { status: 200, result: Details },
      errors: [400, 401, 403, 404],
      handler: async (req) => {
        requirePerson(req, req.body.person_id);
        const result = await sso.tokens.query(req.org.id, req.body.person_id, { authentication_ids: req.body.authentication_ids, token_types: req.body.token_types });
        return { status: 200, result, headers: NO_STORE };
      },
    }),
    route<Static<typeof RevokeBody>>({
      method: 'post',
      path: '/sso/oidc/tokens/revoke/v2',
      summary: "Revokes the provider tokens of an SSO authentication (these types, or all): at the provider (RFC 7009) where it offers revocation, then here",
      tag: 'sso',
      auth: 'key',
      body: RevokeBody,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 502],
      handler: async (req) => {
        requirePerson(req, req.body.person_id);
        if (!(await sso.tokens.revoke(req.org.id, req.body.person_id, req.body.authentication_id, req.body.token_types))) {
          throw notFound(`authentication_id: person ${quote(req.body.person_id)} has no provider tokens from authentication ${quote(req.body.authentication_id)}`);
        }
        return { status: 204 };
      },
    }),
    route<Static<typeof DeprecatedRevokeBody>>({
      method: 'post',
      path: '/sso/oidc/tokens/revoke',
      summary: 'Deprecated: use /sso/oidc/tokens/revoke/v2. Revokes one provider token, named by itself and its credential',
      tag: 'sso',
      auth: 'key',
      body: DeprecatedRevokeBody,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 502],
      handler: async (req) => {
        if (!(await sso.tokens.revokeToken(req.org.id, req.body.client_id, req.body.token, req.body.token_type))) {
          throw notFound(`token: no person of this organization holds this ${req.body.token_type} of credential ${quote(req.body.client_id)}`);
        }
        return { status: 204 };
      },
    }),
  ];
}
