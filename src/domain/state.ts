// An organization's state: plain in-memory structures, owned by its actor, rebuilt from snapshot + WAL.
import { defaultOrgConfig, type OrgConfig } from './org-config.js';
import type { OAuthCode, OAuthGrant } from './oauth-grants.js';
import type { LogoutNotice, PersonSession } from './sessions.js';
import type { OAuthDeviceCode } from './device-codes.js';
import type { OAuthPushedRequest } from './pushed-requests.js';
import type { MessageTemplate } from './message-templates.js';
import type { BillingRow, CloudConnection, CloudSnapshot } from './cloud.js';
import type { TotpCredential } from './totp.js';
import type { PersonWebauthn } from './passkeys.js';

export type HandleType = 'email_address' | 'phone_number' | 'username';
export const HANDLE_TYPES: readonly HandleType[] = ['email_address', 'phone_number', 'username'];

export interface Handle {
  type: HandleType;
  value: string;
}

export type AttributeSet = Record<string, unknown>;

/**
 * How a handle was shown to be its person's: `organization` (added with the organization's API key), `oidc`
 * (an SSO provider vouched for the address), `email_link` (a link sent to it was used), `unrecorded` (stored
 * before verifications were kept).
 */
export type VerificationMethod = 'organization' | 'oidc' | 'email_link' | 'unrecorded';

export interface HandleVerification {
  method: VerificationMethod;
  /** ISO 8601; absent for `unrecorded` */
  at?: string;
}

export interface Person {
  person_id: string;
  active: boolean;
  person_type: 'regular' | 'anonymous';
  /** an anonymous person's end of life (ms since the epoch), fixed at creation; absent for regular persons */
  anonymous_expires_ms?: number;
  region: string;
  handles: Handle[];
  /**
   * handleKey → how that handle was verified; a handle without an entry was never verified (self-registered).
   * Absent only in records written before verifications were kept (read as `unrecorded`).
   */
  verified_handles?: Record<string, HandleVerification>;
  /** sorted group names */
  groups: string[];
  /** bucket name → attribute set */
  attributes: Record<string, AttributeSet>;
  gdpr_consents: GdprConsent[];
  created: string;
  /** scrypt hash in the self-describing form of auth/password-hash.ts; absent until a password is set */
  password_hash?: string;
  /** ID of the password credential (credentials.ts); absent for passwords set before credentials had IDs */
  password_credential_id?: string;
  /** the TOTP second factor (totp.ts); absent when the person has none */
  totp?: TotpCredential;
  /** passkeys and used ceremony challenges (passkeys.ts); absent before the first registration */
  webauthn?: PersonWebauthn;
  /** jti of the person's last identity token; absent before the first */
  last_token_id?: string;
  /** identity tokens issued to the person */
  token_count?: number;
  /** sorted role names; absent (persons written before roles existed, or never given any) means none */
  roles?: string[];
  /** sorted permission names held besides those of the roles; absent means none */
  additional_permissions?: string[];
}

export const CONSENT_LEVELS = ['none', 'necessary', 'analytics', 'marketing', 'retargeting', 'tracking'] as const;
export type ConsentLevel = (typeof CONSENT_LEVELS)[number];

export interface GdprConsent {
  consent_level: ConsentLevel;
  /** RFC 3339 with nanoseconds */
  created_at: string;
}

export interface Group {
  name: string;
  description: string;
  created: string;
  members: Set<string>;
}

export type TriggerType = 'event' | 'sync_hook';

export interface WebhookTrigger {
  trigger_type: TriggerType;
  trigger_name: string;
}

/** A trigger as the webhook holds it. */
export interface AttachedTrigger extends WebhookTrigger {
  /**
   * event triggers: the first event offset the trigger covers, the organization's next event when it was
   * attached. Events before it are never delivered for it, so a new trigger starts now, not from history.
   */
  from_event?: number;
}

export type OnFailure = 'block' | 'continue';

