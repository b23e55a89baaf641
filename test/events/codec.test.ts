// Binary encoding of events and stream frames: wire numbers, proto3 JSON rules, well-known types, misfits.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { createEventCodec } from '../../src/events/codec.js';
import { EventShapeError } from '../../src/events/json-to-wire.js';
import { sampleMetadata } from '../support/event-metadata.js';

const codec = createEventCodec();
// An independent reader of the same .proto, to see what is really on the wire.
const root = new protobuf.Root().loadSync(fileURLToPath(new URL('../../src/events/events.proto', import.meta.url)), { keepCase: true });
const metadata = sampleMetadata({ type: 'GateRequestHandled', source: 'Gate' });

const roundTrip = (name: string, json: Parameters<typeof codec.encodeEvent>[1]) => codec.decodeEvent(name, codec.encodeEvent(name, json));

describe('event codec', () => {
  it('writes the seed field numbers on the wire', () => {
    // person_id is #101, length-delimited: tag (101 << 3 | 2) = 810 = varint aa 06.
    assert.deepEqual([...codec.encodeEvent('PersonCreated_v1', { person_id: 'p' })], [0xaa, 0x06, 0x01, 0x70]);
    assert.deepEqual([...codec.encodeEvent('RoleDeleted_InRegion_v1', { region: 'r' })], [0xa2, 0x06, 0x01, 0x72]);
  });

  it('decodes every field without presence, defaults included, and leaves unset messages and optionals out', () => {
    assert.deepEqual(codec.decodeEvent('PasswordChanged_v1', new Uint8Array()), {
      person_id: '',
      region: '',
      initiated_by: 'PasswordChangeInitiator_UNSPECIFIED',
    });
    assert.deepEqual(roundTrip('PersonCreated_v1', { prev_person_type: '' }), {
      person_id: '', region: '', handles: [], gdpr_consents: [], prev_person_type: '',
    });
  });

  it('keeps 64-bit integers exact as decimal strings, accepting numbers too', () => {
    const event = {
      event_metadata: { ...metadata, event_version: '18446744073709551615' },
      http_request_metadata: { request_length: '9223372036854775807', response_length: '-9223372036854775808', status_code: -1 },
    };
    const back = roundTrip('GateRequestHandled_v1', event);
    assert.deepEqual(back['event_metadata'], event.event_metadata);
    assert.deepEqual(back['http_request_metadata'], { method: '', url: '', ...event.http_request_metadata });
    assert.deepEqual(roundTrip('GateHeartbeat_v1', { sequence: 42 })['sequence'], '42');
  });

  it('carries google.protobuf.Timestamp as seconds and nanos, and reads it back as canonical UTC text', () => {
    const timing = { start: '2026-11-23T18:00:00.5+01:00', end: '2026-11-23T17:00:01.000001Z', elapsed: 0.5 };
    const bytes = codec.encodeEvent('GateRequestHandled_v1', { timing_metadata: timing });
    const raw = root.lookupType('events.GateRequestHandled_v1').toObject(root.lookupType('events.GateRequestHandled_v1').decode(bytes), { longs: Number });
    assert.deepEqual(raw['timing_metadata'].start, { seconds: 1_795_453_200, nanos: 500_000_000 });
    assert.deepEqual(codec.decodeEvent('GateRequestHandled_v1', bytes)['timing_metadata'], {
      start: '2026-11-23T17:00:00.500Z', end: '2026-11-23T17:00:01.000001Z', elapsed: 0.5,
    });
  });

  it('carries JSON values as google.protobuf.Value, null and "__proto__" keys included', () => {
    const pluginMetadata = JSON.parse('{"a":[1,-2.5,null,"x",true,{"b":{}}],"__proto__":{"c":[]},"n":null}') as Record<string, never>;
    const back = roundTrip('GateRequestHandled_v1', { plugins: [{ plugin_metadata: pluginMetadata }, { plugin_metadata: null }] });
    const plugins = back['plugins'] as Record<string, unknown>[];
    assert.deepEqual(plugins[0]?.['plugin_metadata'], pluginMetadata);
    assert.equal(Object.getPrototypeOf(plugins[0]?.['plugin_metadata']), Object.prototype);
    assert.equal(plugins[1]?.['plugin_metadata'], null);
    assert.equal('plugin_metadata' in (roundTrip('GateRequestHandled_v1', { plugins: [{}] })['plugins'] as object[])[0]!, false);
  });

  it('bounds the nesting of JSON values below what protobuf readers accept', () => {
    const nested = (depth: number): Record<string, never> => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
    const plugins = [{ plugin_metadata: nested(32) }];
    assert.deepEqual((roundTrip('GateRequestHandled_v1', { plugins })['plugins'] as object[])[0], {
      plugin_index: 0, plugin_id: '', plugin_type: '', plugin_metadata: nested(32), round_trips: [],
    });
    assert.throws(() => codec.encodeEvent('GateRequestHandled_v1', { plugins: [{ plugin_metadata: nested(34) }] }), /nested too deeply/);
  });

  it('spells non-finite doubles and unknown enum numbers as proto3 JSON does', () => {
    for (const elapsed of ['NaN', 'Infinity', '-Infinity']) {
      const back = roundTrip('GateRequestHandled_v1', { timing_metadata: { elapsed } });
      assert.equal((back['timing_metadata'] as Record<string, unknown>)['elapsed'], elapsed);
    }
    assert.equal(roundTrip('PasswordChanged_v1', { initiated_by: 7 })['initiated_by'], 7);
    assert.equal(roundTrip('PasswordChanged_v1', { initiated_by: 2 })['initiated_by'], 'EndUser');
  });

  it('lets a reader that knows only EventTemplate read the metadata of any event', () => {
    const bytes = codec.encodeEvent('GateRequestHandled_v1', { event_metadata: metadata, plugins: [{ plugin_id: 'p' }] });
    const template = root.lookupType('events.EventTemplate');
    const read = template.toObject(template.decode(bytes), { longs: String, enums: String });
    assert.equal(read['event_metadata'].event_name, 'GateRequestHandled_v1');
    assert.equal(read['event_metadata'].source, 'Gate');
  });

  it('refuses JSON that does not fit, naming the field, and unknown message names', () => {
    assert.throws(() => codec.encodeEvent('PersonCreated_v1', { handles: [{ type: 'EmailAddress', valu: 'x' }] }), (error: unknown) => {
      assert.ok(error instanceof EventShapeError);
      assert.equal(error.path, 'PersonCreated_v1.handles[0].valu');
      return true;
    });
    assert.throws(() => codec.encodeEvent('PersonCreated', {}), RangeError);
    assert.throws(() => codec.decodeEvent('StreamFrame', new Uint8Array()), RangeError);
    assert.throws(() => codec.decodeEvent('PersonCreated_v1', new Uint8Array([0xaa, 0x06, 0x05, 0x70])));
  });
});

