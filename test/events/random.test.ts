// randomEvent: deterministic, complete, and plausible content.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EVENT_MESSAGE_NAMES, messageDef } from '../../src/events/catalog.js';
import type { EventJson } from '../../src/events/event-json.js';
import { randomEvent } from '../../src/events/random.js';
import { parseRfc3339 } from '../../src/lib/time-text.js';
import { sampleMetadata } from '../support/event-metadata.js';
import { seededRng } from '../support/seeded-rng.js';

const metadata = sampleMetadata({ type: 'TokenMinted', root_organization_id: 'org-1' });

const many = (messageName: string, count: number): EventJson[] =>
  Array.from({ length: count }, (_, seed) => randomEvent(messageName, metadata, seededRng(seed)));

describe('randomEvent', () => {
  it('is determined by the random source', () => {
    assert.deepStrictEqual(randomEvent('TokenMinted_v1', metadata, seededRng(7)), randomEvent('TokenMinted_v1', metadata, seededRng(7)));
    assert.notDeepStrictEqual(randomEvent('TokenMinted_v1', metadata, seededRng(7)), randomEvent('TokenMinted_v1', metadata, seededRng(8)));
  });

  it('carries the given metadata and sets every field, optional ones only sometimes', () => {
    for (const name of EVENT_MESSAGE_NAMES) {
      const fields = messageDef(name)?.fields ?? [];
      const events = many(name, 40);
      for (const event of events) {
        assert.equal(event['event_metadata'], metadata);
        for (const f of fields) if (!f.optional) assert.ok(f.name in event, `${name}.${f.name}`);
      }
      for (const f of fields.filter((f) => f.optional)) {
        const present = events.filter((e) => f.name in e).length;
        assert.ok(present > 0 && present < events.length, `${name}.${f.name} present in ${present} of ${events.length}`);
      }
    }
  });

  it('fills repeated fields with 0 to 3 items, and enums with named non-zero values', () => {
    const lengths = new Set(many('TokenMinted_v1', 60).map((e) => (e['authentications'] as unknown[]).length));
    assert.deepEqual([...lengths].sort(), [0, 1, 2, 3]);
    for (const e of many('PasswordChanged_v1', 20)) assert.ok(['AdminAPI', 'EndUser'].includes(e['initiated_by'] as string));
  });

  it('gives handles a value that fits their type', () => {
    const handles = many('PersonCreated_v1', 30).flatMap((e) => e['handles'] as { type: string; value: string }[]);
    assert.ok(handles.length > 0);
    for (const h of handles) {
      if (h.type === 'EmailAddress') assert.match(h.value, /^[^@\s]+@[^@\s]+\.[a-z]+$/);
      else if (h.type === 'PhoneNumber') assert.match(h.value, /^\+\d{8,15}$/);
      else assert.equal(h.type, 'Username');
    }
  });

  it('writes valid timestamps, and a timing whose end follows its start by the elapsed time', () => {
    for (const e of many('TokenMinted_v1', 20)) {
      assert.ok(parseRfc3339(e['issued_at'] as string), e['issued_at'] as string);
      assert.match(e['issued_at'] as string, /\.\d{9}Z$/);
    }
    for (const e of many('BillableProtectedIdentitiesCounted_v1', 20)) assert.match(e['computed_at'] as string, /T[\d:]{8}\.\d{6}Z$/);
    for (const e of many('GateRequestHandled_v1', 20)) {
      const timing = e['timing_metadata'] as { start: string; end: string; elapsed: number };
      const start = parseRfc3339(timing.start);
      const end = parseRfc3339(timing.end);
      assert.ok(start && end);
      const elapsedNanos = (end.seconds - start.seconds) * 1e9 + (end.nanos - start.nanos);
      assert.equal(elapsedNanos, Math.round(timing.elapsed * 1e9));
    }
  });

  it('refuses a name that is not an event message', () => {
    assert.throws(() => randomEvent('PersonHandle', metadata, seededRng(1)), RangeError);
    assert.throws(() => randomEvent('PersonCreated', metadata, seededRng(1)), RangeError);
  });
});
