// The tokens a person's SSO provider issued at sign-in (so that an application can call the provider's APIs
// for the person), kept per organization, person and credential beside the WAL, each sealed under
// SERVICE_SECRETS_KEY; refreshed with the provider's refresh token when the access token has expired, revoked
// at the provider (RFC 7009) where it offers revocation, and forgotten with the person. Never in an event or
// a log line: only the routes of /sso/oidc/tokens read them.
import { ServiceError } from '../errors.js';
import type { StoredSecret } from '../domain/state.js';
import type { Clock } from '../lib/clock.js';
import type { Format } from '../lib/versions.js';
import type { KeyedRecords } from '../wal/keyed-records.js';
import type { SecretSealer } from './secrets.js';

export const PROVIDER_TOKEN_TYPES = ['access', 'refresh', 'id'] as const;
export type ProviderTokenType = (typeof PROVIDER_TOKEN_TYPES)[number];

/** What the provider's token endpoint answered (RFC 6749 5.1, OpenID Connect's id_token). */
export interface ProviderTokenResponse {
  access_token: string;
  refresh_token?: string | undefined;
  id_token?: string | undefined;
  /** seconds */
  expires_in?: number | undefined;
}

/** The provider's token and revocation endpoints for one credential of an organization, with its client authentication. */
export interface ProviderClient {
  refresh(refreshToken: string): Promise<ProviderTokenResponse>;
  /** undefined: the provider publishes no revocation endpoint */
  revoke: ((token: string, hint: 'access_token' | 'refresh_token') => Promise<void>) | undefined;
}

/** One token as GET /sso/oidc/tokens and POST /sso/oidc/tokens/query answer it (the original's SsoOidcTokenDetail). */
export interface ProviderTokenDetail {
  token: string;
  token_type: ProviderTokenType;
  /** RFC 3339; the zero time 0001-01-01T00:00:00Z when the provider gave none (refresh tokens, mostly) */
  expiry: string;
  provider: string;
  client_id: string;
  authentication_id: string;
  person_id: string;
  organization_id: string;
}

interface StoredToken {
  token: StoredSecret;
  /** epoch ms; absent when the provider said nothing */
  expires_ms?: number;
}

/** The latest sign-in's tokens of one person through one credential. */
export interface StoredTokens {
  person_id: string;
  provider: string;
  client_id: string;
  /** the SSO authentication that obtained them: the jti of the identity token it issued */
  authentication_id: string;
  access?: StoredToken;
  refresh?: StoredToken;
  id?: StoredToken;
}

export const PROVIDER_TOKENS_FORMAT: Format = { name: 'SSO provider tokens', steps: [(r) => r] };

export interface ProviderTokens {
  /** Keeps a sign-in's tokens, replacing that person's earlier ones from the same credential. */
  keep(org: string, personId: string, credential: { client_id: string; provider: string }, authenticationId: string, tokens: ProviderTokenResponse): Promise<void>;
  /** The person's tokens, of these authentications and types when given; an expired access token is refreshed first where possible. */
  query(org: string, personId: string, filter?: { authentication_ids?: readonly string[] | undefined; token_types?: readonly ProviderTokenType[] | undefined }): Promise<ProviderTokenDetail[]>;
  /** Revokes (at the provider, then here) the tokens of an authentication, of these types or all; false when it has none. */
  revoke(org: string, personId: string, authenticationId: string, types?: readonly ProviderTokenType[]): Promise<boolean>;
  /** The deprecated form: the token itself, by the credential that obtained it; false when no person holds it. */
  revokeToken(org: string, clientId: string, token: string, type: 'access_token' | 'refresh_token'): Promise<boolean>;
  /** Forgets every token of the person (deleted). */
  forgetPerson(org: string, personId: string): Promise<void>;
}

export interface ProviderTokensDeps {
  clock: Clock;
  records: KeyedRecords<StoredTokens>;
  sealer: SecretSealer;
  /** the credential's endpoints, or undefined when the credential is gone */
  client(org: string, clientId: string): Promise<ProviderClient | undefined>;
}

const ZERO_TIME = '0001-01-01T00:00:00Z';
/** An access token this close to its expiry is refreshed before it is handed out. */
const REFRESH_MARGIN_MS = 60_000;

// Unit separators, not NUL: the store's key encoding reads NUL as the separator of an array key.
const keyOf = (org: string, personId: string, clientId: string) => `${org}\u001f${personId}\u001f${clientId}`;
const personPrefix = (org: string, personId: string) => `${org}\u001f${personId}\u001f`;
const HINT: Record<'access' | 'refresh', 'access_token' | 'refresh_token'> = { access: 'access_token', refresh: 'refresh_token' };

