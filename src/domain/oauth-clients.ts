// Decisions about the organization's OAuth 2.0 clients and the access tokens revoked before they expire, and
// the shape the API returns for a client. The secret is decided here (ctx.secret()), returned once in the
// reply, and stored only as its SHA-256 (ctx.hashKey): never in a change, an event or a view.
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { ServiceError, badRequest, notFound, quote } from '../errors.js';
import { checkTargetUrl } from './webhook-rules.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import type { OAuthClient, OrgState, TokenExchangePolicy } from './state.js';

/** RFC 8693 1, RFC 8628 3.4: the grant types named by URN. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
export const OAUTH_GRANT_TYPES = ['client_credentials', 'authorization_code', 'refresh_token', TOKEN_EXCHANGE_GRANT, DEVICE_CODE_GRANT] as const;
export type OAuthGrantType = (typeof OAUTH_GRANT_TYPES)[number];

export const MAX_OAUTH_CLIENTS = 1000;
export const MAX_OAUTH_SCOPES = 100;
export const MAX_REDIRECT_URIS = 16;
export const MAX_RESOURCES = 16;
/** RFC 7591 2 token_endpoint_auth_method values this server answers */
export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];
/** keys of a registered JWK Set, and its JSON size: enough for a rotation's overlap, small enough to keep in state */
export const MAX_CLIENT_KEYS = 8;
export const MAX_JWKS_BYTES = 16 * 1024;
export type ClientJwks = { keys: Array<Record<string, unknown>> };
/** the audiences and subject clients a token-exchange policy may list */
export const MAX_EXCHANGE_AUDIENCES = 16;
export const MAX_EXCHANGE_SUBJECT_CLIENTS = 100;
/** defaults and bounds of the token lifetimes, seconds */
export const ACCESS_TOKEN_DURATION = { default: 3600, min: 60, max: 86_400 };
export const REFRESH_TOKEN_DURATION = { default: 30 * 86_400, min: 60, max: 365 * 86_400 };
/** unexpired revoked access tokens an organization keeps at most; dropping one would make its token active again */
export const MAX_REVOKED_TOKENS = 100_000;

/** RFC 6749 3.3 scope-token: %x21 / %x23-5B / %x5D-7E */
export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,256}$/;

export interface OAuthClientInput {
  client_name: string;
  scopes: string[];
  grant_types: string[];
  redirect_uris?: string[];
  /** RFC 8707 resources its client_credentials tokens may be for */
  resources?: string[];
  public?: boolean;
  access_token_duration?: number;
  refresh_token_duration?: number;
  token_endpoint_auth_method?: TokenEndpointAuthMethod;
  /** private_key_jwt: the client's public keys, or the https URL that serves them; null (PATCH) removes */
  jwks?: ClientJwks | null;
  jwks_uri?: string | null;
  require_pushed_authorization_requests?: boolean;
  token_exchange?: TokenExchangePolicy;
  post_logout_redirect_uris?: string[];
  /** '' removes it */
  backchannel_logout_uri?: string;
  backchannel_logout_session_required?: boolean;
}

/** What a PATCH may change; public never changes (a confidential client's tokens assume a secret). */
export type OAuthClientPatch = Partial<Omit<OAuthClientInput, 'public'>>;

export interface OAuthClientRet {
  client_id: string;
  client_name: string;
  grant_types: string[];
  response_types: string[][];
  scopes: string[];
  public: boolean;
  redirect_uris: string[];
  resources: string[];
  access_token_duration: number;
  refresh_token_duration: number;
  /** the logout settings, present once set */
  post_logout_redirect_uris?: string[];
  backchannel_logout_uri?: string;
  backchannel_logout_session_required?: boolean;
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  jwks?: ClientJwks;
  jwks_uri?: string;
  require_pushed_authorization_requests: boolean;
  registration_token_id?: string;
  created_at: string;
  token_exchange?: TokenExchangePolicy;
}

/** A client that named no method (or was stored before methods were named): either secret method, or none. */
export function authMethodOf(c: OAuthClient): TokenEndpointAuthMethod {
  return c.token_endpoint_auth_method ?? (c.public ? 'none' : 'client_secret_basic');
}

