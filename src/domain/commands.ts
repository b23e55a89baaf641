// Commands: what callers ask an organization to do, imperative. decide() answers each.
import type { AttributeSet, ConsentLevel, Handle, OnFailure, Person, StoredSecret, WebhookTrigger, VerificationMethod } from './state.js';
import type { SsoCredentialInput, SsoCredentialPatch } from './sso-credentials.js';
import type { TestEventInput } from './test-events.js';
import type { GateEventInput } from './gate-events.js';
import type { SdkEventInput } from './sdk-events.js';
import type { MitmDetection, MitmTokenInput } from './mitm.js';
import type { OAuthClientInput, OAuthClientPatch } from './oauth-clients.js';
import type { PersonSession, SessionEndReason } from './sessions.js';
import type { RegistrationTokenInput } from './client-registration.js';
import type { DecideDeviceCodeInput, IssueDeviceCodeInput, RedeemDeviceCodeInput } from './device-codes.js';
import type { PushRequestInput } from './pushed-requests.js';
import type { IssueCodeInput, MintGrantInput, RedeemCodeInput, RotateRefreshInput } from './oauth-grants.js';
import type { PasswordReset } from './credentials.js';
import type { MessageTemplate } from './message-templates.js';
import type { CloudConnection, CloudSnapshot } from './cloud.js';
import type { EventDraft } from './decision.js';
import type { ProofFields } from './factors.js';
import type { Passkey, UsedChallenge } from './passkeys.js';
import type { IssueOneTimeCode } from './one-time-codes.js';

export interface PersonInput {
  handles: Handle[];
  region?: string;
  groups?: string[];
  /** roles that exist; the person's whole set (PUT: replaces it when given) */
  roles?: string[];
  attributes?: Record<string, AttributeSet>;
  active?: boolean;
}

/** A bulk-import row: the CSV line it came from and the person it asks for. */
export interface ImportRow {
  line: number;
  input: PersonInput;
}

export interface WebhookInput {
  name: string;
  target_url: string;
  description?: string;
  custom_headers?: Record<string, string[]>;
  timeout?: string;
  on_failure?: OnFailure;
}

/** One factor of a sign-in, as hook content, events and tokens carry it. */
export interface Authentication {
  handle: Handle;
  method: string;
  /** RFC 3339 with fractional seconds */
  timestamp: string;
}

/** Facts every sign-in or registration attempt records. */
export interface Attempt {
  handle: Handle;
  method: string;
  client_ip_address: string;
  /** the browser SDK's correlation id (Service-Analytics-Correlation-ID), tying these events to the SDK's own */
  analytics_correlation_id?: string;
}

/** handle: absent when the attempt failed before one was known (an SSO sign-in refused before the ID token). */
export interface AuthenticationFailure extends Omit<Attempt, 'handle'> {
  handle?: Handle;
  failure_reason: string;
  failure_detail: string;
  /** set once the credentials were verified (the failure came later, e.g. from a hook) */
  person_id?: string;
}

/**
 * A sign-in that a token ends: recorded with it, so the token counts only if the sign-in does. Its method's
 * proof (factors.ts) is checked again and used up by the same entry.
 */
export type SignInRecord = Attempt &
  ProofFields & {
    /** present when the attempt registers the person: they are created in the same entry */
    registration?: { password_hash?: string; region: string; groups?: string[]; upgrade?: true };
    /** the factors proven before this one (a password before a TOTP code), each checked and used up likewise */
    factors?: Array<{ method: string } & ProofFields>;
  };

/** Whose sign-in an entry records, and how they signed in: a token's record, or a sign-in recorded alone. */
export interface SignInSubject {
  person_id: string;
  /** the sign-in's steps, as AuthenticationSucceeded (and TokenMinted) carry them */
  authentications: AuthenticationDetails[];
  /** the anonymous person whose token the caller held (see TokenRecord) */
  prev_anonymous_person_id?: string;
}

/** A verified sign-in recorded without a token: the hosted page of the OAuth authorization endpoint. */
export interface SignInEntry extends SignInSubject {
  sign_in: SignInRecord;
}

/** The seed's AuthenticationDetails, as the TokenMinted event carries it. */
export interface AuthenticationDetails {
  /** RFC 3339 with nanoseconds */
  timestamp: string;
  /** password, oidc, ... */
  method: string;
  /** handle type as the event enum names it (EmailAddress, PhoneNumber, Username) */
  handle?: { type: string; value: string };
}

