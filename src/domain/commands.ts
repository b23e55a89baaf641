// Commands: what callers ask an organization to do, imperative. decide() answers each.
import type { AttributeSet, ConsentLevel, Handle, OnFailure, WebhookTrigger } from './state.js';
import type { TestEventInput } from './test-events.js';

export interface PersonInput {
  handles: Handle[];
  region?: string;
  groups?: string[];
  attributes?: Record<string, AttributeSet>;
  active?: boolean;
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
}

export interface AuthenticationFailure extends Attempt {
  failure_reason: string;
  failure_detail: string;
  /** set once the credentials were verified (the failure came later, e.g. from a hook) */
  person_id?: string;
}

export interface SignIn extends Attempt {
  person_id: string;
  token: { jti: string; iat: number; exp: number };
  first_token: boolean;
  authentications: Authentication[];
  /** present when the attempt registers the person: it is created in the same entry */
  registration?: { password_hash: string; region: string };
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

/** An identity token already signed, to be recorded: the person's last token moves to it and TokenMinted is emitted. */
export interface TokenRecord {
  person_id: string;
  /** the token's jti */
  token_id: string;
  /** true for POST /persons/{id}/mint-token, false for sign-in */
  mint_token_api: boolean;
  first_token: boolean;
  /** RFC 3339 with nanoseconds */
  issued_at: string;
  expires_at: string;
  /** empty for the mint-token API */
  authentications: AuthenticationDetails[];
  prev_anonymous_person_id?: string;
}

export type Command =
  | { kind: 'CreateSuborganization'; sub_org_name: string }
  | { kind: 'RotateApiKey' }
  | { kind: 'CreatePerson'; input: PersonInput }
  | { kind: 'PutPerson'; input: PersonInput }
  | { kind: 'SetPersonActive'; person_id: string; active: boolean }
  | { kind: 'DeletePerson'; person_id: string }
  | { kind: 'CreateGroup'; name: string; description?: string }
  | { kind: 'DeleteGroup'; name: string }
  | { kind: 'SetPersonGroups'; person_id: string; groups: string[] }
  | { kind: 'SetAttributes'; person_id?: string; bucket: string; attributes: AttributeSet; replace: boolean }
  | { kind: 'DeleteAttributes'; person_id?: string; bucket: string; names?: string[] }
  /** levels: the whole new set; [] clears it */
  | { kind: 'SetGdprConsents'; person_id: string; levels: ConsentLevel[] }
  /** appends events to the organization's log and changes nothing else */
  | { kind: 'EmitTestEvents'; events: TestEventInput[] }
  /** allow_insecure: the deployment's SERVICE_WEBHOOK_ALLOW_INSECURE */
  | { kind: 'CreateWebhook'; input: WebhookInput; allow_insecure: boolean }
  | { kind: 'UpdateWebhook'; webhook_id: string; input: Partial<WebhookInput>; allow_insecure: boolean }
  | { kind: 'DeleteWebhook'; webhook_id: string }
  | { kind: 'AddWebhookTrigger'; webhook_id: string; trigger: WebhookTrigger }
  | { kind: 'RemoveWebhookTrigger'; webhook_id: string; trigger: WebhookTrigger }
  | { kind: 'SetPassword'; person_id: string; password_hash: string }
  | { kind: 'RecordAuthenticationFailure'; failure: AuthenticationFailure }
  /** records the token of a successful sign-in (and creates the person on registration) */
  | { kind: 'CompleteSignIn'; sign_in: SignIn }
  /** every configured region has applied the entries up to `through`: emit the plain twins they owe */
  | { kind: 'EmitOwedTwins'; through: number }
  | { kind: 'RecordToken'; token: TokenRecord }
  /** PATCH /organizations/config: any subset of the fields, checked by decide() */
  | { kind: 'SetOrgConfig'; patch: unknown };

export type CommandKind = Command['kind'];