/** What a webhook's owner sets; PATCH replaces any of these. */
export interface WebhookSettings {
  name: string;
  description: string;
  target_url: string;
  /** header name → values, sent with every call */
  custom_headers: Record<string, string[]>;
  /** duration string as given ("500ms", "2s"); "0s" means the default of the trigger type */
  timeout: string;
  on_failure: OnFailure;
}

export interface Webhook extends WebhookSettings {
  id: string;
  created: string;
  triggers: AttachedTrigger[];
}

/**
 * The plain form of a regional event, owed since its _InRegion twin was emitted: it is emitted once every
 * configured region has applied the entry.
 */
export interface OwedTwin {
  /** the WAL entry whose change the event reports */
  offset: number;
  /** message name of the plain form, e.g. SuborganizationCreated_v1 */
  name: string;
  body: Record<string, unknown>;
}

/** Access control: a named permission an organization defines, granted through roles or directly. */
export interface Permission {
  name: string;
  description: string;
  created: string;
}

/** Access control: a named set of permissions, each of which exists while the role includes it. */
export interface Role {
  name: string;
  description: string;
  created: string;
  /** sorted permission names */
  permissions: string[];
}

/**
 * A secret as organization state (and so the WAL and snapshots) holds it: sealed with AES-256-GCM under
 * SERVICE_SECRETS_KEY when one was set at the time it was written (src/sso/secrets.ts), plain otherwise.
 */
export type StoredSecret = { plain: string } | { sealed: 'aes-256-gcm'; box: string };

/** One provider's options, its defaults filled in; which fields apply depends on the provider. */
export interface SsoProviderOptions {
  authorize_scopes: string[];
  /** the ID-token claim the person's groups follow at each SSO sign-in; absent or '': groups are left alone */
  groups_claim?: string;
  /** azuread */
  tenant?: string;
  /** service */
  organization_url?: string;
  /** apple */
  team_id?: string;
  key_id?: string;
  secret_lifetime?: string;
}

/** An OIDC provider credential for SSO (the seed's "OIDC SSO credential"), keyed by client_id. */
export interface SsoCredential {
  client_id: string;
  provider: string;
  label: string;
  external_cred_id: string;
  enable_in_slashid_oidc_authz_server: boolean;
  /** the credential's own provider's options only: { [provider]: options } */
  options: Record<string, SsoProviderOptions>;
  /** never returned by any operation */
  client_secret: StoredSecret;
  /** apple: the PKCS8 P-256 key (PEM) that signs client-secret JWTs; never returned */
  private_key?: StoredSecret;
  created: string;
}

/** An OAuth 2.0 client of the organization's authorization server; its ID is unique across the deployment. */
/** A client's token-exchange policy (RFC 8693): the audiences it may obtain tokens for, from whose tokens. */
export interface TokenExchangePolicy {
  /** the audience or resource values it may ask for */
  audiences: string[];
  /** clients whose access tokens it may present as subject or actor token */
  subject_clients: string[];
  /** whether it may present identity tokens of the organization's persons */
  identity_tokens: boolean;
}

