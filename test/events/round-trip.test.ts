// Every event message: random events survive encode, decode and framing unchanged, and validate.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EVENT_MESSAGE_NAMES, eventByMessageName, eventSource } from '../../src/events/catalog.js';
import { createEventCodec } from '../../src/events/codec.js';
import { rfc3339Nanos } from '../../src/lib/time-text.js';
import { sampleMetadata } from '../support/event-metadata.js';
import { randomEvent } from '../../src/events/random.js';
import { validateEvent } from '../../src/events/validate.js';
import { seededRng } from '../support/seeded-rng.js';

const codec = createEventCodec();
const SEEDS_PER_MESSAGE = 25;

function metadataFor(messageName: string, seed: number) {
  const def = eventByMessageName(messageName);
  assert.ok(def);
  return sampleMetadata({
    type: def.type,
    version: def.version,
    source: eventSource(def),
    organization_id: `org-${seed}`,
    event_id: `0195f3a2-0000-7000-8000-${String(seed).padStart(12, '0')}`,
    timestamp: rfc3339Nanos(1_795_453_200_000_000_000n + BigInt(seed) * 1_000_003n),
  });
}

describe('every event message: random event → encode → decode', () => {
  for (const messageName of EVENT_MESSAGE_NAMES) {
    it(messageName, () => {
      for (let seed = 1; seed <= SEEDS_PER_MESSAGE; seed++) {
        const event = randomEvent(messageName, metadataFor(messageName, seed), seededRng(seed));
        assert.equal(validateEvent(messageName, event), null, `seed ${seed}`);
        const bytes = codec.encodeEvent(messageName, event);
        const decoded = codec.decodeEvent(messageName, bytes);
        assert.deepStrictEqual(decoded, event, `seed ${seed}`);
        // The JSON form is canonical: encoding it again gives the same bytes.
        assert.deepEqual([...codec.encodeEvent(messageName, decoded)], [...bytes], `seed ${seed}`);
        const frame = codec.decodeStreamFrame(codec.encodeStreamFrame(seed, messageName, event));
        assert.deepStrictEqual(frame, { offset: seed, event_name: messageName, event }, `seed ${seed}`);
      }
    });
  }
});
