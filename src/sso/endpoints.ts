// Where each provider signs people in: its published endpoints in one table, the azuread tenant's, and the
// `service` provider's by OpenID discovery at options.service.organization_url (cached, refreshed on failure).
import * as oidc from 'openid-client';
import { badRequest, quote, ServiceError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { SsoCredential } from '../domain/state.js';
import type { SsoProvider } from './providers.js';

/** The endpoints openid-client needs: issuer, authorization, token and the key set of the ID tokens. */
export type ProviderMetadata = oidc.ServerMetadata;

/**
 * The published endpoints of the providers with a fixed issuer. github and bitbucket issue no ID token (plain
 * OAuth 2.0), so they cannot sign in through this OIDC flow; facebook and gitlab do once `openid` is among the
 * credential's scopes.
 */
const PUBLISHED: Partial<Record<SsoProvider, ProviderMetadata>> = {
  google: {
    issuer: 'https://accounts.google.com',
    authorization_endpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
    token_endpoint: 'https://oauth2.googleapis.com/token',
    jwks_uri: 'https://www.googleapis.com/oauth2/v3/certs',
  },
  gitlab: {
    issuer: 'https://gitlab.com',
    authorization_endpoint: 'https://gitlab.com/oauth/authorize',
    token_endpoint: 'https://gitlab.com/oauth/token',
    jwks_uri: 'https://gitlab.com/oauth/discovery/keys',
  },
  facebook: {
    issuer: 'https://www.facebook.com',
    authorization_endpoint: 'https://www.facebook.com/v19.0/dialog/oauth',
    token_endpoint: 'https://graph.facebook.com/v19.0/oauth/access_token',
    jwks_uri: 'https://www.facebook.com/.well-known/oauth/openid/jwks/',
  },
  line: {
    issuer: 'https://access.line.me',
    authorization_endpoint: 'https://access.line.me/oauth2/v2.1/authorize',
    token_endpoint: 'https://api.line.me/oauth2/v2.1/token',
    jwks_uri: 'https://api.line.me/oauth2/v2.1/certs',
  },
  apple: {
    issuer: 'https://appleid.apple.com',
    authorization_endpoint: 'https://appleid.apple.com/auth/authorize',
    token_endpoint: 'https://appleid.apple.com/auth/token',
    jwks_uri: 'https://appleid.apple.com/auth/keys',
  },
};

/** Providers that answer with an access token only: no ID token to verify, so no sign-in here. */
const NO_ID_TOKEN: readonly SsoProvider[] = ['github', 'bitbucket'];

/**
 * Azure AD v2.0 endpoints of a tenant. With a pseudo tenant (common, organizations, consumer) the ID token's
 * issuer names the person's own tenant, which no fixed issuer can match: such credentials are refused with a
 * message saying to configure the tenant itself.
 */
export function azureMetadata(tenant: string): ProviderMetadata {
  const base = `https://login.microsoftonline.com/${encodeURIComponent(tenant)}`;
  return {
    issuer: `${base}/v2.0`,
    authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
    token_endpoint: `${base}/oauth2/v2.0/token`,
    jwks_uri: `${base}/discovery/v2.0/keys`,
  };
}

export interface ProviderEndpoints {
  /** The credential's provider endpoints; `service` ones are discovered (502 when the provider cannot be reached). */
  metadata(credential: SsoCredential): Promise<ProviderMetadata>;
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
}

const PSEUDO_TENANTS = ['common', 'organizations', 'consumer', 'consumers'];

export function createProviderEndpoints(deps: EndpointsDeps): ProviderEndpoints {
  const ttl = deps.discoveryTtlMs ?? 3_600_000;
  const discovered = new Map<string, { at: number; metadata: Promise<ProviderMetadata> }>();

  function discover(url: string): Promise<ProviderMetadata> {
    const now = deps.clock.monoMs();
    const cached = discovered.get(url);
    if (cached && now - cached.at < ttl) return cached.metadata;
    const metadata = oidc
      .discovery(new URL(url), 'discovery', undefined, undefined, {
        execute: deps.allowInsecure ? [oidc.allowInsecureRequests] : [],
        timeout: deps.timeoutS ?? 10,
      })
      .then((config) => config.serverMetadata() as ProviderMetadata);
    discovered.set(url, { at: now, metadata });
    // A failed discovery is not kept: the next sign-in tries again.
    metadata.catch(() => {
      if (discovered.get(url)?.metadata === metadata) discovered.delete(url);
    });
    return metadata.catch((error: unknown) => {
      throw new ServiceError('ERR_BAD_GATEWAY', `the provider at ${url} could not be reached for OpenID discovery: ${describe(error)}`, { cause: error });
    });
  }

  return {
    async metadata(credential) {
      const provider = credential.provider as SsoProvider;
      const options = credential.options[provider];
      if (NO_ID_TOKEN.includes(provider)) {
        throw badRequest(`credential ${quote(credential.client_id)}: ${provider} issues no OpenID ID token, so it cannot be used for OIDC sign-in`);
      }
      if (!options?.authorize_scopes.includes('openid')) {
        throw badRequest(`credential ${quote(credential.client_id)}: its authorize_scopes lack "openid", so ${provider} would issue no ID token`);
      }
      if (provider === 'service') {
        if (!options.organization_url) throw badRequest(`credential ${quote(credential.client_id)}: options.service.organization_url is not set`);
        return discover(options.organization_url);
      }
      if (provider === 'azuread') {
        const tenant = options.tenant ?? 'common';
        if (PSEUDO_TENANTS.includes(tenant)) {
          throw badRequest(`credential ${quote(credential.client_id)}: options.azuread.tenant ${quote(tenant)} is not one tenant, so its ID tokens' issuer cannot be checked; set the tenant's GUID or domain`);
        }
        return azureMetadata(tenant);
      }
      const published = PUBLISHED[provider];
      if (!published) throw badRequest(`credential ${quote(credential.client_id)}: provider ${quote(credential.provider)} has no known endpoints`);
      return published;
    },
    refresh(credential) {
      const url = credential.options['service']?.organization_url;
      if (credential.provider === 'service' && url) discovered.delete(url);
    },
  };
}

/** A library or network error in a few words, without the stack. */
export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
