// Validation of a credential's provider options (the seed's option table and extra field rules): only the
// credential's own provider may have options; scopes merge with the always-requested ones; defaults fill in.
import { badRequest, quote } from '../errors.js';
import type { SsoProviderOptions } from '../domain/state.js';
import { checkTargetUrl } from '../domain/webhook-rules.js';
import { canonicalApplePrivateKey, checkAppleId, secretLifetimeSeconds, SECRET_LIFETIME_DEFAULT } from './apple.js';
import { mergeScopes, type SsoProvider } from './providers.js';

/** One provider's options as a request gives them; the route schema admits only the provider's own fields. */
export interface ProviderOptionsInput {
  authorize_scopes?: string[];
  groups_claim?: string;
  tenant?: string;
  organization_url?: string;
  private_key?: string;
  team_id?: string;
  key_id?: string;
  secret_lifetime?: string;
}

export type OptionsInput = Partial<Record<string, ProviderOptionsInput>>;

export interface CheckedOptions {
  /** create: every field with its default; patch: only the fields given */
  options: Partial<SsoProviderOptions>;
  /** apple: the key in canonical PKCS8 PEM, to be sealed; never part of options */
  private_key?: string;
}

export const AZURE_PSEUDO_TENANTS = ['common', 'organizations', 'consumer'] as const;
export const AZURE_DEFAULT_TENANT = 'common';
const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DOMAIN = /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

/** azuread.tenant: a tenant GUID, a tenant domain, or one of the pseudo tenants. */
export function checkTenant(raw: string, field = 'options.azuread.tenant'): string {
  if ((AZURE_PSEUDO_TENANTS as readonly string[]).includes(raw) || GUID.test(raw) || DOMAIN.test(raw)) return raw;
  throw badRequest(`${field}: ${quote(raw)} is not a tenant GUID, a tenant domain name, or one of ${AZURE_PSEUDO_TENANTS.join(', ')}`);
}

const CLAIM_NAME = /^[\x21-\x7e]{1,100}$/;

/** groups_claim: a claim name (printable, no spaces, at most 100 characters), or '' to stop following one. */
export function checkGroupsClaim(raw: string, field = 'options.service.groups_claim'): string {
  if (raw === '' || CLAIM_NAME.test(raw)) return raw;
  throw badRequest(`${field}: ${quote(raw)} is not a claim name: 1 to 100 printable characters without spaces, or '' to leave groups alone`);
}

/**
 * The provider's options checked and normalized. `fill` (creation) adds the defaults of the fields not
 * given; without it (a change) only the given fields are returned, to be merged into the stored ones.
 * allowInsecure: the deployment's SERVICE_WEBHOOK_ALLOW_INSECURE, which also governs service.organization_url.
 */
export function checkOptions(provider: SsoProvider, input: OptionsInput | undefined, allowInsecure: boolean, fill: boolean): CheckedOptions {
  for (const [name, value] of Object.entries(input ?? {})) {
    if (name !== provider && value !== undefined) throw badRequest(`options.${name}: options for ${name} do not apply to a ${provider} credential`);
  }
  const own = input?.[provider] ?? {};
  const at = (field: string) => `options.${provider}.${field}`;
  const options: Partial<SsoProviderOptions> = {};
  if (own.authorize_scopes !== undefined || fill) options.authorize_scopes = mergeScopes(provider, own.authorize_scopes, at('authorize_scopes'));
  if (own.groups_claim !== undefined) options.groups_claim = checkGroupsClaim(own.groups_claim, at('groups_claim'));
  const out: CheckedOptions = { options };
  switch (provider) {
    case 'azuread':
      if (own.tenant !== undefined) options.tenant = checkTenant(own.tenant, at('tenant'));
      else if (fill) options.tenant = AZURE_DEFAULT_TENANT;
      break;
    case 'service':
      if (own.organization_url !== undefined) {
        checkTargetUrl(own.organization_url, allowInsecure, at('organization_url'));
        options.organization_url = own.organization_url;
      }
      break;
    case 'apple':
      if (own.team_id !== undefined) options.team_id = checkAppleId(own.team_id, at('team_id'));
      if (own.key_id !== undefined) options.key_id = checkAppleId(own.key_id, at('key_id'));
      if (own.secret_lifetime !== undefined) {
        secretLifetimeSeconds(own.secret_lifetime, at('secret_lifetime'));
        options.secret_lifetime = own.secret_lifetime;
      } else if (fill) options.secret_lifetime = SECRET_LIFETIME_DEFAULT;
      if (own.private_key !== undefined) out.private_key = canonicalApplePrivateKey(own.private_key, at('private_key'));
      break;
    default:
      break;
  }
  return out;
}