export function oauthClientView(c: OAuthClient): OAuthClientRet {
  return {
    client_id: c.client_id,
    client_name: c.client_name,
    grant_types: [...c.grant_types],
    // The contract's constant: "code" is the only response type the authorization endpoint answers. Each
    // entry is a combination of response types, as the original lists them.
    response_types: [['code']],
    scopes: [...c.scopes],
    public: c.public,
    redirect_uris: [...c.redirect_uris],
    resources: [...(c.resources ?? [])],
    access_token_duration: c.access_token_duration,
    refresh_token_duration: c.refresh_token_duration,
    ...(c.post_logout_redirect_uris !== undefined && { post_logout_redirect_uris: [...c.post_logout_redirect_uris] }),
    ...(c.backchannel_logout_uri !== undefined && { backchannel_logout_uri: c.backchannel_logout_uri }),
    ...(c.backchannel_logout_session_required !== undefined && { backchannel_logout_session_required: c.backchannel_logout_session_required }),
    token_endpoint_auth_method: authMethodOf(c),
    // public keys: nothing secret in them
    ...(c.jwks !== undefined && { jwks: c.jwks }),
    ...(c.jwks_uri !== undefined && { jwks_uri: c.jwks_uri }),
    require_pushed_authorization_requests: c.require_pushed_authorization_requests === true,
    // a client that registered itself (RFC 7591): the initial access token it used
    ...(c.registration_token_id !== undefined && { registration_token_id: c.registration_token_id }),
    created_at: c.created,
    ...(c.token_exchange !== undefined && { token_exchange: { ...c.token_exchange, audiences: [...c.token_exchange.audiences], subject_clients: [...c.token_exchange.subject_clients] } }),
  };
}

export function requireOAuthClient(state: OrgState, clientId: string): OAuthClient {
  const c = state.oauth_clients.get(clientId);
  if (!c) throw notFound(`OAuth client ${quote(clientId)} not found`);
  return c;
}

export function listOAuthClients(state: OrgState): OAuthClientRet[] {
  return [...state.oauth_clients.values()].map(oauthClientView);
}

function uniqueList(values: readonly string[], field: string, check: (v: string, at: string) => void): string[] {
  const seen = new Set<string>();
  values.forEach((v, i) => {
    check(v, `${field}[${i}]`);
    if (seen.has(v)) throw badRequest(`${field}[${i}]: ${quote(v)} is given more than once`);
    seen.add(v);
  });
  return [...seen];
}

function checkScope(v: string, at: string): void {
  if (!SCOPE_TOKEN.test(v)) throw badRequest(`${at}: a scope is 1-256 printable ASCII characters without spaces, quotes or backslashes, got ${quote(v)}`);
}

function checkGrantType(v: string, at: string): void {
  if (!(OAUTH_GRANT_TYPES as readonly string[]).includes(v)) throw badRequest(`${at}: must be one of ${OAUTH_GRANT_TYPES.join(', ')}, got ${quote(v)}`);
}

/** RFC 6749 3.1.2: absolute, no fragment. http only for loopback; custom schemes for native apps (RFC 8252). */
function checkRedirectUri(v: string, at: string): void {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw badRequest(`${at}: ${quote(v)} is not an absolute URI`);
  }
  if (v.length > 2048) throw badRequest(`${at}: longer than 2048 characters`);
  if (url.hash !== '' || v.includes('#')) throw badRequest(`${at}: a redirect URI must not have a fragment`);
  if (url.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)) {
    throw badRequest(`${at}: http is allowed only for localhost, 127.0.0.1 and [::1]; use https`);
  }
  if (url.protocol === 'javascript:' || url.protocol === 'data:' || url.protocol === 'file:') throw badRequest(`${at}: the ${url.protocol} scheme is not allowed`);
}

/** Back-Channel Logout 1.0 2.2: an absolute http(s) URL without a fragment; where it may connect is checked per call (SSRF guard). */
function checkBackchannelUri(v: string, at: string): void {
  let url: URL | undefined;
  try {
    url = new URL(v);
  } catch {}
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw badRequest(`${at}: ${quote(v)} is not an absolute http or https URL`);
  if (url.hash !== '' || v.includes('#')) throw badRequest(`${at}: must not have a fragment`);
  if (v.length > 2048) throw badRequest(`${at}: longer than 2048 characters`);
}

