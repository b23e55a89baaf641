// RFC 7591 2 client metadata to and from the clients of the management API: the registration endpoint speaks
// the standard's names (scope as one string, token_endpoint_auth_method none for a public client), the
// clients are the same objects, checked by the same rules.
import { authMethodOf, OAUTH_GRANT_TYPES, type OAuthClientInput, type OAuthClientPatch, type OAuthClientRet } from '../domain/oauth-clients.js';
import type { OAuthClient } from '../domain/state.js';
import { ServiceError } from '../errors.js';

/** RFC 7591 3.2.2 */
export type RegistrationErrorCode = 'invalid_client_metadata' | 'invalid_redirect_uri';

export function registrationError(code: RegistrationErrorCode, description: string): ServiceError {
  return new ServiceError('ERR_BAD_REQUEST', description, { oauth: code });
}

/** A refusal of the clients' own rules, in RFC 7591 3.2.2's words: a redirect URI's, or the metadata's. */
export function asRegistrationError(error: unknown): unknown {
  if (!(error instanceof ServiceError) || error.status !== 400 || error.oauth !== undefined) return error;
  return registrationError(error.message.startsWith('redirect_uris') ? 'invalid_redirect_uri' : 'invalid_client_metadata', error.message);
}

/** The metadata this server understands; any other member is ignored (RFC 7591 2). */
export interface ClientMetadata {
  client_name?: unknown;
  redirect_uris?: unknown;
  grant_types?: unknown;
  response_types?: unknown;
  token_endpoint_auth_method?: unknown;
  scope?: unknown;
  jwks?: unknown;
  jwks_uri?: unknown;
  require_pushed_authorization_requests?: unknown;
}

const DEFAULT_NAME = 'Dynamically registered client';

function strings(value: unknown, field: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw registrationError(field === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata', `${field}: must be an array of strings`);
  return value as string[];
}

function text(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw registrationError('invalid_client_metadata', `${field}: must be a string`);
  return value;
}

/**
 * The whole client the metadata describes, with RFC 7591 2's defaults for what it leaves out: grant_types
 * authorization_code, response_types code, token_endpoint_auth_method client_secret_basic.
 */
export function inputOf(meta: ClientMetadata): OAuthClientInput {
  const grant_types = strings(meta.grant_types, 'grant_types') ?? ['authorization_code'];
  const unknownGrant = grant_types.find((g) => !(OAUTH_GRANT_TYPES as readonly string[]).includes(g));
  if (unknownGrant !== undefined) throw registrationError('invalid_client_metadata', `grant_types: ${JSON.stringify(unknownGrant.slice(0, 100))} is not supported; use ${OAUTH_GRANT_TYPES.join(', ')}`);
  const response_types = strings(meta.response_types, 'response_types') ?? (grant_types.includes('authorization_code') ? ['code'] : []);
  if (response_types.some((r) => r !== 'code')) throw registrationError('invalid_client_metadata', 'response_types: only code is supported');
  // RFC 7591 2.1: code goes with authorization_code
  if (response_types.includes('code') !== grant_types.includes('authorization_code')) throw registrationError('invalid_client_metadata', 'response_types and grant_types: code and authorization_code go together');
  const method = text(meta.token_endpoint_auth_method, 'token_endpoint_auth_method') ?? 'client_secret_basic';
  if (!['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'].includes(method)) throw registrationError('invalid_client_metadata', `token_endpoint_auth_method: ${JSON.stringify(method.slice(0, 64))} is not supported`);
  const requirePar = meta.require_pushed_authorization_requests;
  if (requirePar !== undefined && typeof requirePar !== 'boolean') throw registrationError('invalid_client_metadata', 'require_pushed_authorization_requests: must be a boolean');
  if (meta.jwks !== undefined && (typeof meta.jwks !== 'object' || meta.jwks === null)) throw registrationError('invalid_client_metadata', 'jwks: must be a JWK Set');
  const jwksUri = text(meta.jwks_uri, 'jwks_uri');
  return {
    client_name: text(meta.client_name, 'client_name') ?? DEFAULT_NAME,
    scopes: (text(meta.scope, 'scope') ?? '').split(' ').filter((s) => s !== ''),
    grant_types,
    redirect_uris: strings(meta.redirect_uris, 'redirect_uris') ?? [],
    public: method === 'none',
    token_endpoint_auth_method: method as NonNullable<OAuthClientInput['token_endpoint_auth_method']>,
    ...(meta.jwks !== undefined && { jwks: meta.jwks as NonNullable<OAuthClientInput['jwks']> }),
    ...(jwksUri !== undefined && { jwks_uri: jwksUri }),
    require_pushed_authorization_requests: requirePar === true,
  };
}

/** RFC 7592 2.2: an update replaces the metadata whole; the client's durations and resources are not metadata and stay. */
export function replacementOf(current: OAuthClient, meta: ClientMetadata): OAuthClientPatch {
  const { public: isPublic, ...input } = inputOf(meta);
  if (isPublic !== current.public) throw registrationError('invalid_client_metadata', 'token_endpoint_auth_method: a public client (none) stays public and a confidential one confidential; register a new client instead');
  return { ...input, jwks: input.jwks ?? null, jwks_uri: input.jwks_uri ?? null };
}

/** RFC 7591 3.2.1 / RFC 7592 3: the client as registered, in the standard's names. */
export function metadataOf(c: OAuthClient, view: OAuthClientRet, registrationClientUri: string): Record<string, unknown> {
  return {
    client_id: c.client_id,
    client_id_issued_at: Math.floor(Date.parse(c.created) / 1000),
    client_name: c.client_name,
    redirect_uris: [...c.redirect_uris],
    grant_types: [...c.grant_types],
    response_types: c.grant_types.includes('authorization_code') ? ['code'] : [],
    token_endpoint_auth_method: authMethodOf(c),
    scope: c.scopes.join(' '),
    ...(view.jwks !== undefined && { jwks: view.jwks }),
    ...(view.jwks_uri !== undefined && { jwks_uri: view.jwks_uri }),
    require_pushed_authorization_requests: view.require_pushed_authorization_requests,
    registration_client_uri: registrationClientUri,
  };
}
