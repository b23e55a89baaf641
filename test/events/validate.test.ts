// validateEvent: what passes, and how each kind of misfit is named.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateEvent } from '../../src/events/validate.js';
import { sampleMetadata } from '../support/event-metadata.js';

const metadata = sampleMetadata({ type: 'PersonCreated', root_organization_id: 'org-1', is_test_event: false });
const person = { event_metadata: metadata, person_id: 'p-1', handles: [{ type: 'EmailAddress', value: 'a@example.com' }] };

describe('validateEvent', () => {
  it('accepts a well-formed event, with or without the fields it leaves at their defaults', () => {
    assert.equal(validateEvent('PersonCreated_v1', person), null);
    assert.equal(validateEvent('PersonCreated_v1', { ...person, region: null, gdpr_consents: [] }), null);
  });

  it('names an unknown field', () => {
    assert.equal(validateEvent('PersonCreated_v1', { ...person, nickname: 'x' }), 'PersonCreated_v1.nickname: unknown field of PersonCreated_v1');
  });

  it('names a field of the wrong type, however deep', () => {
    assert.equal(validateEvent('PersonCreated_v1', { ...person, person_id: 7 }), 'PersonCreated_v1.person_id: expected a string, got number 7');
    assert.equal(
      validateEvent('PersonCreated_v1', { ...person, handles: [{ type: 'Email', value: 'a' }] }),
      'PersonCreated_v1.handles[0].type: expected a PersonHandleType name, got "Email"',
    );
    assert.equal(validateEvent('PersonCreated_v1', { ...person, handles: {} }), 'PersonCreated_v1.handles: expected an array, got an object');
  });

  it('checks 64-bit integers, timestamps and JSON values by their proto3 JSON rules', () => {
    const meta = { ...metadata, event_name: 'GateHeartbeat_v1' };
    assert.equal(validateEvent('GateHeartbeat_v1', { event_metadata: meta, sequence: '9223372036854775807' }), null);
    assert.match(validateEvent('GateHeartbeat_v1', { event_metadata: meta, sequence: '9223372036854775808' }) ?? '', /sequence: expected an int64/);
    assert.match(validateEvent('GateHeartbeat_v1', { event_metadata: meta, sequence: 1.5 }) ?? '', /sequence: expected an int64/);
    assert.match(validateEvent('PersonCreated_v1', { ...person, event_metadata: { ...metadata, event_version: '-1' } }) ?? '', /event_version: expected a uint64/);
    const gate = { event_metadata: { ...metadata, event_name: 'GateRequestHandled_v1' } };
    assert.match(
      validateEvent('GateRequestHandled_v1', { ...gate, timing_metadata: { start: '2026-11-23' } }) ?? '',
      /timing_metadata\.start: expected an RFC 3339 timestamp/,
    );
    assert.match(
      validateEvent('GateRequestHandled_v1', { ...gate, plugins: [{ plugin_metadata: { a: [Number.NaN] } }] }) ?? '',
      /plugins\[0\]\.plugin_metadata\.a\[0\]: expected a finite number/,
    );
  });

  it('requires event_metadata naming this message, and a known event message', () => {
    assert.equal(validateEvent('PersonCreated_v1', { person_id: 'p' }), 'PersonCreated_v1.event_metadata: missing');
    assert.match(validateEvent('PersonDeleted_v1', person) ?? '', /event_name: "PersonCreated_v1" does not name this message/);
    assert.equal(validateEvent('PersonHandle', {}), 'PersonHandle: not an event message');
    assert.equal(validateEvent('PersonCreated_v1', []), 'PersonCreated_v1: expected a PersonCreated_v1 object, got an array');
  });
});