/**
 * An identity token already signed, to be recorded: the person's last token moves to it and TokenMinted (or
 * AnonymousTokenMinted) is emitted; for a sign-in, AuthenticationSucceeded too.
 */
export interface TokenRecord {
  person_id: string;
  /** the token's jti */
  token_id: string;
  /** true for POST /persons/{id}/mint-token, false for a sign-in */
  mint_token_api: boolean;
  first_token: boolean;
  /** RFC 3339 with nanoseconds */
  issued_at: string;
  expires_at: string;
  /** empty for the mint-token API */
  authentications: AuthenticationDetails[];
  /**
   * the anonymous person whose token the caller held: a registration upgrades it (registration.upgrade), a
   * sign-in to another person deletes it; the token and its TokenMinted name it
   */
  prev_anonymous_person_id?: string;
  /** the token is a new anonymous person's first: the entry creates the person (POST /persons/anonymous) */
  anonymous?: { person: Person; analytics_metadata: { analytics_correlation_id: string; client_ip_address: string } };
  /** present when the token ends a sign-in: a person gone or inactive meanwhile is then a 401, not a 400 */
  sign_in?: SignInRecord;
}

export type Command =
  | { kind: 'CreateSuborganization'; sub_org_name: string }
  | { kind: 'RotateApiKey' }
  /** the parent's side of a deletion: the suborganization leaves its list */
  | { kind: 'DeleteSuborganization'; id: string; orgs: string[] }
  /** verified_by: who vouched for the handles; the organization's API key when absent */
  | { kind: 'CreatePerson'; input: PersonInput; verified_by?: VerificationMethod }
  | { kind: 'PutPerson'; input: PersonInput }
  | { kind: 'SetPersonActive'; person_id: string; active: boolean }
  | { kind: 'DeletePerson'; person_id: string }
  /** handles the person holds already are left alone; one held by another person is a conflict */
  | { kind: 'AddPersonHandles'; person_id: string; handles: Handle[] }
  | { kind: 'RemovePersonHandle'; person_id: string; handle: Handle }
  | { kind: 'CreateGroup'; name: string; description?: string }
  | { kind: 'DeleteGroup'; name: string }
  | { kind: 'SetPersonGroups'; person_id: string; groups: string[] }
  | { kind: 'SetAttributes'; person_id?: string; bucket: string; attributes: AttributeSet; replace: boolean }
  | { kind: 'DeleteAttributes'; person_id?: string; bucket: string; names?: string[] }
  /** several buckets in one entry: bucket name → set; replace: each named bucket becomes exactly its set */
  | { kind: 'SetAttributeBuckets'; person_id?: string; buckets: Record<string, AttributeSet>; replace: boolean }
  /** levels: the whole new set; [] clears it */
  | { kind: 'SetGdprConsents'; person_id: string; levels: ConsentLevel[] }
  /** levels join the person's set; those held already keep their created_at */
  | { kind: 'AddGdprConsents'; person_id: string; levels: ConsentLevel[] }
  /** every person must exist; those in the group already are left alone */
  | { kind: 'AddGroupPersons'; name: string; person_ids: string[] }
  | { kind: 'RemoveGroupPerson'; name: string; person_id: string }
  /** overwrite: the list becomes exactly `domains`; otherwise they are appended, those present already ignored */
  | { kind: 'AddAllowedDomains'; domains: string[]; overwrite: boolean }
  /** domain absent: every domain */
  | { kind: 'RemoveAllowedDomains'; domain?: string }
  /** appends events to the organization's log and changes nothing else */
  | { kind: 'EmitTestEvents'; events: TestEventInput[] }
  /** appends events a Gate built (its own event_id and timestamp) to the organization's log */
  | { kind: 'EmitGateEvents'; events: GateEventInput[] }
  /** an event the browser SDK reported (POST /actions/sdk): appended to the log, nothing else changes */
  | { kind: 'RecordSdkEvent'; event: SdkEventInput }
  | { kind: 'CreateMitmToken'; input: MitmTokenInput }
  | { kind: 'DeleteMitmToken'; token: string }
  /** a view of a token's image from a host outside its allowed domains (GET /mitm/{token}.png) */
  | { kind: 'RecordMitmDetection'; detection: MitmDetection }
  /** deletes the anonymous persons whose lifetime is over at `now_ms` (the service's clock) */
  | { kind: 'ExpireAnonymousPersons'; now_ms: number }
  /** allow_insecure: the deployment's SERVICE_WEBHOOK_ALLOW_INSECURE */
  | { kind: 'CreateWebhook'; input: WebhookInput; allow_insecure: boolean }
  | { kind: 'UpdateWebhook'; webhook_id: string; input: Partial<WebhookInput>; allow_insecure: boolean }
  | { kind: 'DeleteWebhook'; webhook_id: string }
  | { kind: 'AddWebhookTrigger'; webhook_id: string; trigger: WebhookTrigger }
  | { kind: 'RemoveWebhookTrigger'; webhook_id: string; trigger: WebhookTrigger }
  | { kind: 'SetPassword'; person_id: string; password_hash: string }
  /** POST /persons/{id}/credentials: a password given as its hash (auth/password-hash.ts's form) */
  | { kind: 'AddPasswordCredential'; person_id: string; password_hash: string }
  /** credential_id absent: every credential of the person */
  | { kind: 'RemoveCredentials'; person_id: string; credential_id?: string }
  /** a TOTP secret, sealed at the edge; replies the new credential's ID */
  | { kind: 'EnrollTotp'; person_id: string; secret: StoredSecret }
  /** the first code's time step, checked at the edge; replies the recovery codes */
  | { kind: 'ConfirmTotp'; person_id: string; credential_id: string; step: number }
  | { kind: 'RegenerateRecoveryCodes'; person_id: string }
  /** a passkey whose registration ceremony the edge verified, with that ceremony's challenge */
  | { kind: 'AddPasskey'; person_id: string; passkey: Omit<Passkey, 'id' | 'created'>; challenge: UsedChallenge }
  /** a password-reset link, its seal already checked, with the new password's hash */
  | { kind: 'CompletePasswordReset'; reset: PasswordReset; password_hash: string }
  /** the whole template after the PUT, its Mustache checked by mail/templates.ts */
  | { kind: 'SetMessageTemplate'; name: string; template: MessageTemplate }
  | { kind: 'RecordAuthenticationFailure'; failure: AuthenticationFailure }
  /** every configured region has applied the entries up to `through`: emit the plain twins they owe */
  | { kind: 'EmitOwedTwins'; through: number }
  /** records a signed token: of the mint-token API, or of a sign-in (creating the person on registration) */
  | { kind: 'RecordToken'; token: TokenRecord }
  /** records a verified sign-in that ends without a token (AuthenticationSucceeded alone) */
  | { kind: 'RecordSignIn'; entry: SignInEntry }
  /** an identity token of this organization, already verified: jti and exp are its own */
  | { kind: 'RevokeIdentityToken'; jti: string; exp: number }
  // Access control (roles and permissions)
  | { kind: 'CreatePermission'; name: string; description?: string }
  /** description absent: unchanged */
  | { kind: 'UpdatePermission'; name: string; description?: string }
  | { kind: 'DeletePermission'; name: string }
  | { kind: 'CreateRole'; name: string; description?: string; permissions?: string[] }
  /** fields absent: unchanged; permissions replaces the role's whole set */
  | { kind: 'UpdateRole'; name: string; description?: string; permissions?: string[] }
  | { kind: 'DeleteRole'; name: string }
  /** roles: the whole new set; [] clears it */
  | { kind: 'SetPersonRoles'; person_id: string; roles: string[] }
  /** permissions: the whole new set; [] clears it */
  | { kind: 'SetPersonAdditionalPermissions'; person_id: string; permissions: string[] }
  /** SSO credentials arrive validated and with their secrets sealed (src/sso/credentials.ts) */
  | { kind: 'CreateSsoCredential'; credential: SsoCredentialInput }
  /** provider: the one the patch was validated for */
  | { kind: 'UpdateSsoCredential'; client_id: string; provider: string; patch: SsoCredentialPatch }
  | { kind: 'DeleteSsoCredential'; client_id: string }
  /** PATCH /organizations/config: any subset of the fields, checked by decide() */
  | { kind: 'SetOrgConfig'; patch: unknown }
  /** PUT /organizations/config/token-template: content checked against sample persons by tokens/token-template.ts; '' removes it */
  | { kind: 'SetTokenTemplate'; content: string }
  // The OAuth 2.0 authorization server
  /** allow_insecure: the deployment's SERVICE_WEBHOOK_ALLOW_INSECURE, for a jwks_uri as for a webhook's URL */
  | { kind: 'CreateOAuthClient'; input: OAuthClientInput; allow_insecure?: boolean }
  | { kind: 'UpdateOAuthClient'; client_id: string; patch: OAuthClientPatch; allow_insecure?: boolean }
  | { kind: 'DeleteOAuthClient'; client_id: string }
  | { kind: 'RotateOAuthClientSecret'; client_id: string }
  /** an access token of this organization, already verified: jti and exp are its own */
  | { kind: 'RevokeAccessToken'; jti: string; exp: number }
  // OAuth authorization codes and grants (oauth-grants.ts)
  /** session: the sign-in session the code's sign-in opens (sessions.ts) */
  | { kind: 'IssueOAuthCode'; code: IssueCodeInput; session?: PersonSession }
  | { kind: 'RedeemOAuthCode'; input: RedeemCodeInput }
  | { kind: 'RotateOAuthRefresh'; input: RotateRefreshInput }
  | { kind: 'RevokeOAuthGrant'; grant_id: string }
  // Sign-in sessions (sessions.ts)
  | { kind: 'EndSession'; person_id: string; session_id: string; reason: SessionEndReason }
  /** an SSO sign-in's session, with the identity token it handed out */
  | { kind: 'StartSession'; session: PersonSession }
  /** the session of a token: of the grant its sid names, or the one its jti was handed out in */
  | { kind: 'EndSessionOf'; person_id: string; grant_id?: string; jti?: string }
  /** back-channel logouts delivered or given up */
  | { kind: 'CompleteBackchannelLogouts'; sids: string[] }
  // Device codes (device-codes.ts)
  | { kind: 'IssueOAuthDeviceCode'; input: IssueDeviceCodeInput }
  | { kind: 'DecideOAuthDeviceCode'; input: DecideDeviceCodeInput }
  | { kind: 'RedeemOAuthDeviceCode'; input: RedeemDeviceCodeInput }
  /** POST /oauth2/par (RFC 9126): the checked request under its reference's hash */
  | { kind: 'PushOAuthRequest'; input: PushRequestInput }
  /** the authorization endpoint's request_uri, once */
  | { kind: 'RedeemOAuthPushedRequest'; input: { request_uri_hash: string; client_id: string } }
  /** POST /persons/bulk-import: one batch of rows, each created whole or refused whole; the accepted ones share one entry */
  | { kind: 'ImportPersons'; rows: ImportRow[] }
  /** POST /persons/{id}/direct-id: a fresh one-time sign-in value, replied once; only its hash is stored */
  | { kind: 'IssueDirectId'; person_id: string; duration_secs: number }
  | ({ kind: 'IssueOneTimeCode' } & IssueOneTimeCode)
  /** POST /oauth2/tokens/mint: a grant for a person, begun by the organization rather than by a sign-in */
  | { kind: 'MintOAuthGrant'; input: MintGrantInput }
  /** POST /oauth2/tokens/revoke-all: the client's grants of the person begun at or before until_ms */
  | { kind: 'RevokeOAuthGrants'; client_id: string; person_id: string; until_ms: number }
  /** ui: the hosted UI's configuration, replaced whole */
  | { kind: 'SetOAuthClientUiConfiguration'; client_id: string; ui: Record<string, unknown> }
  /** RFC 7591: initial access tokens, and a client registered with one (its SHA-256) */
  | { kind: 'IssueOAuthRegistrationToken'; input: RegistrationTokenInput }
  | { kind: 'RevokeOAuthRegistrationToken'; id: string }
  | { kind: 'RegisterOAuthClient'; input: OAuthClientInput; initial_token_hash: string; allow_insecure?: boolean }
  // Cloud identities (cloud.ts): the connection tested and its credentials sealed by src/cloud/
  | { kind: 'CreateCloudConnection'; connection: Omit<CloudConnection, 'created'> }
  /** the whole connection after a PATCH */
  | { kind: 'UpdateCloudConnection'; connection: CloudConnection }
  | { kind: 'DeleteCloudConnection'; connection_id: string }
  /** a change the provider confirmed, with its answer in the event */
  | { kind: 'RecordCloudChange'; connection_id: string; event: EventDraft }
  | { kind: 'RecordCloudSnapshot'; snapshot: CloudSnapshot }
  /** the hourly BillableProtectedIdentitiesCounted_v1; computed_at: RFC 3339 truncated to microseconds */
  | { kind: 'CountBillableIdentities'; now_ms: number; computed_at: string };

export type CommandKind = Command['kind'];
