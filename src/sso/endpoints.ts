// Where each provider signs people in, in one table: published endpoints, how the client authenticates, PKCE,
// the response mode, and for the plain OAuth 2.0 providers (no ID token) their user API; `service` and
// `azuread` by OpenID discovery (cached, refreshed on failure). The table's origins can be rerouted for tests.
import * as oidc from 'openid-client';
import { badRequest, quote, ServiceError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { SsoCredential } from '../domain/state.js';
import type { SsoProvider } from './providers.js';
import type { UserApi } from './user-api.js';

/** The endpoints openid-client needs: issuer, authorization, token and the key set of the ID tokens. */
export type ProviderMetadata = oidc.ServerMetadata;

/** What a provider takes beyond its endpoints. */
interface Traits {
  /** it answers with an access token only: the person is read from its user API, not from an ID token */
  userApi?: UserApi;
  /** it documents PKCE (RFC 7636); unset: the code_challenge is sent */
  pkce?: false;
  /** how the client secret reaches the token endpoint; client_secret_post unless said */
  clientAuth?: 'basic';
  /** Apple answers with an HTML form POSTed to the callback when name or email is asked for */
  responseMode?: 'form_post';
}

interface Published extends Traits {
  metadata: ProviderMetadata;
}

/**
 * The published endpoints of the providers with a fixed issuer. github and bitbucket issue no ID token (plain
 * OAuth 2.0): their `issuer` is only the name openid-client files the server under. facebook and gitlab issue
 * one once `openid` is among the credential's scopes.
 */
const PUBLISHED: Partial<Record<SsoProvider, Published>> = {
  google: {
    metadata: {
      issuer: 'https://accounts.google.com',
      authorization_endpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
      token_endpoint: 'https://oauth2.googleapis.com/token',
      jwks_uri: 'https://www.googleapis.com/oauth2/v3/certs',
    },
  },
  github: {
    metadata: {
      issuer: 'https://github.com',
      authorization_endpoint: 'https://github.com/login/oauth/authorize',
      token_endpoint: 'https://github.com/login/oauth/access_token',
    },
    userApi: { kind: 'github', base: 'https://api.github.com' },
  },
  bitbucket: {
    metadata: {
      issuer: 'https://bitbucket.org',
      authorization_endpoint: 'https://bitbucket.org/site/oauth2/authorize',
      token_endpoint: 'https://bitbucket.org/site/oauth2/access_token',
    },
    userApi: { kind: 'bitbucket', base: 'https://api.bitbucket.org/2.0' },
    // Bitbucket Cloud documents neither PKCE nor the secret in the body: HTTP Basic, as its examples show.
    pkce: false,
    clientAuth: 'basic',
  },
  gitlab: {
    metadata: {
      issuer: 'https://gitlab.com',
      authorization_endpoint: 'https://gitlab.com/oauth/authorize',
      token_endpoint: 'https://gitlab.com/oauth/token',
      jwks_uri: 'https://gitlab.com/oauth/discovery/keys',
    },
  },
  facebook: {
    metadata: {
      issuer: 'https://www.facebook.com',
      authorization_endpoint: 'https://www.facebook.com/v19.0/dialog/oauth',
      token_endpoint: 'https://graph.facebook.com/v19.0/oauth/access_token',
      jwks_uri: 'https://www.facebook.com/.well-known/oauth/openid/jwks/',
    },
  },
  line: {
    metadata: {
      issuer: 'https://access.line.me',
      authorization_endpoint: 'https://access.line.me/oauth2/v2.1/authorize',
      token_endpoint: 'https://api.line.me/oauth2/v2.1/token',
      jwks_uri: 'https://api.line.me/oauth2/v2.1/certs',
    },
  },
  apple: {
    metadata: {
      issuer: 'https://appleid.apple.com',
      authorization_endpoint: 'https://appleid.apple.com/auth/authorize',
      token_endpoint: 'https://appleid.apple.com/auth/token',
      jwks_uri: 'https://appleid.apple.com/auth/keys',
    },
    responseMode: 'form_post',
  },
};

/** Microsoft's login host: openid-client recognizes Entra ID by it (see azureDiscoveryUrl). */
export const AZURE_LOGIN = 'https://login.microsoftonline.com';

/**
 * The v2.0 discovery URL of an azuread tenant. The seed's `consumer` is Microsoft's `consumers`. For the
 * multi-tenant ones (common, organizations, consumers) Microsoft's document names the issuer as the template
 * `https://login.microsoftonline.com/{tenantid}/v2.0`; openid-client, finding that document at Microsoft's
 * host, checks each ID token's `iss` against the template filled with the token's own `tid` claim, after the
 * signature (against the tenant-independent key set), audience, nonce and expiry: the rule Microsoft documents.
 */
export function azureDiscoveryUrl(tenant: string): string {
  const name = tenant === 'consumer' ? 'consumers' : tenant;
  return `${AZURE_LOGIN}/${encodeURIComponent(name)}/v2.0`;
}

/** A provider's configuration for one client, ready for openid-client, and what the flow must do with it. */
export interface ProviderSetup {
  config: oidc.Configuration;
  /** set for plain OAuth 2.0 providers: no ID token, the person's verified email from this API */
  userApi?: UserApi;
  /** send a PKCE code_challenge and verifier */
  pkce: boolean;
  responseMode?: 'form_post';
}

export interface ProviderEndpoints {
  /**
   * The credential's provider, configured for its client_id and, at the callback, its client secret (the
   * start needs none). Discovery failures are 502; a credential that cannot sign in is 400 naming why.
   */
  setup(credential: SsoCredential, clientSecret: string | undefined): Promise<ProviderSetup>;
  /** Forget what discovery found at this credential's provider: a call to it failed, so look again next time. */
  refresh(credential: SsoCredential): void;
}

export interface EndpointsDeps {
  clock: Clock;
  /** SERVICE_WEBHOOK_ALLOW_INSECURE: plain http and loopback providers, for development and tests */
  allowInsecure: boolean;
  /** how long discovered metadata is kept when nothing fails; one hour by default */
  discoveryTtlMs?: number;
  /** seconds each call to a provider may take */
  timeoutS?: number;
  /**
   * Tests only, never read from the environment: calls to these origins (`https://github.com`) go to the
   * given base URLs instead (loopback stand-ins), as the object says at the time of each call. The URLs the
   * browser is sent to are left as published.
   */
  reroute?: Readonly<Record<string, string>>;
  /** every call to a provider goes through it: the service's address guard (src/lib/guarded-connect.ts) */
  fetch?: (url: string, init?: RequestInit) => Promise<Response>;
}

/** openid-client's call to the discovery document, answered from this cache when it is fresh. */
interface Discovered {
  at: number;
  document: Promise<string>;
}

export function createProviderEndpoints(deps: EndpointsDeps): ProviderEndpoints {
  const ttl = deps.discoveryTtlMs ?? 3_600_000;
  const timeout = deps.timeoutS ?? 10;
  const discovered = new Map<string, Discovered>();
  const reroute = deps.reroute;

  /** fetch, with the test reroutes applied. */
  const send: oidc.CustomFetch = (url, options) => {
    // Read at each call: a test may fill in its stand-ins' addresses after the service started.
    for (const [origin, base] of Object.entries(reroute ?? {})) {
      if (url === origin || url.startsWith(`${origin}/`)) return (deps.fetch ?? fetch)(base + url.slice(origin.length), options);
    }
    return (deps.fetch ?? fetch)(url, options);
  };

  /**
   * The well-known document, fetched once per TTL; a failure is not kept. openid-client still parses and
   * checks it each time, so what it knows about the provider (Entra ID's issuer template) holds for every copy.
   */
  const cachingSend: oidc.CustomFetch = async (url, options) => {
    if (!url.includes('/.well-known/openid-configuration')) return send(url, options);
    const now = deps.clock.monoMs();
    let entry = discovered.get(url);
    if (!entry || now - entry.at >= ttl) {
      const document = send(url, options).then(async (res) => {
        if (res.status !== 200) throw new Error(`the discovery document answered HTTP ${res.status}`);
        return res.text();
      });
      entry = { at: now, document };
      discovered.set(url, entry);
      const kept = entry;
      document.catch(() => {
        if (discovered.get(url) === kept) discovered.delete(url);
      });
    }
    return new Response(await entry.document, { status: 200, headers: { 'content-type': 'application/json' } });
  };

  /** Drops the cached discovery document of this provider URL. */
  function forget(url: string): void {
    const prefix = url.replace(/\/$/, '');
    for (const key of discovered.keys()) if (key.startsWith(prefix)) discovered.delete(key);
  }

  function clientAuth(traits: Traits, secret: string | undefined): oidc.ClientAuth {
    if (secret === undefined) return oidc.None();
    return traits.clientAuth === 'basic' ? oidc.ClientSecretBasic(secret) : oidc.ClientSecretPost(secret);
  }

  /** Settings every configuration shares: the timeout, plain http when allowed, the reroutes. */
  function finish(config: oidc.Configuration): oidc.Configuration {
    if (deps.allowInsecure) oidc.allowInsecureRequests(config);
    config.timeout = timeout;
    if (reroute || deps.fetch) config[oidc.customFetch] = send;
    return config;
  }

  async function discover(url: string, credential: SsoCredential, secret: string | undefined): Promise<oidc.Configuration> {
    try {
      const config = await oidc.discovery(new URL(url), credential.client_id, undefined, clientAuth({}, secret), {
        execute: deps.allowInsecure ? [oidc.allowInsecureRequests] : [],
        timeout,
        [oidc.customFetch]: cachingSend,
      });
      return finish(config);
    } catch (error) {
      forget(url);
      throw new ServiceError('ERR_BAD_GATEWAY', `the provider at ${url} could not be reached for OpenID discovery: ${describe(error)}`, { cause: error });
    }
  }

  function discoveryUrl(credential: SsoCredential): string | undefined {
    if (credential.provider === 'service') return credential.options['service']?.organization_url;
    if (credential.provider === 'azuread') return azureDiscoveryUrl(credential.options['azuread']?.tenant ?? 'common');
    return undefined;
  }

  return {
    async setup(credential, secret) {
      const provider = credential.provider as SsoProvider;
      const options = credential.options[provider];
      const published = PUBLISHED[provider];
      if (published?.userApi) {
        const config = finish(new oidc.Configuration(published.metadata, credential.client_id, undefined, clientAuth(published, secret)));
        return { config, userApi: published.userApi, pkce: published.pkce !== false };
      }
      if (!options?.authorize_scopes.includes('openid')) {
        throw badRequest(`credential ${quote(credential.client_id)}: its authorize_scopes lack "openid", so ${provider} would issue no ID token`);
      }
      if (provider === 'service' || provider === 'azuread') {
        const url = discoveryUrl(credential);
        if (!url) throw badRequest(`credential ${quote(credential.client_id)}: options.service.organization_url is not set`);
        return { config: await discover(url, credential, secret), pkce: true };
      }
      if (!published) throw badRequest(`credential ${quote(credential.client_id)}: provider ${quote(credential.provider)} has no known endpoints`);
      const config = finish(new oidc.Configuration(published.metadata, credential.client_id, undefined, clientAuth(published, secret)));
      return { config, pkce: published.pkce !== false, ...(published.responseMode && { responseMode: published.responseMode }) };
    },
    refresh(credential) {
      const url = discoveryUrl(credential);
      if (url) forget(url);
    },
  };
}

/** A library or network error in a few words, without the stack. */
export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