export function createProviderTokens(deps: ProviderTokensDeps): ProviderTokens {
  const { clock, records, sealer } = deps;
  // Bound to organization, person, credential and type: a sealed token copied under another key does not open.
  const owner = (personId: string, clientId: string, type: ProviderTokenType) => `${personId}:${clientId}:${type}`;
  const seal = (org: string, personId: string, clientId: string, type: ProviderTokenType, token: string, expiresMs?: number): StoredToken => ({
    token: sealer.seal(org, owner(personId, clientId, type), 'provider_token', token),
    ...(expiresMs !== undefined && { expires_ms: expiresMs }),
  });
  const open = (org: string, personId: string, clientId: string, type: ProviderTokenType, stored: StoredToken) => sealer.open(org, owner(personId, clientId, type), 'provider_token', stored.token);

  function sealedSet(org: string, personId: string, clientId: string, tokens: ProviderTokenResponse, keep: Partial<StoredTokens> = {}): Pick<StoredTokens, 'access' | 'refresh' | 'id'> {
    const now = clock.nowMs();
    const idExp = tokens.id_token === undefined ? undefined : jwtExpiryMs(tokens.id_token);
    const refresh = tokens.refresh_token === undefined ? keep.refresh : seal(org, personId, clientId, 'refresh', tokens.refresh_token);
    const id = tokens.id_token === undefined ? keep.id : seal(org, personId, clientId, 'id', tokens.id_token, idExp);
    return {
      access: seal(org, personId, clientId, 'access', tokens.access_token, tokens.expires_in === undefined ? undefined : now + tokens.expires_in * 1000),
      ...(refresh && { refresh }),
      ...(id && { id }),
    };
  }

  /** The stored tokens with an expired access token refreshed, when the provider gave a refresh token and still takes it. */
  async function fresh(org: string, personId: string, key: string, stored: StoredTokens): Promise<StoredTokens> {
    const access = stored.access;
    if (!stored.refresh || (access && (access.expires_ms === undefined || access.expires_ms - REFRESH_MARGIN_MS > clock.nowMs()))) return stored;
    const client = await deps.client(org, stored.client_id);
    if (!client) return stored;
    let answered: ProviderTokenResponse;
    try {
      answered = await client.refresh(open(org, personId, stored.client_id, 'refresh', stored.refresh));
    } catch {
      // Refused or unreachable: the tokens are answered as they are, their expiry telling the caller.
      return stored;
    }
    const next: StoredTokens = { ...stored, ...sealedSet(org, personId, stored.client_id, answered, stored) };
    await records.put(key, next);
    return next;
  }

  function details(org: string, personId: string, stored: StoredTokens, types: readonly ProviderTokenType[]): ProviderTokenDetail[] {
    const out: ProviderTokenDetail[] = [];
    for (const type of types) {
      const t = stored[type];
      if (!t) continue;
      out.push({
        token: open(org, personId, stored.client_id, type, t),
        token_type: type,
        expiry: t.expires_ms === undefined ? ZERO_TIME : new Date(t.expires_ms).toISOString(),
        provider: stored.provider,
        client_id: stored.client_id,
        authentication_id: stored.authentication_id,
        person_id: personId,
        organization_id: org,
      });
    }
    return out;
  }

  /** RFC 7009 at the provider for each type it can revoke; an unreachable or refusing provider is a 502, nothing forgotten. */
  async function revokeAtProvider(org: string, personId: string, stored: StoredTokens, types: readonly ProviderTokenType[]): Promise<void> {
    const client = await deps.client(org, stored.client_id);
    if (!client?.revoke) return;
    for (const type of types) {
      if (type === 'id') continue;
      const t = stored[type];
      if (!t) continue;
      try {
        await client.revoke(open(org, personId, stored.client_id, type, t), HINT[type]);
      } catch (error) {
        throw new ServiceError('ERR_BAD_GATEWAY', `the provider of credential ${JSON.stringify(stored.client_id)} did not revoke the ${type} token; nothing was forgotten, retry`, { cause: error });
      }
    }
  }

  async function drop(key: string, stored: StoredTokens, types: readonly ProviderTokenType[]): Promise<void> {
    const next: StoredTokens = { ...stored };
    for (const type of types) delete next[type];
    if (!next.access && !next.refresh && !next.id) await records.remove(key);
    else await records.put(key, next);
  }

  return {
    async keep(org, personId, credential, authenticationId, tokens) {
      const stored: StoredTokens = { person_id: personId, provider: credential.provider, client_id: credential.client_id, authentication_id: authenticationId, ...sealedSet(org, personId, credential.client_id, tokens) };
      await records.put(keyOf(org, personId, credential.client_id), stored);
    },
    async query(org, personId, filter = {}) {
      const types = filter.token_types && filter.token_types.length > 0 ? PROVIDER_TOKEN_TYPES.filter((t) => filter.token_types?.includes(t)) : PROVIDER_TOKEN_TYPES;
      const out: ProviderTokenDetail[] = [];
      for (const { key, value } of records.prefixed(personPrefix(org, personId))) {
        if (filter.authentication_ids && filter.authentication_ids.length > 0 && !filter.authentication_ids.includes(value.authentication_id)) continue;
        const stored = types.includes('access') ? await fresh(org, personId, key, value) : value;
        out.push(...details(org, personId, stored, types));
      }
      return out;
    },
    async revoke(org, personId, authenticationId, types) {
      const which = types && types.length > 0 ? PROVIDER_TOKEN_TYPES.filter((t) => types.includes(t)) : PROVIDER_TOKEN_TYPES;
      let found = false;
      for (const { key, value } of records.prefixed(personPrefix(org, personId))) {
        if (value.authentication_id !== authenticationId) continue;
        found = true;
        await revokeAtProvider(org, personId, value, which);
        await drop(key, value, which);
      }
      return found;
    },
    async revokeToken(org, clientId, token, type) {
      const kind: ProviderTokenType = type === 'access_token' ? 'access' : 'refresh';
      for (const { key, value } of records.prefixed(`${org}\u001f`)) {
        if (value.client_id !== clientId) continue;
        const personId = value.person_id;
        const t = value[kind];
        if (!t || open(org, personId, clientId, kind, t) !== token) continue;
        await revokeAtProvider(org, personId, value, [kind]);
        await drop(key, value, [kind]);
        return true;
      }
      return false;
    },
    async forgetPerson(org, personId) {
      for (const { key } of records.prefixed(personPrefix(org, personId))) await records.remove(key);
    },
  };
}

/** A JWT's exp in ms, read without verifying (the ID token was verified at sign-in); undefined when unreadable. */
function jwtExpiryMs(jwt: string): number | undefined {
  try {
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof payload.exp === 'number' ? payload.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
