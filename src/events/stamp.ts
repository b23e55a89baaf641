// Turns an event as decided into the full event: event_metadata first, then the body.
import { randomUUID } from 'node:crypto';
import { rfc3339Nanos } from '../lib/clock.js';

export interface EventOrigin {
  organization_id: string;
  root_organization_id: string;
}

export type EventStamper = (origin: EventOrigin, name: string, body: Record<string, unknown>, nowNs: bigint) => Record<string, unknown>;


export function stampEvent(origin: EventOrigin, name: string, body: Record<string, unknown>, nowNs: bigint): Record<string, unknown> {
  const cut = name.lastIndexOf('_v');
  const type = name.slice(0, cut);
  const version = name.slice(cut + 2);
  return {
    event_metadata: {
      is_test_event: false,
      event_id: randomUUID(),
      timestamp: rfc3339Nanos(nowNs),
      source: 'Cloud',
      event_type: type,
      event_name: name,
      event_version: version,
      organization_id: origin.organization_id,
      root_organization_id: origin.root_organization_id,
    },
    ...body,
  };
}