/** RFC 8707 2: a resource is an absolute URI without a fragment. */
function checkResource(v: string, at: string): void {
  let ok = false;
  try {
    ok = new URL(v).hash === '' && !v.includes('#');
  } catch {}
  if (!ok) throw badRequest(`${at}: ${quote(v)} is not an absolute URI without a fragment`);
  if (v.length > 2048) throw badRequest(`${at}: longer than 2048 characters`);
}

function checkDuration(v: number | undefined, field: string, bounds: { default: number; min: number; max: number }): number {
  if (v === undefined) return bounds.default;
  if (!Number.isInteger(v) || v < bounds.min || v > bounds.max) throw badRequest(`${field}: must be an integer from ${bounds.min} to ${bounds.max} seconds, got ${v}`);
  return v;
}

/** JWK members that only a private (or symmetric) key has: registering one would hand out the client's secret. */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** RFC 7517 5: a JWK Set of public signing keys (RSA, EC, OKP), each one that node:crypto can load. */
function checkJwks(jwks: ClientJwks): ClientJwks {
  if (typeof jwks !== 'object' || jwks === null || !Array.isArray(jwks.keys)) throw badRequest('jwks: must be a JWK Set, {"keys": [...]}');
  const bytes = Buffer.byteLength(JSON.stringify(jwks), 'utf8');
  if (bytes > MAX_JWKS_BYTES) throw badRequest(`jwks: ${bytes} bytes of JSON; at most ${MAX_JWKS_BYTES}`);
  if (jwks.keys.length === 0 || jwks.keys.length > MAX_CLIENT_KEYS) throw badRequest(`jwks.keys: 1-${MAX_CLIENT_KEYS} keys`);
  const kids = new Set<string>();
  jwks.keys.forEach((key, i) => {
    const at = `jwks.keys[${i}]`;
    if (typeof key !== 'object' || key === null || Array.isArray(key)) throw badRequest(`${at}: must be a JWK object`);
    if (!['RSA', 'EC', 'OKP'].includes(key['kty'] as string)) throw badRequest(`${at}.kty: must be RSA, EC or OKP (a public signing key)`);
    const secret = PRIVATE_JWK_MEMBERS.find((m) => m in key);
    if (secret !== undefined) throw badRequest(`${at}: has the private member ${quote(secret)}; register the public key only`);
    if (key['use'] !== undefined && key['use'] !== 'sig') throw badRequest(`${at}.use: must be sig when given`);
    try {
      createPublicKey({ key: key as JsonWebKey, format: 'jwk' });
    } catch {
      throw badRequest(`${at}: not a valid public key`);
    }
    const kid = key['kid'];
    if (kid !== undefined) {
      if (typeof kid !== 'string' || kid.length > 256) throw badRequest(`${at}.kid: must be a string of at most 256 characters`);
      if (kids.has(kid)) throw badRequest(`${at}.kid: ${quote(kid)} is given more than once`);
      kids.add(kid);
    }
  });
  return { keys: jwks.keys.map((k) => ({ ...k })) };
}

type AuthSettings = Pick<OAuthClient, 'token_endpoint_auth_method' | 'jwks' | 'jwks_uri'>;

/** RFC 7591 2: the method, and the keys private_key_jwt checks assertions with (jwks or jwks_uri, never both). */
function authSettings(input: Pick<OAuthClientInput, 'token_endpoint_auth_method' | 'jwks' | 'jwks_uri'>, isPublic: boolean, allowInsecure: boolean): AuthSettings {
  const method = input.token_endpoint_auth_method;
  if (method !== undefined && !(TOKEN_ENDPOINT_AUTH_METHODS as readonly string[]).includes(method)) throw badRequest(`token_endpoint_auth_method: must be one of ${TOKEN_ENDPOINT_AUTH_METHODS.join(', ')}, got ${quote(String(method))}`);
  if (isPublic && method !== undefined && method !== 'none') throw badRequest('token_endpoint_auth_method: a public client has no credentials, so its method is none');
  if (!isPublic && method === 'none') throw badRequest('token_endpoint_auth_method: none is for public clients; a confidential client authenticates');
  const jwks = input.jwks ?? undefined;
  const jwksUri = input.jwks_uri ?? undefined;
  if (jwks !== undefined && jwksUri !== undefined) throw badRequest('jwks, jwks_uri: give one or the other, not both (RFC 7591 2)');
  if (isPublic && (jwks !== undefined || jwksUri !== undefined)) throw badRequest('jwks: a public client has no keys to register');
  if (method === 'private_key_jwt' && jwks === undefined && jwksUri === undefined) throw badRequest('private_key_jwt needs the client\'s public keys: jwks or jwks_uri');
  return {
    // each left out when not given, so a client stored before reads the same
    ...(method !== undefined && { token_endpoint_auth_method: method }),
    ...(jwks !== undefined && { jwks: checkJwks(jwks) }),
    ...(jwksUri !== undefined && { jwks_uri: checkTargetUrl(jwksUri, allowInsecure, 'jwks_uri') }),
  };
}

