// Decisions about events a Gate reports: they change no state and are appended to the event log as Gate built them.
import { decision, type Decision, type EventDraft } from './decision.js';

export interface GateEventInput {
  /** GateServerStarted_v1, GateRequestHandled_v1 or GateHeartbeat_v1 */
  name: string;
  /** the event's fields besides event_metadata */
  body: Record<string, unknown>;
  event_id: string;
  /** RFC 3339, when Gate built the event */
  timestamp: string;
}

export function emitGateEvents(events: readonly GateEventInput[]): Decision<null> {
  const drafts: EventDraft[] = events.map((e) => ({ name: e.name, body: e.body, external: { event_id: e.event_id, timestamp: e.timestamp, source: 'Gate' } }));
  return decision(null, [], drafts);
}