describe('stream frames', () => {
  const event = { event_metadata: { ...metadata, event_type: 'GateHeartbeat', event_name: 'GateHeartbeat_v1' }, sequence: '9' };

  it('round-trips offset, event name and event', () => {
    for (const offset of [1, 2, 1000, Number.MAX_SAFE_INTEGER]) {
      const decoded = codec.decodeStreamFrame(codec.encodeStreamFrame(offset, 'GateHeartbeat_v1', event));
      assert.deepEqual(decoded, { offset, event_name: 'GateHeartbeat_v1', event });
    }
  });

  it('is the StreamFrame message with the encoded event in its bytes field', () => {
    const frame = codec.encodeStreamFrame(7, 'GateHeartbeat_v1', event);
    const type = root.lookupType('events.StreamFrame');
    const raw = type.toObject(type.decode(frame), { longs: Number });
    assert.equal(raw['offset'], 7);
    assert.equal(raw['event_name'], 'GateHeartbeat_v1');
    const bytes = (b: Uint8Array) => [...b];
    assert.deepEqual(bytes(raw['event']), bytes(codec.encodeEvent('GateHeartbeat_v1', event)));
    assert.deepEqual(bytes(codec.encodeStreamFrameBytes(7, 'GateHeartbeat_v1', codec.encodeEvent('GateHeartbeat_v1', event))), bytes(frame));
  });

  it('refuses offsets that are not non-negative safe integers, and unknown event names', () => {
    assert.throws(() => codec.encodeStreamFrame(-1, 'GateHeartbeat_v1', event), RangeError);
    assert.throws(() => codec.encodeStreamFrame(1.5, 'GateHeartbeat_v1', event), RangeError);
    assert.throws(() => codec.encodeStreamFrameBytes(1, 'Nope_v1', new Uint8Array()), RangeError);
    const huge = root.lookupType('events.StreamFrame').encode({ offset: '18446744073709551615', event_name: 'GateHeartbeat_v1' }).finish();
    assert.throws(() => codec.decodeStreamFrame(huge), RangeError);
  });
});
