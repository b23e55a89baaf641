// Stamping events: the stamper that formats each batch time once gives what stampEvent gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEventStamper, stampEvent } from '../../src/events/stamp.js';
import { createIdSource } from '../../src/lib/ids.js';

const origin = { organization_id: 'org-a', root_organization_id: 'root-a' };
const draft = { name: 'TokenMinted_v1', body: { token_id: 't1', person_id: 'p1', mint_token_api: true } } as const;
const withoutId = (e: Record<string, unknown>) => ({ ...e, event_metadata: { ...(e['event_metadata'] as object), event_id: '' } });

test('given events of one batch and of the next, then each carries its batch time as stampEvent writes it', () => {
  const ids = createIdSource();
  const stamp = createEventStamper(ids);
  const t1 = 1_795_459_246_123_456_789n;
  const t2 = t1 + 1_000n;
  const first = stamp(origin, draft, t1);
  const again = stamp(origin, draft, t1);
  const later = stamp(origin, draft, t2);
  assert.deepEqual(withoutId(first), withoutId(stampEvent(origin, draft, t1, ids)));
  assert.equal((first['event_metadata'] as { timestamp: string }).timestamp, '2026-11-23T18:40:46.123456789Z');
  assert.equal((again['event_metadata'] as { timestamp: string }).timestamp, '2026-11-23T18:40:46.123456789Z');
  assert.equal((later['event_metadata'] as { timestamp: string }).timestamp, '2026-11-23T18:40:46.123457789Z');
  assert.notEqual((first['event_metadata'] as { event_id: string }).event_id, (again['event_metadata'] as { event_id: string }).event_id);
});

test('given an id source, then fresh event ids are its ids, and a test event keeps its own', () => {
  let n = 0;
  const stamp = createEventStamper({ uuid: () => `00000000-0000-7000-8000-00000000000${++n}` });
  const id = (e: Record<string, unknown>) => (e['event_metadata'] as { event_id: string }).event_id;
  assert.equal(id(stamp(origin, draft, 1n)), '00000000-0000-7000-8000-000000000001');
  assert.equal(id(stamp(origin, draft, 1n)), '00000000-0000-7000-8000-000000000002');
  assert.equal(id(stamp(origin, { ...draft, test: { event_id: 'kept' } }, 1n)), 'kept');
  assert.equal(n, 2);
});
