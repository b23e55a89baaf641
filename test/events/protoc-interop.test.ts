// The reference protobuf implementation reads and writes what this codec does, where protoc is installed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { EVENT_MESSAGE_NAMES, eventByMessageName, eventSource } from '../../src/events/catalog.js';
import { createEventCodec } from '../../src/events/codec.js';
import { rfc3339Nanos } from '../../src/lib/time-text.js';
import { sampleMetadata } from '../support/event-metadata.js';
import { randomEvent } from '../../src/events/random.js';
import { seededRng } from '../support/seeded-rng.js';

// protoc is not a dependency: where it and the well-known .proto files are installed (Debian: protobuf-compiler and
// libprotobuf-dev), it checks that the reference implementation reads and writes the same bytes as this codec.
const INCLUDE = '/usr/include';
const protocAvailable = spawnSync('protoc', ['--version']).status === 0 && existsSync(`${INCLUDE}/google/protobuf/timestamp.proto`);
const protoDir = fileURLToPath(new URL('../../src/events/', import.meta.url));
const codec = createEventCodec();

function protoc(mode: '--decode' | '--encode', messageName: string, input: Uint8Array | string): Buffer {
  const run = spawnSync('protoc', [`-I${protoDir}`, `-I${INCLUDE}`, `${mode}=events.${messageName}`, 'events.proto'], { input });
  assert.equal(run.status, 0, run.stderr.toString());
  return run.stdout;
}

describe('protoc interoperability', { skip: protocAvailable ? false : 'protoc or the well-known .proto files are not installed' }, () => {
  it('protoc compiles events.proto', () => {
    const run = spawnSync('protoc', [`-I${protoDir}`, `-I${INCLUDE}`, '--descriptor_set_out=/dev/null', 'events.proto']);
    assert.equal(run.status, 0, run.stderr.toString());
  });

  it('protoc reads every event message this codec writes, and writes it back the same', () => {
    for (const messageName of EVENT_MESSAGE_NAMES) {
      const def = eventByMessageName(messageName);
      assert.ok(def);
      const metadata = sampleMetadata({ type: def.type, version: def.version, source: eventSource(def), timestamp: rfc3339Nanos(1_795_453_200_123_456_789n) });
      const event = randomEvent(messageName, metadata, seededRng(messageName.length));
      const text = protoc('--decode', messageName, codec.encodeEvent(messageName, event)).toString();
      assert.match(text, /event_metadata \{/, messageName);
      assert.deepStrictEqual(codec.decodeEvent(messageName, protoc('--encode', messageName, text)), event, messageName);
    }
  });

  it('protoc shows Timestamp, Value and 64-bit fields as their well-known types', () => {
    const text = protoc('--decode', 'GateRequestHandled_v1', codec.encodeEvent('GateRequestHandled_v1', {
      timing_metadata: { start: '2026-11-23T17:00:00.5Z' },
      http_request_metadata: { request_length: '-9223372036854775808' },
      plugins: [{ plugin_metadata: { a: [true, null] } }],
    })).toString();
    assert.match(text, /start \{\s+seconds: 1795453200\s+nanos: 500000000\s+\}/);
    assert.match(text, /request_length: -9223372036854775808/);
    assert.match(text, /struct_value \{\s+fields \{\s+key: "a"\s+value \{\s+list_value \{\s+values \{\s+bool_value: true/);
    assert.match(text, /null_value: NULL_VALUE/);
  });
});
