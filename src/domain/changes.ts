// Changes: the facts a WAL entry records, past tense. apply() is the only code that turns them into state.
import type { OrgConfig } from './org-config.js';
import type { AttributeSet, DirectId, GdprConsent, Handle, HandleVerification, MitmToken, OAuthClient, OrgGenesis, OwedTwin, Permission, Person, RegistrationToken, Role, SsoCredential, Webhook, WebhookSettings, WebhookTrigger } from './state.js';
import type { TotpCredential } from './totp.js';
import type { PersonWebauthn } from './passkeys.js';
import type { OAuthCode, OAuthGrant, SignInFacts } from './oauth-grants.js';
import type { OAuthDeviceCode } from './device-codes.js';
import type { OAuthPushedRequest } from './pushed-requests.js';
import type { LogoutNotice, PersonSession, SessionEndReason } from './sessions.js';
import type { MessageTemplate } from './message-templates.js';
import type { BillingRow, CloudConnection, CloudSnapshot } from './cloud.js';

export type Change =
  | { t: 'OrgCreated'; genesis: OrgGenesis }
  | { t: 'ApiKeyRotated'; api_key_hash: string }
  | { t: 'SuborganizationCreated'; id: string }
  /** `orgs`: the suborganization and every one below it, all deleted (what a replica region has to remove too) */
  | { t: 'SuborganizationDeleted'; id: string; orgs: string[] }
  | { t: 'PersonCreated'; person: Person }
  | { t: 'PersonActiveSet'; person_id: string; active: boolean }
  /** verified: how the handles were verified, null when not; absent in entries written before verifications were kept */
  | { t: 'PersonHandlesAdded'; person_id: string; handles: Handle[]; verified?: HandleVerification | null }
  /** a handle the person holds was shown to be theirs (a password-reset link sent to it was used) */
  | { t: 'PersonHandleVerified'; person_id: string; handle: Handle; verified: HandleVerification }
  | { t: 'PersonHandleRemoved'; person_id: string; handle: Handle }
  | { t: 'PersonDeleted'; person_id: string }
  | { t: 'MitmTokenCreated'; token: MitmToken }
  | { t: 'MitmTokenDeleted'; token: string }
  /** an anonymous person registered: it becomes regular, holds these handles and no longer expires */
  | { t: 'AnonymousPersonUpgraded'; person_id: string; handles: Handle[]; verified?: HandleVerification | null }
  | { t: 'GroupCreated'; name: string; description: string; created: string }
  | { t: 'GroupDeleted'; name: string }
  | { t: 'PersonGroupsSet'; person_id: string; groups: string[] }
  /** person_id absent: organization-level. replace: the set becomes exactly `attributes`. */
  | { t: 'AttributesSet'; person_id?: string; bucket: string; attributes: AttributeSet; replace: boolean }
  /** names absent: every attribute of the bucket. */
  | { t: 'AttributesDeleted'; person_id?: string; bucket: string; names?: string[] }
  | { t: 'GdprConsentsSet'; person_id: string; consents: GdprConsent[] }
  /** credential_id: absent in entries written before credentials had IDs */
  | { t: 'PersonPasswordSet'; person_id: string; password_hash: string; credential_id?: string }
  | { t: 'PersonPasswordRemoved'; person_id: string }
  /** the whole TOTP credential as it is now (its secret sealed) */
  | { t: 'PersonTotpSet'; person_id: string; totp: TotpCredential }
  | { t: 'PersonTotpRemoved'; person_id: string }
  /** the person's whole WebAuthn record as it is now */
  | { t: 'PersonWebauthnSet'; person_id: string; webauthn: PersonWebauthn }
  /** a password-reset link was used; now: seconds at the decision, used links expired by then are dropped */
  | { t: 'PasswordResetUsed'; reset_id: string; exp: number; now: number }
  | { t: 'MessageTemplateSet'; name: string; template: MessageTemplate }
  /** an identity token was issued; its jti becomes the next token's prev_token_id */
  | { t: 'PersonTokenMinted'; person_id: string; token_id: string }
  /** an identity token revoked before it expires; now: seconds at the decision, revocations expired by then are dropped */
  | { t: 'IdentityTokenRevoked'; jti: string; exp: number; now: number }
  | { t: 'WebhookCreated'; webhook: Webhook }
  | { t: 'WebhookUpdated'; id: string; settings: WebhookSettings }
  /** removes the webhook with its triggers */
  | { t: 'WebhookDeleted'; id: string }
  /** from_event: for event triggers, the organization's next event offset when the trigger was attached */
  | { t: 'WebhookTriggerAdded'; id: string; trigger: WebhookTrigger; from_event?: number }
  | { t: 'WebhookTriggerRemoved'; id: string; trigger: WebhookTrigger }
  /** a regional event's _InRegion form was emitted by this entry (twin.offset); its plain form is owed */
  | { t: 'TwinOwed'; twin: OwedTwin }
  /** the owed twins of every entry up to `through` were emitted by this entry */
  | { t: 'TwinsEmitted'; through: number }
  // Access control (roles and permissions)
  | { t: 'PermissionCreated'; permission: Permission }
  | { t: 'PermissionUpdated'; name: string; description: string }
  /** no role includes it and no person holds it by then: the same entry revoked it first */
  | { t: 'PermissionDeleted'; name: string }
  | { t: 'RoleCreated'; role: Role }
  | { t: 'RoleUpdated'; name: string; description: string; permissions: string[] }
  /** no person holds it by then: the same entry revoked it first */
  | { t: 'RoleDeleted'; name: string }
  /** roles: sorted, the person's whole set */
  | { t: 'PersonRolesSet'; person_id: string; roles: string[] }
  /** permissions: sorted, the person's whole set of additional permissions */
  | { t: 'PersonAdditionalPermissionsSet'; person_id: string; permissions: string[] }
  /** secrets in their stored (sealed) form */
  | { t: 'SsoCredentialCreated'; credential: SsoCredential }
  /** the whole credential after the change */
  | { t: 'SsoCredentialUpdated'; credential: SsoCredential }
  | { t: 'SsoCredentialDeleted'; client_id: string }
  /** the organization's whole configuration after a PATCH */
  | { t: 'OrgConfigSet'; config: OrgConfig }
  /** the organization's token template; '' when removed */
  | { t: 'TokenTemplateSet'; content: string }
  /** the organization's whole list of allowed origin domains after the change */
  | { t: 'AllowedDomainsSet'; domains: string[] }
  // The OAuth 2.0 authorization server
  | { t: 'OAuthClientCreated'; client: OAuthClient }
  /** the whole client after the change (its secret hash unchanged) */
  | { t: 'OAuthClientUpdated'; client: OAuthClient }
  | { t: 'OAuthClientSecretSet'; client_id: string; secret_hash: string }
  | { t: 'OAuthClientDeleted'; client_id: string }
  /** the organization's initial access tokens after an issue or a revocation, whole */
  | { t: 'OAuthRegistrationTokensSet'; tokens: RegistrationToken[] }
  /** now: seconds at the decision; revocations whose tokens expired by then are dropped */
  | { t: 'AccessTokenRevoked'; jti: string; exp: number; now: number }
  // OAuth authorization codes and grants (oauth-grants.ts)
  | { t: 'OAuthCodeIssued'; code: OAuthCode }
  /** the code is used; the grant it started begins */
  | { t: 'OAuthCodeRedeemed'; code_hash: string; grant: OAuthGrant }
  | { t: 'OAuthRefreshRotated'; grant_id: string; refresh_hash: string; rotated: string[]; expires_at_ms: number }
  | { t: 'OAuthGrantRevoked'; grant_id: string }
  /** a grant begun without a code: POST /oauth2/tokens/mint */
  | { t: 'OAuthGrantStarted'; grant: OAuthGrant }
  /** codes and grants past their time */
  | { t: 'OAuthPruned'; code_hashes: string[]; grant_ids: string[] }
  // Sign-in sessions (sessions.ts)
  | { t: 'SessionStarted'; session: PersonSession }
  /** a grant of the session began or rotated: its client received tokens at at_ms; the session lasts at least to expires_at_ms */
  | { t: 'SessionUsed'; session_id: string; client_id: string; at_ms: number; expires_at_ms: number }
  /** the session is over; its grants were revoked by the same entry; logouts: the listening clients' shares, owed from now */
  | { t: 'SessionEnded'; session_id: string; reason: SessionEndReason; logouts: LogoutNotice[] }
  /** sessions past their time */
  | { t: 'SessionsExpired'; session_ids: string[] }
  /** back-channel logouts delivered or given up, by sid */
  | { t: 'BackchannelLogoutsDone'; sids: string[] }
  // Device codes (device-codes.ts)
  | { t: 'OAuthDeviceCodeIssued'; code: OAuthDeviceCode }
  | { t: 'OAuthDeviceCodeDecided'; device_code_hash: string; approved?: SignInFacts; denied?: true }
  | { t: 'OAuthDeviceCodeRedeemed'; device_code_hash: string; grant: OAuthGrant }
  | { t: 'OAuthDeviceCodesPruned'; device_code_hashes: string[] }
  // Pushed authorization requests (pushed-requests.ts)
  /** a request pushed; `expired`: hashes of pushed requests past their time, dropped */
  | { t: 'OAuthRequestPushed'; request: OAuthPushedRequest; expired: string[] }
  /** a pushed request's reference was used (or found expired): it is never found again */
  | { t: 'OAuthPushedRequestRedeemed'; request_uri_hash: string }
  /** a direct-id sign-in value was issued (its hash only); `expired`: hashes of values past their time, dropped */
  | { t: 'DirectIdIssued'; hash: string; direct_id: DirectId; expired: string[] }
  /** a direct-id sign-in value was used: it never signs in again */
  | { t: 'DirectIdRedeemed'; hash: string }
  // Cloud identities (cloud.ts)
  /** a connection created or changed: the whole connection, credentials sealed */
  | { t: 'CloudConnectionSet'; connection: CloudConnection }
  | { t: 'CloudConnectionDeleted'; connection_id: string }
  /** an inventory; summaries from before the previous UTC month of its time are dropped */
  | { t: 'CloudSnapshotRecorded'; snapshot: CloudSnapshot }
  /** a billing count published; rows of windows before the previous UTC month of now_ms are dropped */
  | { t: 'BillingCounted'; row: BillingRow; now_ms: number };

export type ChangeType = Change['t'];
