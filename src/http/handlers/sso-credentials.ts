// OIDC provider credentials for SSO: create, list (optionally one provider's), get, change, delete.
// Secrets are write-only: no route returns client_secret or an Apple private key.
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { listSsoCredentials, requireSsoCredential, ssoCredentialView } from '../../domain/sso-credentials.js';
import { createCredentialCommands, type CreateCredentialBody, type PatchCredentialBody } from '../../sso/credentials.js';
import { MAX_SCOPES, SSO_PROVIDERS } from '../../sso/providers.js';
import type { SecretSealer } from '../../sso/secrets.js';
import { route, type Route } from '../route.js';
import { execute, type HandlerDeps } from './deps.js';

const PATH = '/organizations/sso/oidc/provider-credentials';

const Provider = Type.Union(
  SSO_PROVIDERS.map((p) => Type.Literal(p)),
  { description: '`service` is a generic OIDC provider at options.service.organization_url' },
);
const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
  maxItems: MAX_SCOPES,
  description: "scopes without spaces; stored as the provider's always-requested scopes followed by these, without duplicates",
});
const GroupsClaim = Type.String({
  maxLength: 100,
  description: "the ID-token claim (an array of group names) that the person's groups follow at each SSO sign-in; groups the organization lacks are ignored; '' or absent: groups are left alone",
});
const providerOptions = (fields: TProperties, description: string): TObject =>
  Type.Object({ authorize_scopes: Type.Optional(Scopes), groups_claim: Type.Optional(GroupsClaim), ...fields }, { additionalProperties: false, description });
const common = (name: string) => providerOptions({}, `${name}: authorize_scopes only`);
const OptionFields = {
  google: common('google'),
  github: common('github'),
  bitbucket: common('bitbucket'),
  gitlab: common('gitlab'),
  facebook: common('facebook'),
  line: common('line'),
  azuread: providerOptions(
    { tenant: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'a tenant GUID, a tenant domain, or common, organizations, consumer; default common' })) },
    'Microsoft Entra ID (Azure AD)',
  ),
  service: providerOptions(
    { organization_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'the organization URL at the provider: https with a host name (http and loopback with SERVICE_WEBHOOK_ALLOW_INSECURE=1)' })) },
    'a generic OIDC provider',
  ),
  apple: providerOptions(
    {
      private_key: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'ES256 (P-256) private key, PKCS8 PEM; write-only' })),
      team_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: '10 characters; the iss of client-secret JWTs' })),
      key_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: '10 characters; the kid of client-secret JWTs' })),
      secret_lifetime: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'duration such as 5m, 24h, 720h, 1h30m; 300s to 15777000s; default 720h (30 days)' })),
    },
    'Sign in with Apple',
  ),
};
const Options = Type.Partial(Type.Object(OptionFields), { additionalProperties: false, description: "only the credential's own provider's options" });
const ReturnedOptions = Type.Partial(
  Type.Object(Object.fromEntries(Object.entries(OptionFields).map(([k, v]) => [k, Type.Omit(v, ['private_key'])]))),
  { description: 'the provider\'s options with defaults filled in; never the private key' },
);

const Settings = {
  client_secret: Type.String({ minLength: 1, maxLength: 4096, description: 'write-only: never returned' }),
  label: Type.String({ maxLength: 256 }),
  external_cred_id: Type.String({ maxLength: 256 }),
  enable_in_slashid_oidc_authz_server: Type.Boolean(),
  options: Options,
};
const ClientId = Type.String({ minLength: 1, maxLength: 512, pattern: '^[\\x21-\\x7e]+$', description: 'printable ASCII without spaces' });
const CreateBody = Type.Object(
  {
    client_id: ClientId,
    client_secret: Settings.client_secret,
    provider: Provider,
    label: Type.Optional(Settings.label),
    external_cred_id: Type.Optional(Settings.external_cred_id),
    enable_in_slashid_oidc_authz_server: Type.Optional(Settings.enable_in_slashid_oidc_authz_server),
    options: Type.Optional(Settings.options),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Partial(Type.Object(Settings), { additionalProperties: false, description: 'client_id and provider never change' });
const Credential = Type.Object({
  client_id: Type.String(),
  provider: Provider,
  label: Type.String(),
  external_cred_id: Type.String(),
  enable_in_slashid_oidc_authz_server: Type.Boolean(),
  options: ReturnedOptions,
});
const ListQuery = Type.Object({ oauth_provider: Type.Optional(Provider) }, { additionalProperties: false });

export interface SsoCredentialRouteDeps {
  /** SERVICE_WEBHOOK_ALLOW_INSECURE: also allows http and loopback organization_url values */
  allowInsecure: boolean;
  sealer: SecretSealer;
}

export function ssoCredentialRoutes(deps: HandlerDeps, sso: SsoCredentialRouteDeps): Route[] {
  const commands = createCredentialCommands(sso);
  const id = (req: { params: Record<string, string> }) => req.params['oauth_client_id'] as string;
  return [
    route<Static<typeof CreateBody>>({
      method: 'post',
      path: PATH,
      summary: 'Create an OIDC provider credential for SSO',
      tag: 'sso',
      auth: 'key',
      body: CreateBody,
      success: { status: 201 },
      errors: [400, 401, 403, 404, 408, 409],
      handler: async (req) => {
        await execute(deps, req, commands.create(req.org.id, req.body as CreateCredentialBody));
        return { status: 201 };
      },
    }),
    route<unknown, Static<typeof ListQuery>>({
      method: 'get',
      path: PATH,
      summary: "List the organization's OIDC provider credentials for SSO, optionally one provider's",
      tag: 'sso',
      auth: 'key',
      query: ListQuery,
      success: { status: 200, result: Type.Array(Credential) },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: listSsoCredentials(req.org.state, req.query.oauth_provider) }),
    }),
    route({
      method: 'get',
      path: `${PATH}/{oauth_client_id}`,
      summary: 'Get an OIDC provider credential',
      tag: 'sso',
      auth: 'key',
      success: { status: 200, result: Credential },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: ssoCredentialView(requireSsoCredential(req.org.state, id(req))) }),
    }),
    route<Static<typeof PatchBody>>({
      method: 'patch',
      path: `${PATH}/{oauth_client_id}`,
      summary: "Change an OIDC provider credential's secret, label, external_cred_id, options or enable_in_slashid_oidc_authz_server",
      tag: 'sso',
      auth: 'key',
      body: PatchBody,
      success: { status: 200, description: 'bare envelope' },
      errors: [400, 401, 403, 404, 408, 409],
      handler: async (req) => {
        const current = requireSsoCredential(req.org.state, id(req));
        await execute(deps, req, commands.update(req.org.id, current, req.body as PatchCredentialBody));
        return { status: 200 };
      },
    }),
    route({
      method: 'delete',
      path: `${PATH}/{oauth_client_id}`,
      summary: 'Delete an OIDC provider credential',
      tag: 'sso',
      auth: 'key',
      success: { status: 200, description: 'bare envelope' },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps, req, { kind: 'DeleteSsoCredential', client_id: id(req) });
        return { status: 200 };
      },
    }),
  ];
}
