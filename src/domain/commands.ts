// Commands: what callers ask an organization to do, imperative. decide() answers each.
import type { AttributeSet, ConsentLevel, Handle, OnFailure, WebhookTrigger } from './state.js';

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
  /** allow_insecure: the deployment's SERVICE_WEBHOOK_ALLOW_INSECURE */
  | { kind: 'CreateWebhook'; input: WebhookInput; allow_insecure: boolean }
  | { kind: 'UpdateWebhook'; webhook_id: string; input: Partial<WebhookInput>; allow_insecure: boolean }
  | { kind: 'DeleteWebhook'; webhook_id: string }
  | { kind: 'AddWebhookTrigger'; webhook_id: string; trigger: WebhookTrigger }
  | { kind: 'RemoveWebhookTrigger'; webhook_id: string; trigger: WebhookTrigger };

export type CommandKind = Command['kind'];
