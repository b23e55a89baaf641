// Turns an event as decided into the full event: event_metadata first, then the body.
import { randomUUID } from 'node:crypto';
import { eventByMessageName } from './catalog.js';
import { eventMetadata, rfc3339Nanos } from './metadata.js';

export interface EventOrigin {
  organization_id: string;
  root_organization_id: string;
}

export type EventStamper = (origin: EventOrigin, name: string, body: Record<string, unknown>, nowNs: bigint) => Record<string, unknown>;

/** Events the service emits itself come from the Cloud source, whatever else may also emit that type. */
export function stampEvent(origin: EventOrigin, name: string, body: Record<string, unknown>, nowNs: bigint): Record<string, unknown> {
  const def = eventByMessageName(name);
  if (!def) throw new Error(`event ${name} is not in the catalog`);
  const metadata = eventMetadata({
    type: def.type,
    version: def.version,
    source: 'Cloud',
    organization_id: origin.organization_id,
    root_organization_id: origin.root_organization_id,
    is_test_event: false,
    event_id: randomUUID(),
    timestamp: rfc3339Nanos(nowNs),
  });
  return { event_metadata: metadata, ...body };
}
