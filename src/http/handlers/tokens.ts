// Identity tokens: the key set and discovery documents, key rotation, validation, and the mint-token API.
import { Type, type Static } from '@sinclair/typebox';
import type { IssuePipeline } from '../../auth/issue.js';
import { IDENTITY_CLAIMS } from '../../tokens/claims.js';
import type { KeyRing } from '../../tokens/keys.js';
import { OIDC_CLAIMS, oauthMetadata, type OAuthServerFacts } from '../../oauth/discovery.js';
import type { TokenValidator } from '../../tokens/validate.js';
import { route, type Route } from '../route.js';
import { badRequest } from '../../errors.js';
import { execute, type HandlerDeps } from './deps.js';

export interface TokenRouteDeps {
  keys: KeyRing;
  /** the issuing pipeline, which refuses reserved custom claims and waits for the consistency asked for */
  pipeline: Pick<IssuePipeline, 'issue'>;
  validator: TokenValidator;
  /** the issuer URL; known only after listening when the port was 0 */
  issuer(): string;
  /** the OAuth 2.0 authorization server, for the discovery document */
  oauth?: OAuthServerFacts;
  /** commands with consistency, for revocation */
  handlers: HandlerDeps;
}

const MintBody = Type.Object(
  { custom_claims: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'claims to add; reserved names are refused' })) },
  { additionalProperties: false },
);

const ValidateBody = Type.Object({ token: Type.String({ description: 'a compact JWT' }) }, { additionalProperties: false });

const Verdict = Type.Object({
  valid: Type.Boolean(),
  invalidity_reason: Type.Optional(Type.Union(['invalid_token_content', 'expired', 'invalid_issuer', 'person_not_active'].map((r) => Type.Literal(r)))),
  expires_in_seconds: Type.Optional(Type.Integer()),
  expires_at: Type.Optional(Type.String()),
  revoked: Type.Optional(Type.Literal(true, { description: 'the token was revoked (POST /token/revoke); the reason is then invalid_token_content' })),
});

const RevokeBody = Type.Object({ token: Type.String({ description: 'an identity token (compact JWT) of the organization' }) }, { additionalProperties: false });

const JwkSet = Type.Object({ keys: Type.Array(Type.Object({ kid: Type.String(), alg: Type.String(), use: Type.Literal('sig') }, { additionalProperties: true })) });

/** The mint-token answer: a JWT is base64url and dots, which JSON quotes as it is. */
const minted = (issued: { token: string }) => ({ status: 201, result: issued.token, resultNeedsNoEscape: true as const });

export function tokenRoutes(tokens: TokenRouteDeps): Route[] {
  const { keys, pipeline, validator, issuer } = tokens;
  return [
    route({
      method: 'get',
      path: '/.well-known/jwks.json',
      summary: 'The public keys of identity tokens (current and not yet expired retired ones)',
      tag: 'tokens',
      auth: 'none',
      success: { status: 200, document: JwkSet },
      // Relying parties refetch on an unknown kid, so a short cache lifetime only saves traffic.
      handler: () => ({ status: 200, document: keys.jwks(), headers: { 'Cache-Control': 'public, max-age=60' } }),
    }),
    route({
      method: 'get',
      path: '/.well-known/openid-configuration',
      summary: 'OpenID Connect discovery document: the token issuer and the OAuth 2.0 authorization server',
      tag: 'tokens',
      auth: 'none',
      success: { status: 200, document: Type.Object({ issuer: Type.String(), jwks_uri: Type.String() }, { additionalProperties: true }) },
      handler: () => {
        const iss = issuer();
        return {
          status: 200,
          document: {
            issuer: iss,
            jwks_uri: `${iss}/.well-known/jwks.json`,
            ...(tokens.oauth ? oauthMetadata(iss, tokens.oauth) : {}),
            id_token_signing_alg_values_supported: [...new Set(keys.published().map((k) => k.alg))],
            subject_types_supported: ['public'],
            claims_supported: tokens.oauth ? [...IDENTITY_CLAIMS, ...OIDC_CLAIMS] : IDENTITY_CLAIMS,
            token_validation_endpoint: `${iss}/token/validate`,
            service_documentation: `${iss}/openapi.json`,
          },
        };
      },
    }),
    route({
      method: 'post',
      path: '/ops/keys/rotate',
      summary: 'Make a new identity-token signing key; the old one stays published until its tokens expire',
      tag: 'operations',
      auth: 'operator',
      success: { status: 201, result: Type.Object({ kid: Type.String(), alg: Type.String(), created: Type.String() }) },
      errors: [401, 404],
      handler: async () => {
        const key = await keys.rotate();
        return { status: 201, result: { kid: key.kid, alg: key.alg, created: new Date(key.created).toISOString() } };
      },
    }),
    route<Static<typeof ValidateBody>>({
      method: 'post',
      path: '/token/validate',
      summary: 'Validate an identity token: signature, issuer, expiry, and that its person is active',
      tag: 'tokens',
      auth: 'none',
      // A read: it accepts a consistency token, so that a token minted or revoked elsewhere is seen here.
      headers: ['service-consistency-token'],
      body: ValidateBody,
      success: { status: 200, result: Verdict, description: 'always 200 for a token that was sent; the verdict says why it is not valid' },
      errors: [400, 408],
      handler: async (req) => ({ status: 200, result: await validator.validate(req.body.token) }),
    }),
    route<Static<typeof RevokeBody>>({
      method: 'post',
      path: '/token/revoke',
      summary: 'Revoke an identity token of the organization: /token/validate finds it invalid from then on, in every region',
      tag: 'tokens',
      auth: 'key',
      body: RevokeBody,
      success: { status: 204, description: 'also for a token already revoked or expired' },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const verified = await validator.verify(req.body.token);
        if (!verified) throw badRequest('token: not an identity token issued by this service');
        // 400, not 404: the original's operation answers only 400 and 408, and the token is the caller's input
        if (verified.org !== req.org.id) throw badRequest('token: issued for another organization');
        await execute(tokens.handlers, req, { kind: 'RevokeIdentityToken', jti: verified.jti, exp: verified.exp });
        return { status: 204 };
      },
    }),
    route<Static<typeof MintBody> | undefined>({
      method: 'post',
      path: '/persons/{person_id}/mint-token',
      summary: 'Mint an identity token for a person (authenticated_methods ["api"]; no token_minted hook)',
      tag: 'tokens',
      auth: 'key',
      body: MintBody,
      bodyOptional: true,
      success: { status: 201, result: Type.String({ description: 'the token (compact JWT)' }) },
      errors: [400, 401, 403, 404, 408],
      // Not async: the pipeline's promise is the handler's, with no frame of its own around it.
      handler: (req) => pipeline.issue(req.org, { method: 'api', person_id: req.params['person_id'] as string, consistency: req.consistency, custom_claims: req.body?.custom_claims }).then(minted),
    }),
  ];
}
