// Commands: what callers ask an organization to do, imperative. decide() answers each.
import type { AttributeSet, ConsentLevel, Handle } from './state.js';
import type { TestEventInput } from './test-events.js';

export interface PersonInput {
  handles: Handle[];
  region?: string;
  groups?: string[];
  attributes?: Record<string, AttributeSet>;
  active?: boolean;
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
  | { kind: 'EmitTestEvents'; events: TestEventInput[] };

export type CommandKind = Command['kind'];
