// The use cases behind the credential routes: a request's body becomes a command whose options are
// validated for the credential's provider and whose secrets are already sealed, so that no secret enters
// the organization's log in the clear when SERVICE_SECRETS_KEY is set.
import type { Command } from '../domain/commands.js';
import type { SsoCredentialInput, SsoCredentialPatch } from '../domain/sso-credentials.js';
import type { SsoCredential } from '../domain/state.js';
import { checkOptions, type OptionsInput } from './options.js';
import { checkProvider } from './providers.js';
import type { SecretSealer } from './secrets.js';

export interface CreateCredentialBody {
  client_id: string;
  client_secret: string;
  provider: string;
  label?: string;
  external_cred_id?: string;
  enable_in_slashid_oidc_authz_server?: boolean;
  options?: OptionsInput;
}

export type PatchCredentialBody = Partial<Omit<CreateCredentialBody, 'client_id' | 'provider'>>;

export interface CredentialCommands {
  create(org: string, body: CreateCredentialBody): Command;
  /** current: the stored credential, whose provider the options are checked against */
  update(org: string, current: SsoCredential, body: PatchCredentialBody): Command;
}

export function createCredentialCommands(deps: { sealer: SecretSealer; allowInsecure: boolean }): CredentialCommands {
  return {
    create(org, body) {
      const provider = checkProvider(body.provider, 'provider');
      const { options, private_key } = checkOptions(provider, body.options, deps.allowInsecure, true);
      const credential: SsoCredentialInput = {
        client_id: body.client_id,
        provider,
        label: body.label ?? '',
        external_cred_id: body.external_cred_id ?? '',
        enable_in_slashid_oidc_authz_server: body.enable_in_slashid_oidc_authz_server ?? false,
        options: { [provider]: { authorize_scopes: [], ...options } },
        client_secret: deps.sealer.seal(org, body.client_id, 'client_secret', body.client_secret),
      };
      if (private_key !== undefined) credential.private_key = deps.sealer.seal(org, body.client_id, 'private_key', private_key);
      return { kind: 'CreateSsoCredential', credential };
    },
    update(org, current, body) {
      const provider = checkProvider(current.provider, 'provider');
      const patch: SsoCredentialPatch = {};
      if (body.label !== undefined) patch.label = body.label;
      if (body.external_cred_id !== undefined) patch.external_cred_id = body.external_cred_id;
      if (body.enable_in_slashid_oidc_authz_server !== undefined) patch.enable_in_slashid_oidc_authz_server = body.enable_in_slashid_oidc_authz_server;
      if (body.client_secret !== undefined) patch.client_secret = deps.sealer.seal(org, current.client_id, 'client_secret', body.client_secret);
      if (body.options !== undefined) {
        const { options, private_key } = checkOptions(provider, body.options, deps.allowInsecure, false);
        if (Object.keys(options).length > 0) patch.options = options;
        if (private_key !== undefined) patch.private_key = deps.sealer.seal(org, current.client_id, 'private_key', private_key);
      }
      return { kind: 'UpdateSsoCredential', client_id: current.client_id, provider, patch };
    },
  };
}
