// event_metadata construction and nanosecond RFC 3339 timestamps.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventMetadata, rfc3339Nanos } from '../../src/events/metadata.js';

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

describe('rfc3339Nanos', () => {
  it('writes all nine fraction digits in UTC', () => {
    assert.equal(rfc3339Nanos(1_795_453_200_123_456_789n), '2026-11-23T17:00:00.123456789Z');
    assert.equal(rfc3339Nanos(0n), '1970-01-01T00:00:00.000000000Z');
    assert.equal(rfc3339Nanos(1n), '1970-01-01T00:00:00.000000001Z');
  });

  it('counts instants before 1970 down from the second above', () => {
    assert.equal(rfc3339Nanos(-1n), '1969-12-31T23:59:59.999999999Z');
    assert.equal(rfc3339Nanos(-1_000_000_000n), '1969-12-31T23:59:59.000000000Z');
  });

  it('refuses instants a Timestamp cannot hold', () => {
    assert.throws(() => rfc3339Nanos(253_402_300_800_000_000_000n), RangeError);
  });
});
