// Turns an event as decided into the full event: event_metadata first, then the body.
import type { EventDraft } from '../domain/decision.js';
import type { IdSource } from '../lib/ids.js';
import { eventByMessageName, eventSource } from './catalog.js';
import { rfc3339Nanos } from '../lib/time-text.js';
import { int64AsDecimal } from './int64-json.js';
import { eventMetadata } from './metadata.js';

export interface EventOrigin {
  organization_id: string;
  root_organization_id: string;
}

export type EventStamper = (origin: EventOrigin, draft: EventDraft, nowNs: bigint) => Record<string, unknown>;

/** Where fresh event ids come from: the service's id source, so they are UUIDv7 like every other id. */
export type EventIds = Pick<IdSource, 'uuid'>;

/** The full event: event_metadata with a fresh event_id (a test event keeps its own) and the time, then the body. */
export function stampEvent(origin: EventOrigin, draft: EventDraft, nowNs: bigint, ids: EventIds): Record<string, unknown> {
  return stamp(origin, draft, rfc3339Nanos(nowNs), ids);
}

/**
 * stampEvent, formatting each distinct time once: the events of one batch share the batch's time, so
 * only the first of them pays for the text.
 */
export function createEventStamper(ids: EventIds): EventStamper {
  let lastNs: bigint | undefined;
  let lastText = '';
  return (origin, draft, nowNs) => {
    if (nowNs !== lastNs) {
      lastText = rfc3339Nanos(nowNs);
      lastNs = nowNs;
    }
    return stamp(origin, draft, lastText, ids);
  };
}

/**
 * Events the service emits itself come from the Cloud source, whatever else may also emit that type.
 * Test events come from the type's own first emitter (an SDK event from SDK), so that they look like the real ones;
 * the SDK's own reports say so in their draft. Events a Gate built keep their own id, time and source.
 */
function stamp(origin: EventOrigin, draft: EventDraft, timestamp: string, ids: EventIds): Record<string, unknown> {
  const def = eventByMessageName(draft.name);
  if (!def) throw new Error(`event ${draft.name} is not in the catalog`);
  const metadata = eventMetadata({
    type: def.type,
    version: def.version,
    source: draft.external?.source ?? draft.source ?? (draft.test ? eventSource(def) : 'Cloud'),
    organization_id: origin.organization_id,
    root_organization_id: origin.root_organization_id,
    is_test_event: draft.test !== undefined,
    event_id: draft.external?.event_id ?? draft.test?.event_id ?? ids.uuid(),
    timestamp: draft.external?.timestamp ?? timestamp,
  });
  // Whoever made the body (a decision, a Gate), its 64-bit integers leave as proto3 JSON has them.
  return { event_metadata: metadata, ...int64AsDecimal(draft.name, draft.body) };
}
