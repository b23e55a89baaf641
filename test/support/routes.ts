// Every route of the persons (handles, GDPR consents, passwords, credentials, mint-token, token revocation, bulk import and direct-id included), groups,
// attributes, organizations, message templates, webhooks (dead letters included), access-control and SSO provider credentials API with a valid sample request, so that tests can sweep them all (auth,
// consistency headers, isolation, bodies) and notice a route without a sample.
export interface RouteCase {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** the declared path, as in the OpenAPI document */
  route: string;
  /** the path to call */
  path: string;
  body?: unknown;
  /** the route also takes no body at all */
  bodyOptional?: boolean;
  /** request headers the body needs: set for a body that is not JSON (body is then its text) */
  headers?: Record<string, string>;
}

const BOUNDARY = 'sample-boundary';
/** POST /persons/bulk-import's body: multipart/form-data with a one-row CSV file in the field `persons` */
const BULK_IMPORT: Pick<RouteCase, 'body' | 'headers'> = {
  body: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="persons"; filename="persons.csv"\r\nContent-Type: text/csv\r\n\r\n"service:usernames"\nsample-import\n\r\n--${BOUNDARY}--\r\n`,
  headers: { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
};

export interface Targets {
  person: string;
  group: string;
  webhook: string;
  bucket?: string;
  /** access control: a role and a permission of the organization (defaults: sample names) */
  role?: string;
  permission?: string;
  /** client_id of an OIDC provider credential; default sample-client, the one the POST case creates */
  credential?: string;
  /** client_id of an OAuth 2.0 client of the organization (default: a sample ID, which does not exist) */
  oauthClient?: string;
  /** an identity token of a person of the organization (default: a sample that is no token) */
  token?: string;
  /** a MITM detection token of the organization (default: a sample that does not exist) */
  mitmToken?: string;
  /** connection_id of a cloud connection (default: a sample ID, which does not exist) */
  cloudConnection?: string;
  /** a Service-Consistency-Token a write of the organization answered (default: a sample that is no token) */
  consistencyToken?: string;
}

const SAMPLE_TRUST = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }] });

export function routeCases(t: Targets): RouteCase[] {
  const p = encodeURIComponent(t.person);
  const g = encodeURIComponent(t.group);
  const b = t.bucket ?? 'end_user_read_write';
  const w = encodeURIComponent(t.webhook);
  const role = encodeURIComponent(t.role ?? 'sample-role');
  const perm = encodeURIComponent(t.permission ?? 'sample.permission');
  const sso = '/organizations/sso/oidc/provider-credentials';
  const cred = encodeURIComponent(t.credential ?? 'sample-client');
  const oc = encodeURIComponent(t.oauthClient ?? '00000000-0000-7000-8000-000000000000');
  const cloud = '/cloud/connections';
  const cc = encodeURIComponent(t.cloudConnection ?? '00000000-0000-7000-8000-000000000001');
  const awsRole = `${cloud}/{connection_id}/aws/roles/{role_name}`;
  const roleAt = `${cloud}/${cc}/aws/roles/sample`;
  const c = (method: RouteCase['method'], route: string, path: string, body?: unknown): RouteCase => (body === undefined ? { method, route, path } : { method, route, path, body });
  return [
    c('GET', '/organizations', '/organizations'),
    c('POST', '/organizations/suborganizations', '/organizations/suborganizations', { sub_org_name: 'sample' }),
    c('GET', '/organizations/suborganizations', '/organizations/suborganizations'),
    c('PUT', '/organizations/api-keys', '/organizations/api-keys'),
    c('GET', '/organizations/config', '/organizations/config'),
    c('PATCH', '/organizations/config', '/organizations/config', { token_duration: 3600 }),
    c('GET', '/organizations/config/token-template', '/organizations/config/token-template'),
    c('PUT', '/organizations/config/token-template', '/organizations/config/token-template', { content: '{"tier": "gold"}' }),
    c('POST', '/persons', '/persons', { handles: [{ type: 'email_address', value: 'sample@example.com' }] }),
    c('PUT', '/persons', '/persons', { handles: [{ type: 'email_address', value: 'sample@example.com' }] }),
    c('GET', '/persons', '/persons'),
    c('GET', '/persons/{person_id}', `/persons/${p}`),
    c('PATCH', '/persons/{person_id}', `/persons/${p}`, { active: false }),
    c('DELETE', '/persons/{person_id}', `/persons/${p}`),
    c('POST', '/persons/{person_id}/handles', `/persons/${p}/handles`, [{ type: 'username', value: 'sample-handle' }]),
    c('GET', '/persons/{person_id}/handles', `/persons/${p}/handles`),
    c('GET', '/persons/bulk-import', '/persons/bulk-import'),
    { ...c('POST', '/persons/bulk-import', '/persons/bulk-import'), ...BULK_IMPORT },
    c('GET', '/persons/{person_id}/organizations', `/persons/${p}/organizations`),
    c('POST', '/persons/{person_id}/direct-id', `/persons/${p}/direct-id`, { duration_secs: 60 }),
    c('GET', '/organizations/quota/usage', '/organizations/quota/usage'),
    c('DELETE', '/persons/{person_id}/handles/{handle}', `/persons/${p}/handles/${encodeURIComponent('username:sample-handle')}`),
    c('POST', '/groups', '/groups', { name: 'sample-group' }),
    c('GET', '/groups', '/groups'),
    c('GET', '/groups/{group_name}', `/groups/${g}`),
    c('DELETE', '/groups/{group_name}', `/groups/${g}`),
    c('GET', '/groups/{group_name}/persons', `/groups/${g}/persons`),
    c('GET', '/persons/{person_id}/groups', `/persons/${p}/groups`),
    c('PUT', '/persons/{person_id}/groups', `/persons/${p}/groups`, { groups: [t.group] }),
    c('GET', '/organizations/attribute-buckets', '/organizations/attribute-buckets'),
    c('PUT', '/organizations/attributes/{bucket_name}', `/organizations/attributes/${b}`, { sample: 1 }),
    c('PATCH', '/organizations/attributes/{bucket_name}', `/organizations/attributes/${b}`, { sample: 2 }),
    c('GET', '/organizations/attributes/{bucket_name}', `/organizations/attributes/${b}`),
    c('DELETE', '/organizations/attributes/{bucket_name}', `/organizations/attributes/${b}`),
    c('PUT', '/persons/{person_id}/attributes/{bucket_name}', `/persons/${p}/attributes/${b}`, { sample: 1 }),
    c('PATCH', '/persons/{person_id}/attributes/{bucket_name}', `/persons/${p}/attributes/${b}`, { sample: 2 }),
    c('GET', '/persons/{person_id}/attributes/{bucket_name}', `/persons/${p}/attributes/${b}`),
    c('DELETE', '/persons/{person_id}/attributes/{bucket_name}', `/persons/${p}/attributes/${b}`),
    c('GET', '/persons/{person_id}/attributes', `/persons/${p}/attributes`),
    c('PUT', '/organizations/attributes', '/organizations/attributes', { [b]: { sample: 1 } }),
    c('PATCH', '/organizations/attributes', '/organizations/attributes', { [b]: { sample: 2 } }),
    c('GET', '/organizations/attributes', '/organizations/attributes'),
    c('PUT', '/persons/{person_id}/attributes', `/persons/${p}/attributes`, { [b]: { sample: 1 } }),
    c('PATCH', '/persons/{person_id}/attributes', `/persons/${p}/attributes`, { [b]: { sample: 2 } }),
    c('POST', '/persons/{person_id}/consent/gdpr', `/persons/${p}/consent/gdpr`, { consent_levels: ['analytics'] }),
    c('POST', '/groups/{group_name}/persons', `/groups/${g}/persons`, { persons: [t.person] }),
    c('DELETE', '/groups/{group_name}/persons/{person_id}', `/groups/${g}/persons/${p}`),
    c('GET', '/organizations/config/domains', '/organizations/config/domains'),
    c('POST', '/organizations/config/domains', '/organizations/config/domains', { domains: ['*.sample.example'] }),
    c('DELETE', '/organizations/config/domains', '/organizations/config/domains?deleteAll=true'),
    c('GET', '/persons/{person_id}/consent/gdpr', `/persons/${p}/consent/gdpr`),
    c('PUT', '/persons/{person_id}/consent/gdpr', `/persons/${p}/consent/gdpr`, { consent_levels: ['necessary'] }),
    c('DELETE', '/persons/{person_id}/consent/gdpr', `/persons/${p}/consent/gdpr`),
    c('POST', '/test-events', '/test-events', [{ event_name: 'PersonCreated_v1' }]),
    c('GET', '/events/checkpoint', '/events/checkpoint'),
    c('GET', '/consistency/{token}', `/consistency/${encodeURIComponent(t.consistencyToken ?? 'sample.token')}`),
    c('POST', '/gate/events', '/gate/events', [sampleGateHeartbeat()]),
    c('PUT', '/persons/{person_id}/credentials/password', `/persons/${p}/credentials/password`, { password: 'sample password' }),
    c('GET', '/persons/{person_id}/credentials', `/persons/${p}/credentials`),
    c('POST', '/persons/{person_id}/credentials', `/persons/${p}/credentials`, { type: 'password', params: { password_hash: `scrypt$15$8$1$c2FtcGxlIHNhbHQ$${'A'.repeat(43)}` } }),
    c('DELETE', '/persons/{person_id}/credentials', `/persons/${p}/credentials`),
    c('DELETE', '/persons/{person_id}/credentials/{credential_id}', `/persons/${p}/credentials/sample-credential`),
    c('GET', '/persons/{person_id}/sessions', `/persons/${p}/sessions`),
    c('DELETE', '/persons/{person_id}/sessions/{session_id}', `/persons/${p}/sessions/sample-session`),
    c('POST', '/persons/{person_id}/credentials/password-rotate', `/persons/${p}/credentials/password-rotate`),
    { ...c('POST', '/persons/{person_id}/credentials/password-reset', `/persons/${p}/credentials/password-reset`, { force_change: false }), bodyOptional: true },
    c('GET', '/organizations/config/templates', '/organizations/config/templates'),
    c('GET', '/organizations/config/templates/{template_name}', '/organizations/config/templates/email_password_reset'),
    c('PUT', '/organizations/config/templates/{template_name}', '/organizations/config/templates/email_password_reset', { subject: 'Sample subject' }),
    c('POST', '/token/revoke', '/token/revoke', { token: t.token ?? 'sample.token.value' }),
    { ...c('POST', '/persons/{person_id}/mint-token', `/persons/${p}/mint-token`, { custom_claims: { sample: 1 } }), bodyOptional: true },
    c('POST', '/organizations/webhooks', '/organizations/webhooks', { name: 'sample', target_url: 'https://hooks.example.com/sample' }),
    c('GET', '/organizations/webhooks', '/organizations/webhooks'),
    c('GET', '/organizations/webhooks/{webhook_id}', `/organizations/webhooks/${w}`),
    c('PATCH', '/organizations/webhooks/{webhook_id}', `/organizations/webhooks/${w}`, { description: 'sample' }),
    c('DELETE', '/organizations/webhooks/{webhook_id}', `/organizations/webhooks/${w}`),
    c('POST', '/organizations/webhooks/{webhook_id}/triggers', `/organizations/webhooks/${w}/triggers`, { trigger_type: 'event', trigger_name: 'PersonDeleted_v1' }),
    c('GET', '/organizations/webhooks/{webhook_id}/triggers', `/organizations/webhooks/${w}/triggers`),
    c('DELETE', '/organizations/webhooks/{webhook_id}/triggers', `/organizations/webhooks/${w}/triggers?trigger_type=event&trigger_name=PersonCreated_v1`),
    c('GET', '/organizations/webhooks/{webhook_id}/dead-letters', `/organizations/webhooks/${w}/dead-letters`),
    c('POST', '/organizations/webhooks/{webhook_id}/dead-letters/{offset}/retry', `/organizations/webhooks/${w}/dead-letters/1/retry`),
    c('DELETE', '/organizations/webhooks/{webhook_id}/dead-letters/{offset}', `/organizations/webhooks/${w}/dead-letters/1`),
    // access control
    c('POST', '/rbac/permissions', '/rbac/permissions', { name: 'sample.permission', description: 'sample' }),
    c('GET', '/rbac/permissions', '/rbac/permissions'),
    c('GET', '/rbac/permissions/{permission_name}', `/rbac/permissions/${perm}`),
    c('PATCH', '/rbac/permissions/{permission_name}', `/rbac/permissions/${perm}`, { description: 'sample' }),
    c('DELETE', '/rbac/permissions/{permission_name}', `/rbac/permissions/${perm}`),
    c('POST', '/rbac/roles', '/rbac/roles', { name: 'sample-role', description: 'sample' }),
    c('GET', '/rbac/roles', '/rbac/roles'),
    c('GET', '/rbac/roles/{role_name}', `/rbac/roles/${role}`),
    c('PATCH', '/rbac/roles/{role_name}', `/rbac/roles/${role}`, { description: 'sample' }),
    c('DELETE', '/rbac/roles/{role_name}', `/rbac/roles/${role}`),
    c('GET', '/persons/{person_id}/roles', `/persons/${p}/roles`),
    c('PUT', '/persons/{person_id}/roles', `/persons/${p}/roles`, { roles: [t.role ?? 'sample-role'] }),
    c('GET', '/persons/{person_id}/additional-permissions', `/persons/${p}/additional-permissions`),
    c('PUT', '/persons/{person_id}/additional-permissions', `/persons/${p}/additional-permissions`, { permissions: [t.permission ?? 'sample.permission'] }),
    c('GET', '/persons/{person_id}/permissions', `/persons/${p}/permissions`),
    c('POST', '/rbac/check', '/rbac/check', { person_id: t.person, permission_name: t.permission ?? 'sample.permission' }),
    c('POST', sso, sso, { client_id: 'sample-client', client_secret: 'sample secret', provider: 'google' }),
    c('GET', sso, sso),
    c('GET', `${sso}/{oauth_client_id}`, `${sso}/${cred}`),
    c('PATCH', `${sso}/{oauth_client_id}`, `${sso}/${cred}`, { label: 'sample' }),
    c('DELETE', `${sso}/{oauth_client_id}`, `${sso}/${cred}`),
    // the OAuth 2.0 authorization server's clients
    c('POST', '/oauth2/clients', '/oauth2/clients', { client_name: 'sample', scopes: ['sample.read'], grant_types: ['client_credentials'] }),
    c('GET', '/oauth2/clients', '/oauth2/clients'),
    c('GET', '/oauth2/clients/{oauth_client_id}', `/oauth2/clients/${oc}`),
    c('PATCH', '/oauth2/clients/{oauth_client_id}', `/oauth2/clients/${oc}`, { client_name: 'sample' }),
    c('DELETE', '/oauth2/clients/{oauth_client_id}', `/oauth2/clients/${oc}`),
    c('PUT', '/oauth2/clients/{oauth_client_id}/secret', `/oauth2/clients/${oc}/secret`),
    c('GET', '/oauth2/clients/{oauth_client_id}/ui-configuration', `/oauth2/clients/${oc}/ui-configuration`),
    c('PUT', '/oauth2/clients/{oauth_client_id}/ui-configuration', `/oauth2/clients/${oc}/ui-configuration`, { pageTitle: 'sample' }),
    c('POST', '/oauth2/registration-tokens', '/oauth2/registration-tokens', { description: 'sample' }),
    c('GET', '/oauth2/registration-tokens', '/oauth2/registration-tokens'),
    c('DELETE', '/oauth2/registration-tokens/{token_id}', '/oauth2/registration-tokens/00000000-0000-7000-8000-000000000000'),
    c('POST', '/oauth2/tokens/mint', '/oauth2/tokens/mint', { person_id: t.person, client_id: t.oauthClient ?? '00000000-0000-7000-8000-000000000000' }),
    // phishing detection
    c('POST', '/organizations/mitm-tokens', '/organizations/mitm-tokens', { allowed_domains: ['shop.example'], tag: 'sample' }),
    c('GET', '/organizations/mitm-tokens', '/organizations/mitm-tokens'),
    c('DELETE', '/organizations/mitm-tokens/{token}', `/organizations/mitm-tokens/${encodeURIComponent(t.mitmToken ?? 'sample-token')}`),
    c('GET', '/stats/mitm', '/stats/mitm'),
    // cloud identities: a loopback endpoint is refused by the address guard before any connection, and the sample connection does not exist
    c('POST', cloud, cloud, { name: 'sample', type: 'aws', config: { account_id: '123456789012', endpoint: 'https://127.0.0.1:9' }, credentials: { access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: 'sample' } }),
    c('GET', cloud, cloud),
    c('GET', `${cloud}/{connection_id}`, `${cloud}/${cc}`),
    c('PATCH', `${cloud}/{connection_id}`, `${cloud}/${cc}`, { name: 'sample' }),
    c('DELETE', `${cloud}/{connection_id}`, `${cloud}/${cc}`),
    { method: 'POST', route: `${cloud}/{connection_id}/snapshots`, path: `${cloud}/${cc}/snapshots`, bodyOptional: true },
    c('POST', `${cloud}/{connection_id}/aws/roles`, `${cloud}/${cc}/aws/roles`, { role_name: 'sample', assume_role_policy_doc: SAMPLE_TRUST }),
    c('PUT', `${awsRole}/inline-policies`, `${roleAt}/inline-policies`, { inline_policies: [] }),
    c('PUT', `${awsRole}/managed-policies`, `${roleAt}/managed-policies`, { attached_managed_policies: [] }),
    c('PUT', `${awsRole}/assume-role-policy`, `${roleAt}/assume-role-policy`, { assume_role_policy_doc: SAMPLE_TRUST }),
    c('PUT', `${awsRole}/permissions-boundary`, `${roleAt}/permissions-boundary`, { permissions_boundary_arn: 'arn:aws:iam::aws:policy/ReadOnlyAccess' }),
    c('DELETE', `${awsRole}/permissions-boundary`, `${roleAt}/permissions-boundary`),
    c('DELETE', awsRole, roleAt),
    c('POST', `${cloud}/{connection_id}/ad/spns`, `${cloud}/${cc}/ad/spns`, { account_name: 'sample', service_class: 'HTTP', service_name: 'sample.example.com' }),
    c('PUT', `${cloud}/{connection_id}/ad/spns/{service_class}/{service_name}/groups`, `${cloud}/${cc}/ad/spns/HTTP/sample.example.com/groups`, { groups: [] }),
    c('DELETE', `${cloud}/{connection_id}/ad/spns/{service_class}/{service_name}`, `${cloud}/${cc}/ad/spns/HTTP/sample.example.com`),
    c('POST', `${cloud}/{connection_id}/gcp/service-accounts`, `${cloud}/${cc}/gcp/service-accounts`, { account_id: 'sample-account' }),
    c('PUT', `${cloud}/{connection_id}/gcp/principals/{principal}/bindings`, `${cloud}/${cc}/gcp/principals/user:sample@example.com/bindings`, { bindings: [] }),
    c('DELETE', `${cloud}/{connection_id}/gcp/service-accounts/{email}`, `${cloud}/${cc}/gcp/service-accounts/sample-account@sample-project.iam.gserviceaccount.com`),
    c('GET', '/stats/billing', '/stats/billing'),
  ];
}

/** Routes that answer without any credentials. */
export const PUBLIC_ROUTES = ['GET /health', 'GET /metrics', 'GET /openapi.json', 'GET /.well-known/jwks.json', 'GET /.well-known/openid-configuration', 'POST /token/validate', 'GET /authenticate/oidc/callback', 'POST /authenticate/oidc/callback', 'GET /password-reset', 'POST /password-reset', 'POST /actions/sdk', 'GET /mitm/{token}.png', 'GET /sdk/service-sdk.js', 'GET /sdk/webauthn.js'];

/** End-user routes and the webhook verification keys: Service-OrgID only, no API key. */
export const END_USER_ROUTES = ['GET /organizations/webhooks/verification-jwks', 'POST /authenticate/password', 'POST /register/password', 'POST /authenticate/direct-id', 'GET /authenticate/oidc/{oauth_client_id}/start', 'POST /persons/anonymous', 'POST /authenticate/totp', 'POST /authenticate/webauthn/options', 'POST /authenticate/webauthn', ...['otp_via_email', 'email_link', 'otp_via_sms', 'sms_link'].flatMap((m) => [`POST /authenticate/${m}/start`, `POST /authenticate/${m}`])];

/** End-user routes a person calls with their own identity token (Authorization: Bearer), no organization header. */
export const PERSON_TOKEN_ROUTES = ['GET /consent/gdpr', 'PUT /consent/gdpr', 'POST /consent/gdpr', 'DELETE /consent/gdpr', 'GET /attributes/{bucket_name}', 'PUT /attributes/{bucket_name}', 'PATCH /attributes/{bucket_name}', 'DELETE /attributes/{bucket_name}'];

/** Second factors a person enrolls with their own identity token, as PERSON_TOKEN_ROUTES (test/e2e/totp.test.ts, passkeys-browser.test.ts). */
export const FACTOR_ENROLLMENT_ROUTES = ['POST /register/totp', 'POST /register/totp/confirm', 'POST /register/totp/recovery-codes', 'POST /register/webauthn/options', 'POST /register/webauthn'];

/** OAuth 2.0 endpoints that authenticate the client as RFC 6749 2.3 says: no organization header, no API key. */
export const OAUTH_CLIENT_ROUTES = ['POST /oauth2/tokens', 'POST /oauth2/tokens/introspect', 'POST /oauth2/tokens/revoke', 'POST /oauth2/tokens/revoke-all', 'POST /oauth2/par', 'POST /oauth2/device_authorization'];

/** Dynamic client registration (RFC 7591/7592): bearer initial or registration access tokens, no organization header. */
export const REGISTRATION_ROUTES = ['POST /oauth2/register', 'GET /oauth2/register/{client_id}', 'PUT /oauth2/register/{client_id}', 'DELETE /oauth2/register/{client_id}'];

/** OAuth 2.0 endpoints a person's browser or an access token reaches: the hosted sign-in and userinfo. */
export const OAUTH_PERSON_ROUTES = ['GET /oauth2/authorize', 'POST /oauth2/authorize', 'POST /oauth2/authorize/sign-in', 'POST /oauth2/authorize/second-factor', 'GET /oauth2/userinfo', 'POST /oauth2/userinfo', 'GET /oauth2/logout', 'POST /oauth2/logout', 'POST /oauth2/logout/confirm', 'GET /oauth2/device', 'POST /oauth2/device/sign-in', 'POST /oauth2/device/second-factor', 'POST /oauth2/device/confirm'];

/** A person's own sessions, with their identity token; not in PERSON_TOKEN_ROUTES, whose sweeps would sign the token out. */
export const PERSON_SESSION_ROUTES = ['GET /sessions', 'DELETE /sessions/{session_id}', 'DELETE /session'];

/** API-key routes left out of routeCases: a sweep with a valid key would delete the organization it sweeps with (organization-delete.test.ts covers them). */
export const ORGANIZATION_DELETE_ROUTES = ['DELETE /organizations'];

/** The SSO provider's tokens (API key; GET also takes the person's identity token in Service-Token): test/e2e/sso-provider-tokens.test.ts. */
export const SSO_TOKEN_ROUTES = ['GET /sso/oidc/tokens', 'POST /sso/oidc/tokens/query', 'POST /sso/oidc/tokens/revoke/v2', 'POST /sso/oidc/tokens/revoke'];

/** The console's routes (SERVICE_CONSOLE, on by default): its files, its sign-in settings and the making of administrators (test/console). */
export const CONSOLE_ROUTES = ['GET /console', 'GET /console/app.js', 'GET /console/app.css', 'GET /console/config', 'POST /console/first-administrator', 'POST /console/administrators'];

/** Operator routes (Service-Operator-Key); they answer 404 while no operator key is configured. */
export const OPERATOR_ROUTES = ['PUT /ops/regions/{region}', 'POST /ops/keys/rotate'];

export const mutating = (r: RouteCase) => r.method !== 'GET';

/** A GateHeartbeat_v1 as a Gate sends it, with a fresh event_id, for POST /gate/events. */
export function sampleGateHeartbeat(): Record<string, unknown> {
  return {
    event_metadata: {
      is_test_event: false,
      event_id: crypto.randomUUID(),
      timestamp: new Date().toISOString(),
      source: 'Gate',
      event_type: 'GateHeartbeat',
      event_name: 'GateHeartbeat_v1',
      event_version: '1',
      organization_id: '',
      root_organization_id: '',
    },
    analytics_metadata: { analytics_correlation_id: crypto.randomUUID(), client_ip_address: '' },
    sequence: '1',
  };
}