/** The settings a client would have, checked as a whole (the rules span fields). */
function settled(input: Omit<OAuthClientInput, 'public'> & { redirect_uris: string[] }, isPublic: boolean, allowInsecure: boolean): Omit<OAuthClient, 'client_id' | 'public' | 'secret_hash' | 'created'> {
  const resources = input.resources ?? [];
  if (resources.length > MAX_RESOURCES) throw badRequest(`resources: at most ${MAX_RESOURCES}`);
  const client_name = input.client_name.trim();
  if (client_name === '' || client_name.length > 256) throw badRequest('client_name: must be 1-256 characters');
  const grant_types = uniqueList(input.grant_types, 'grant_types', checkGrantType);
  if (grant_types.length === 0) throw badRequest('grant_types: at least one grant type is required');
  if (isPublic && grant_types.includes('client_credentials')) throw badRequest('grant_types: a public client has no secret, so it may not use client_credentials');
  // RFC 8693 5: the exchanging client is authenticated, since what it may obtain is its policy's.
  if (isPublic && grant_types.includes(TOKEN_EXCHANGE_GRANT)) throw badRequest('grant_types: a public client has no secret, so it may not use token exchange');
  const exchange = input.token_exchange === undefined ? undefined : exchangePolicy(input.token_exchange);
  if (exchange !== undefined && !grant_types.includes(TOKEN_EXCHANGE_GRANT)) throw badRequest(`token_exchange: needs the ${TOKEN_EXCHANGE_GRANT} grant type`);
  if (grant_types.includes('refresh_token') && !grant_types.includes('authorization_code') && !grant_types.includes(DEVICE_CODE_GRANT)) {
    throw badRequest(`grant_types: refresh_token needs authorization_code or ${DEVICE_CODE_GRANT}, which issue the first refresh token`);
  }
  if (input.scopes.length > MAX_OAUTH_SCOPES) throw badRequest(`scopes: at most ${MAX_OAUTH_SCOPES}`);
  const scopes = uniqueList(input.scopes, 'scopes', checkScope);
  if (input.redirect_uris.length > MAX_REDIRECT_URIS) throw badRequest(`redirect_uris: at most ${MAX_REDIRECT_URIS}`);
  const redirect_uris = uniqueList(input.redirect_uris, 'redirect_uris', checkRedirectUri);
  if (grant_types.includes('authorization_code') && redirect_uris.length === 0) throw badRequest('redirect_uris: authorization_code needs at least one redirect URI');
  return {
    client_name,
    grant_types,
    scopes,
    redirect_uris,
    // none registered is left out, so a client stored before reads the same
    ...(resources.length > 0 && { resources: uniqueList(resources, 'resources', checkResource) }),
    access_token_duration: checkDuration(input.access_token_duration, 'access_token_duration', ACCESS_TOKEN_DURATION),
    refresh_token_duration: checkDuration(input.refresh_token_duration, 'refresh_token_duration', REFRESH_TOKEN_DURATION),
    ...authSettings(input, isPublic, allowInsecure),
    // kept only when true, so a client stored before reads the same
    ...(input.require_pushed_authorization_requests === true && { require_pushed_authorization_requests: true }),
    ...(exchange !== undefined && { token_exchange: exchange }),
    ...logoutSettings(input),
  };
}