export interface OAuthClient {
  client_id: string;
  client_name: string;
  grant_types: string[];
  scopes: string[];
  public: boolean;
  redirect_uris: string[];
  /** seconds */
  access_token_duration: number;
  refresh_token_duration: number;
  /** SHA-256 (hex) of the secret; '' for a public client. Never returned. */
  secret_hash: string;
  created: string;
  /** RFC 8707 resources the client may ask client_credentials tokens for (their aud); absent on clients stored before, read as none */
  resources?: string[];
  /** RFC 8693: what the client may exchange tokens for, and whose; absent on clients stored before, read as nothing */
  token_exchange?: TokenExchangePolicy;
  /** PUT /oauth2/clients/{id}/ui-configuration: the hosted UI's theme, as the original shapes it; absent until set */
  ui_configuration?: Record<string, unknown>;
  /** OpenID RP-Initiated Logout 1.0: where the end-session endpoint may send the browser back; absent read as none */
  post_logout_redirect_uris?: string[];
  /** OpenID Back-Channel Logout 1.0: where logout tokens are POSTed; absent: the client is not told */
  backchannel_logout_uri?: string;
  /** the client requires sid in its logout tokens (they always carry it) */
  backchannel_logout_session_required?: boolean;
  /**
   * RFC 7591 2: how it authenticates at the token endpoint. Absent on clients stored before, and for a client
   * with a secret that did not name one: either secret method then, and none for a public client.
   */
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';
  /** private_key_jwt: its public keys (RFC 7517 JWK Set), or where to fetch them; never both */
  jwks?: { keys: Array<Record<string, unknown>> };
  jwks_uri?: string;
  /** RFC 9126 6: authorization requests only through the pushed request endpoint; absent (false) on clients stored before */
  require_pushed_authorization_requests?: boolean;
  /** RFC 7592: a dynamically registered client's registration access token, SHA-256 (hex); absent for one the management API created */
  registration_access_token_hash?: string;
  /** the initial access token it was registered with */
  registration_token_id?: string;
}

/** A one-time sign-in value of POST /persons/{id}/direct-id, kept only by the SHA-256 of the value. */
export interface DirectId {
  person_id: string;
  /** milliseconds since the epoch */
  expires_at_ms: number;
  /** a one-time code or link (domain/one-time-codes.ts); absent: a direct-id (and in records before them) */
  method?: 'otp_via_email' | 'email_link' | 'otp_via_sms' | 'sms_link';
  /** the SHA-256 (hex) of the ticket the asking browser holds */
  ticket?: string;
}

export interface OrgState extends OrgGenesis {
  /** direct children, in creation order */
  suborganizations: string[];
  persons: Map<string, Person>;
  /** person ids in key order (UUIDv7, so creation order) for paging */
  person_order: string[];
  /** handle key (see handleKey) → person id */
  handles: Map<string, string>;
  groups: Map<string, Group>;
  /** organization-level attributes: bucket name → attribute set */
  attributes: Map<string, AttributeSet>;
  /** webhook id → webhook, in creation order */
  webhooks: Map<string, Webhook>;
  /** plain twins not yet emitted, in entry order */
  owed_twins: OwedTwin[];
  /** access control: permission name → permission */
  permissions: Map<string, Permission>;
  /** access control: role name → role */
  roles: Map<string, Role>;
  /** OIDC provider credentials for SSO: client_id → credential, in creation order */
  sso_credentials: Map<string, SsoCredential>;
  /** OAuth 2.0 clients: client_id → client, in creation order */
  oauth_clients: Map<string, OAuthClient>;
  /** access tokens revoked before they expire: jti → exp (seconds); entries go once their token expired */
  oauth_revoked: Map<string, number>;
  /** identity tokens revoked before they expire (POST /token/revoke): jti → exp (seconds); entries go once their token expired */
  revoked_tokens: Map<string, number>;
  /** MITM detection tokens (mitm.ts): token → its allowed domains and tag, in creation order */
  mitm_tokens: Map<string, MitmToken>;
  /** OAuth authorization codes by the hash of the code (oauth-grants.ts) */
  oauth_codes: Map<string, OAuthCode>;
  /** OAuth grants (refresh-token families) by grant id */
  oauth_grants: Map<string, OAuthGrant>;
  /** sign-in sessions (sessions.ts) by session id, in the order they began */
  sessions: Map<string, PersonSession>;
  /** back-channel logouts owed (sessions.ts): sid → notice, until delivered or given up */
  backchannel_logouts: Map<string, LogoutNotice>;
  /** RFC 8628 device codes by the hash of the device code (device-codes.ts) */
  oauth_device_codes: Map<string, OAuthDeviceCode>;
  /** RFC 9126 pushed authorization requests by the hash of their request_uri (pushed-requests.ts) */
  oauth_pushed: Map<string, OAuthPushedRequest>;
  /** offset of the last WAL entry applied */
  offset: number;
  /** offset of the last event emitted */
  event_offset: number;
  /** GET/PATCH /organizations/config; replaced whole on each change, never mutated */
  config: OrgConfig;
  /** PUT /organizations/config/token-template: the Mustache template of extra identity-token claims; '' for none */
  token_template: string;
  /** direct-id sign-in values not yet redeemed: SHA-256 (hex) of the value → its person and expiry */
  direct_ids: Map<string, DirectId>;
  /** allowed origin domains (POST /organizations/config/domains): lower-case hosts or `*` patterns, in the order added */
  allowed_domains: string[];
  /** password-reset links used before they expire: reset_id → exp (seconds); entries go once their link expired */
  used_password_resets: Map<string, number>;
  /** message templates the organization wrote (message-templates.ts); the others read as their defaults */
  message_templates: Map<string, MessageTemplate>;
  /** cloud connections (cloud.ts): connection_id → connection, in creation order; credentials sealed */
  cloud_connections: Map<string, CloudConnection>;
  /** snapshot summaries since the start of the previous UTC month, in the order taken */
  cloud_snapshots: CloudSnapshot[];
  /** the latest billing count per region and window (cloud.ts billingKey), by publication order */
  billing_rows: Map<string, BillingRow>;
  /**
   * RFC 7591 initial access tokens (client-registration.ts), replaced whole on change. A plain optional field,
   * so snapshots carry it in `org` and those written before read as none.
   */
  oauth_registration_tokens?: RegistrationToken[];
}

