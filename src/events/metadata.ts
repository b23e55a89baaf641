// Builds the event_metadata every event carries (its timestamp text comes from lib/time-text.ts).
import type { EventSourceName } from './common-types.js';

export interface EventMetadataInput {
  /** The event type, constant across versions, e.g. `PersonCreated`. */
  readonly type: string;
  readonly version: number;
  readonly source: EventSourceName;
  /** The seed allows some events without one; it is then written as the empty string, proto3's default. */
  readonly organization_id?: string;
  readonly root_organization_id: string;
  readonly is_test_event: boolean;
  readonly event_id: string;
  /** RFC 3339 with nanoseconds, see rfc3339Nanos in lib/time-text.ts. */
  readonly timestamp: string;
}

/** The JSON form of EventMetadata, keys in field-number order. */
export interface EventMetadataJson {
  is_test_event: boolean;
  event_id: string;
  timestamp: string;
  source: EventSourceName;
  event_type: string;
  event_name: string;
  /** uint64, so a decimal string in proto3 JSON. */
  event_version: string;
  organization_id: string;
  root_organization_id: string;
  // Lets the metadata sit inside an EventJson.
  [field: string]: string | boolean;
}

export function eventMetadata(input: EventMetadataInput): EventMetadataJson {
  if (!Number.isSafeInteger(input.version) || input.version < 1) throw new RangeError(`event version must be a positive integer: ${input.version}`);
  return {
    is_test_event: input.is_test_event,
    event_id: input.event_id,
    timestamp: input.timestamp,
    source: input.source,
    event_type: input.type,
    event_name: `${input.type}_v${input.version}`,
    event_version: String(input.version),
    organization_id: input.organization_id ?? '',
    root_organization_id: input.root_organization_id,
  };
}
