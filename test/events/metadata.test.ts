// event_metadata construction.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventMetadata } from '../../src/events/metadata.js';

describe('eventMetadata', () => {
  it('derives event_name and event_version from type and version, in field-number order', () => {
    const metadata = eventMetadata({
      type: 'PersonCreated',
      version: 1,
      source: 'Cloud',
      organization_id: 'org-sub',
      root_organization_id: 'org-root',
      is_test_event: true,
      event_id: '0195f3a2-0000-7000-8000-000000000001',
      timestamp: '2026-11-23T17:00:00.123456789Z',
    });
    assert.deepEqual(Object.entries(metadata), [
      ['is_test_event', true],
      ['event_id', '0195f3a2-0000-7000-8000-000000000001'],
      ['timestamp', '2026-11-23T17:00:00.123456789Z'],
      ['source', 'Cloud'],
      ['event_type', 'PersonCreated'],
      ['event_name', 'PersonCreated_v1'],
      ['event_version', '1'],
      ['organization_id', 'org-sub'],
      ['root_organization_id', 'org-root'],
    ]);
  });

  it('writes an absent organization_id as the proto3 default and refuses a version below 1', () => {
    const base = { type: 'GateHeartbeat', source: 'Gate', root_organization_id: 'r', is_test_event: false, event_id: 'e', timestamp: 't' } as const;
    assert.equal(eventMetadata({ ...base, version: 2 }).organization_id, '');
    assert.equal(eventMetadata({ ...base, version: 2 }).event_name, 'GateHeartbeat_v2');
    assert.throws(() => eventMetadata({ ...base, version: 0 }), RangeError);
  });
});