/** The logout settings, left out when unset so that a client stored before reads the same. */
function logoutSettings(input: Pick<OAuthClientInput, 'post_logout_redirect_uris' | 'backchannel_logout_uri' | 'backchannel_logout_session_required'>): Partial<OAuthClient> {
  const uris = input.post_logout_redirect_uris ?? [];
  if (uris.length > MAX_REDIRECT_URIS) throw badRequest(`post_logout_redirect_uris: at most ${MAX_REDIRECT_URIS}`);
  const backchannel = input.backchannel_logout_uri ?? '';
  if (backchannel !== '') checkBackchannelUri(backchannel, 'backchannel_logout_uri');
  if (input.backchannel_logout_session_required === true && backchannel === '') throw badRequest('backchannel_logout_session_required: needs a backchannel_logout_uri');
  return {
    ...(uris.length > 0 && { post_logout_redirect_uris: uniqueList(uris, 'post_logout_redirect_uris', checkRedirectUri) }),
    ...(backchannel !== '' && { backchannel_logout_uri: backchannel }),
    ...(input.backchannel_logout_session_required === true && { backchannel_logout_session_required: true }),
  };
}

/** A token-exchange policy as given, checked: audiences are strings a resource server knows itself by (RFC 8693 2.1), often URIs. */
function exchangePolicy(p: TokenExchangePolicy): TokenExchangePolicy {
  if (p.audiences.length > MAX_EXCHANGE_AUDIENCES) throw badRequest(`token_exchange.audiences: at most ${MAX_EXCHANGE_AUDIENCES}`);
  if (p.subject_clients.length > MAX_EXCHANGE_SUBJECT_CLIENTS) throw badRequest(`token_exchange.subject_clients: at most ${MAX_EXCHANGE_SUBJECT_CLIENTS}`);
  const audiences = uniqueList(p.audiences, 'token_exchange.audiences', (v, at) => {
    if (v === '' || v.length > 2048 || /[\x00-\x20\x7f]/.test(v)) throw badRequest(`${at}: an audience is 1-2048 printable characters without spaces, got ${quote(v.slice(0, 100))}`);
  });
  const subject_clients = uniqueList(p.subject_clients, 'token_exchange.subject_clients', (v, at) => {
    if (v === '' || v.length > 256) throw badRequest(`${at}: a client ID is 1-256 characters`);
  });
  return { audiences, subject_clients, identity_tokens: p.identity_tokens === true };
}

function createdEvent(c: OAuthClient) {
  return {
    name: 'OAuth2ClientCreated_v1',
    body: { client_id: c.client_id, client_name: c.client_name, grant_types: c.grant_types, redirect_uris: c.redirect_uris, scopes: c.scopes, public: c.public },
    regional: true as const,
  };
}

/** The client ID is a fresh UUIDv7: unique across the deployment without asking the other organizations. */
export function createOAuthClient(state: OrgState, input: OAuthClientInput, ctx: DecideContext, allowInsecure = false): Decision<OAuthClientRet & { client_secret?: string }> {
  if (state.oauth_clients.size >= MAX_OAUTH_CLIENTS) throw badRequest(`an organization may have at most ${MAX_OAUTH_CLIENTS} OAuth clients`);
  const isPublic = input.public === true;
  const settings = settled({ ...input, redirect_uris: input.redirect_uris ?? [] }, isPublic, allowInsecure);
  // A client that signs its assertions gets no secret it would never use.
  const secret = isPublic || settings.token_endpoint_auth_method === 'private_key_jwt' ? undefined : ctx.secret();
  const client: OAuthClient = {
    client_id: ctx.uuid(),
    ...settings,
    public: isPublic,
    secret_hash: secret === undefined ? '' : ctx.hashKey(secret),
    created: new Date(ctx.nowMs).toISOString(),
  };
  const view = oauthClientView(client);
  return decision(secret === undefined ? view : { ...view, client_secret: secret }, [{ t: 'OAuthClientCreated', client }], [createdEvent(client)]);
}

