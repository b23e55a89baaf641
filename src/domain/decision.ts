// What decide() receives besides state, and what it returns.
import type { Change } from './changes.js';
import type { OrgGenesis } from './state.js';

/** Effects decide() may use, passed in so that tests can fix them. */
export interface DecideContext {
  nowMs: number;
  uuid(): string;
  secret(): string;
  hashKey(key: string): string;
  /** configured regions; the first is local */
  regions: readonly string[];
  /** whether a name is an event message of the catalog (events/ owns the catalog, and domain/ imports nothing of it) */
  isEventMessageName(name: string): boolean;
}

/** An event as decide() states it; the actor adds event_metadata and the offset. */
export interface EventDraft {
  /** message name, e.g. PersonCreated_v1 */
  name: string;
  body: Record<string, unknown>;
  /** set for generated test events: event_metadata says is_test_event, and duplicates share this event_id */
  test?: { event_id: string };
  /** set for events another process built (a Gate): their event_id, timestamp and source are kept */
  external?: { event_id: string; timestamp: string; source: 'Gate' };
  /** who emitted it when not the service itself: the browser SDK's reports (event_metadata.source SDK) */
  source?: 'SDK';
  /**
   * A regional event, named and shaped in its plain form (e.g. SuborganizationCreated_v1): decide() emits its
   * _InRegion form (with the local region) now, and owes this form until every region has applied the entry.
   */
  regional?: true;
}

export interface Decision<R = unknown> {
  changes: Change[];
  events: EventDraft[];
  reply: R;
  /** a new organization whose first entry commits in the same transaction */
  spawn?: OrgGenesis;
}

export function decision<R>(reply: R, changes: Change[] = [], events: EventDraft[] = []): Decision<R> {
  return { changes, events, reply };
}
