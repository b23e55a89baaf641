// Decisions about events the browser SDK reports: appended to the log as they were enriched, with the
// person's region looked up here, where the organization's persons are.
import { badRequest } from '../errors.js';
import { decision, type Decision } from './decision.js';
import type { OrgState } from './state.js';

export interface SdkEventInput {
  /** one of the six SDK message names, e.g. PersonIdentified_v1 */
  name: string;
  /** the event's fields besides event_metadata and region, already enriched */
  body: Record<string, unknown>;
  /** the person the event names, when it names one: it must be a person of the organization */
  person_id?: string;
}

export function recordSdkEvent(state: OrgState, input: SdkEventInput): Decision<null> {
  const body = { ...input.body };
  if (input.person_id !== undefined) {
    const person = state.persons.get(input.person_id);
    if (!person) throw badRequest(`event_data.person_id: ${input.person_id} is not a person of this organization`);
    body['person_id'] = person.person_id;
    body['region'] = person.region;
  }
  return decision(null, [], [{ name: input.name, body, source: 'SDK' }]);
}