export function updateOAuthClient(state: OrgState, clientId: string, patch: OAuthClientPatch, allowInsecure = false): Decision<OAuthClientRet> {
  const current = requireOAuthClient(state, clientId);
  // settled leaves these out when there are none: an emptied list or a removed key source must not keep the current one
  const { resources: _held, token_exchange: policy, token_endpoint_auth_method: _method, jwks: _jwks, jwks_uri: _jwksUri, require_pushed_authorization_requests: _par, post_logout_redirect_uris: _uris, backchannel_logout_uri: _bc, backchannel_logout_session_required: _sr, ...kept } = current;
  const given = stripUndefined(patch);
  // jwks and jwks_uri exclude each other: giving one replaces the other
  if (given.jwks != null && given.jwks_uri === undefined) given.jwks_uri = null;
  if (given.jwks_uri != null && given.jwks === undefined) given.jwks = null;
  // a client no longer registered for token exchange loses its policy with the grant type
  const keptPolicy = patch.grant_types !== undefined && !patch.grant_types.includes(TOKEN_EXCHANGE_GRANT) ? undefined : policy;
  const { token_exchange: _policy, ...held } = current;
  const next: OAuthClient = { ...kept, ...settled({ ...held, ...(keptPolicy !== undefined && { token_exchange: keptPolicy }), ...given }, current.public, allowInsecure) };
  if (!next.public && next.secret_hash === '' && authMethodOf(next) !== 'private_key_jwt') {
    throw badRequest(`token_endpoint_auth_method: OAuth client ${quote(clientId)} has no secret; give it one first (PUT /oauth2/clients/{id}/secret)`);
  }
  if (JSON.stringify(next) === JSON.stringify(current)) return decision(oauthClientView(current));
  return decision(oauthClientView(next), [{ t: 'OAuthClientUpdated', client: next }]);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Its access tokens stop being active with it: introspection and userinfo require the client to exist. */
export function deleteOAuthClient(state: OrgState, clientId: string): Decision<null> {
  requireOAuthClient(state, clientId);
  return decision(null, [{ t: 'OAuthClientDeleted', client_id: clientId }]);
}

export function rotateOAuthClientSecret(state: OrgState, clientId: string, ctx: DecideContext): Decision<{ client_secret: string }> {
  const current = requireOAuthClient(state, clientId);
  if (current.public) throw badRequest(`OAuth client ${quote(clientId)} is public: it has no secret`);
  const secret = ctx.secret();
  return decision({ client_secret: secret }, [{ t: 'OAuthClientSecretSet', client_id: clientId, secret_hash: ctx.hashKey(secret) }]);
}

/**
 * RFC 7009: an access token revoked before it expires. Idempotent; a token already expired needs no entry.
 * `exp` is the token's own (seconds), so the entry is dropped once the token could not be active anyway.
 */
export function revokeAccessToken(state: OrgState, jti: string, exp: number, ctx: DecideContext): Decision<null> {
  const nowS = Math.floor(ctx.nowMs / 1000);
  if (exp <= nowS || state.oauth_revoked.has(jti)) return decision(null);
  if (state.oauth_revoked.size >= MAX_REVOKED_TOKENS && [...state.oauth_revoked.values()].filter((until) => until > nowS).length >= MAX_REVOKED_TOKENS) {
    throw new ServiceError('ERR_TOO_MANY_REQUESTS', `more than ${MAX_REVOKED_TOKENS} unexpired access tokens are revoked; retry once some expire`);
  }
  return decision(null, [{ t: 'AccessTokenRevoked', jti, exp, now: nowS }]);
}

/** apply(): the revocation list after adding one token, without entries whose tokens expired by `now`. */
export function withRevoked(revoked: Map<string, number>, jti: string, exp: number, now: number): Map<string, number> {
  for (const [id, until] of revoked) if (until <= now) revoked.delete(id);
  revoked.set(jti, exp);
  return revoked;
}

/** A theme, texts and a flow's settings; more is not a configuration but a payload. */
export const UI_CONFIGURATION_MAX_BYTES = 64 * 1024;

/** The hosted UI's configuration of a client, replaced whole; {} until one is set. */
export function setOAuthClientUiConfiguration(state: OrgState, clientId: string, ui: Record<string, unknown>): Decision<Record<string, unknown>> {
  const current = requireOAuthClient(state, clientId);
  const json = JSON.stringify(ui);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > UI_CONFIGURATION_MAX_BYTES) throw badRequest(`ui configuration: ${bytes} bytes of JSON; at most ${UI_CONFIGURATION_MAX_BYTES} are allowed`);
  // The log's encoding renames this key on decoding, so it would not read back the same after a restart.
  if (json.includes('"__proto__"')) throw badRequest('ui configuration: the key "__proto__" is reserved');
  if (JSON.stringify(current.ui_configuration ?? {}) === JSON.stringify(ui)) return decision(ui);
  return decision(ui, [{ t: 'OAuthClientUpdated', client: { ...current, ui_configuration: ui } }]);
}
