// Decisions about generated test events: they change no state and are only appended to the event log.
import { decision, type Decision, type EventDraft } from './decision.js';

export interface TestEventInput {
  /** message name, e.g. PersonCreated_v1 */
  name: string;
  /** the event's fields besides event_metadata, already generated and well-typed */
  body: Record<string, unknown>;
  /** copies with the same event_id share it */
  event_id: string;
}

export function emitTestEvents(events: readonly TestEventInput[]): Decision<null> {
  const drafts: EventDraft[] = events.map((e) => ({ name: e.name, body: e.body, test: { event_id: e.event_id } }));
  return decision(null, [], drafts);
}