/** An initial access token of dynamic client registration, kept only by the SHA-256 (hex) of its value. */
export interface RegistrationToken {
  id: string;
  token_hash: string;
  description?: string;
  created: string;
  /** milliseconds since the epoch; absent: until revoked */
  expires_at_ms?: number;
}

/** A MITM detection token: views of its image from hosts outside allowed_domains are detections. */
export interface MitmToken {
  token: string;
  /** exact hosts or `*.host`, lower case */
  allowed_domains: string[];
  /** names the protected site in detections */
  tag: string;
  created: string;
}

export interface OrgGenesis {
  id: string;
  org_name: string;
  parent_id: string | null;
  root_id: string;
  api_key_hash: string;
  created: string;
}

export function emptyState(g: OrgGenesis): OrgState {
  return {
    ...g,
    suborganizations: [],
    persons: new Map(),
    person_order: [],
    handles: new Map(),
    groups: new Map(),
    attributes: new Map(),
    webhooks: new Map(),
    owed_twins: [],
    permissions: new Map(),
    roles: new Map(),
    sso_credentials: new Map(),
    oauth_clients: new Map(),
    oauth_revoked: new Map(),
    revoked_tokens: new Map(),
    mitm_tokens: new Map(),
    oauth_codes: new Map(),
    oauth_grants: new Map(),
    sessions: new Map(),
    backchannel_logouts: new Map(),
    oauth_device_codes: new Map(),
    oauth_pushed: new Map(),
    offset: 0,
    event_offset: 0,
    // A suborganization starts here too: it does not inherit its parent's configuration.
    config: defaultOrgConfig(),
    token_template: '',
    direct_ids: new Map(),
    allowed_domains: [],
    used_password_resets: new Map(),
    message_templates: new Map(),
    cloud_connections: new Map(),
    cloud_snapshots: [],
    billing_rows: new Map(),
  };
}

/** Email addresses compare case-insensitively; other handle values exactly. */
export function handleKey(h: Handle): string {
  return `${h.type}:${h.type === 'email_address' ? h.value.toLowerCase() : h.value}`;
}

/** Index of the first element >= id in a sorted array. */
export function lowerBound(sorted: readonly string[], id: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as string) < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
