// Decisions about OIDC provider credentials for SSO, and the shape the API returns for one. Options and
// secrets arrive validated and sealed (src/sso/credentials.ts): what is decided here is identity, existence
// and how a change combines with what is stored.
import { badRequest, conflict, notFound, quote } from '../errors.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import type { OrgState, SsoCredential, SsoProviderOptions, StoredSecret } from './state.js';

export const MAX_SSO_CREDENTIALS = 100;

export type SsoCredentialInput = Omit<SsoCredential, 'created'>;

/** What a PATCH sets; options holds only the fields given, of the credential's own provider. */
export interface SsoCredentialPatch {
  label?: string;
  external_cred_id?: string;
  enable_in_slashid_oidc_authz_server?: boolean;
  options?: Partial<SsoProviderOptions>;
  client_secret?: StoredSecret;
  private_key?: StoredSecret;
}

/** The seed's OIDC SSO credential: never a secret. */
export type SsoCredentialRet = Omit<SsoCredential, 'client_secret' | 'private_key' | 'created'>;

/**
 * The options each provider's credential cannot work without: those the original's schema marks required
 * (OAuthAppleProviderOptions; no other provider's has any). Its secret_lifetime is required there too, but
 * the seed gives it a default, which creation fills in.
 */
export const REQUIRED_OPTIONS: Readonly<Record<string, readonly ('private_key' | 'team_id' | 'key_id')[]>> = {
  apple: ['private_key', 'team_id', 'key_id'],
};

/** Refuses a credential, as it would be stored, that lacks an option its provider requires. */
function requireProviderOptions(c: SsoCredentialInput): void {
  const own = c.options[c.provider];
  const missing = (REQUIRED_OPTIONS[c.provider] ?? []).filter((f) => (f === 'private_key' ? c.private_key === undefined : !own?.[f]));
  if (missing.length > 0) {
    throw badRequest(`${missing.map((f) => `options.${c.provider}.${f}`).join(', ')}: required for ${c.provider} credentials`);
  }
}

export function ssoCredentialView(c: SsoCredential): SsoCredentialRet {
  const options: Record<string, SsoProviderOptions> = {};
  for (const [name, o] of Object.entries(c.options)) options[name] = { ...o, authorize_scopes: [...o.authorize_scopes] };
  return {
    client_id: c.client_id,
    provider: c.provider,
    label: c.label,
    external_cred_id: c.external_cred_id,
    enable_in_slashid_oidc_authz_server: c.enable_in_slashid_oidc_authz_server,
    options,
  };
}

export function requireSsoCredential(state: OrgState, clientId: string): SsoCredential {
  const c = state.sso_credentials.get(clientId);
  if (!c) throw notFound(`OIDC provider credential ${quote(clientId)} not found`);
  return c;
}

/** The organization's credentials in creation order, optionally only one provider's. */
export function listSsoCredentials(state: OrgState, provider?: string): SsoCredentialRet[] {
  const out: SsoCredentialRet[] = [];
  for (const c of state.sso_credentials.values()) if (provider === undefined || c.provider === provider) out.push(ssoCredentialView(c));
  return out;
}

export function createSsoCredential(state: OrgState, input: SsoCredentialInput, ctx: DecideContext): Decision<SsoCredentialRet> {
  requireProviderOptions(input);
  if (state.sso_credentials.has(input.client_id)) throw conflict(`client_id: a credential with the client_id ${quote(input.client_id)} already exists`);
  if (state.sso_credentials.size >= MAX_SSO_CREDENTIALS) throw badRequest(`an organization may have at most ${MAX_SSO_CREDENTIALS} OIDC provider credentials`);
  const credential: SsoCredential = { ...input, created: new Date(ctx.nowMs).toISOString() };
  return decision(ssoCredentialView(credential), [{ t: 'SsoCredentialCreated', credential }]);
}

/**
 * client_id and provider never change. Options merge field by field into the provider's stored ones, so a
 * PATCH need not repeat a private key it cannot read back.
 */
export function updateSsoCredential(state: OrgState, clientId: string, provider: string, patch: SsoCredentialPatch): Decision<SsoCredentialRet> {
  const current = requireSsoCredential(state, clientId);
  // The caller validated the patch for the provider it saw; the credential may have been replaced since.
  if (current.provider !== provider) throw conflict(`OIDC provider credential ${quote(clientId)} changed while the request ran; retry`);
  const { options, ...rest } = patch;
  const next: SsoCredential = { ...current, ...rest };
  if (options !== undefined) {
    const own = current.options[provider] ?? { authorize_scopes: [] };
    next.options = { [provider]: { ...own, ...options } };
  }
  // Also a credential stored before these options were required must gain them with its first change.
  requireProviderOptions(next);
  if (JSON.stringify(next) === JSON.stringify(current)) return decision(ssoCredentialView(current));
  return decision(ssoCredentialView(next), [{ t: 'SsoCredentialUpdated', credential: next }]);
}

export function deleteSsoCredential(state: OrgState, clientId: string): Decision<null> {
  requireSsoCredential(state, clientId);
  return decision(null, [{ t: 'SsoCredentialDeleted', client_id: clientId }]);
}
