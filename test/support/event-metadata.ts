// Event metadata for fixtures: fixed ids, organizations and time, so that a test names only what it varies.
import { eventMetadata, type EventMetadataInput, type EventMetadataJson } from '../../src/events/metadata.js';

export function sampleMetadata(fields: Pick<EventMetadataInput, 'type'> & Partial<EventMetadataInput>): EventMetadataJson {
  return eventMetadata({
    version: 1,
    source: 'Cloud',
    organization_id: 'org-1',
    root_organization_id: 'org-root',
    is_test_event: true,
    event_id: '0195f3a2-0000-7000-8000-000000000001',
    timestamp: '2026-11-23T17:00:00.123456789Z',
    ...fields,
  });
}
