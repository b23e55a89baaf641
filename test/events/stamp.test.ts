// Stamping events: the stamper that formats each batch time once gives what stampEvent gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEventStamper, stampEvent } from '../../src/events/stamp.js';

const origin = { organization_id: 'org-a', root_organization_id: 'root-a' };
const draft = { name: 'TokenMinted_v1', body: { token_id: 't1', person_id: 'p1', mint_token_api: true } } as const;
const withoutId = (e: Record<string, unknown>) => ({ ...e, event_metadata: { ...(e['event_metadata'] as object), event_id: '' } });

test('given events of one batch and of the next, then each carries its batch time as stampEvent writes it', () => {
  const stamp = createEventStamper();
  const t1 = 1_795_459_246_123_456_789n;
  const t2 = t1 + 1_000n;
  const first = stamp(origin, draft, t1);
  const again = stamp(origin, draft, t1);
  const later = stamp(origin, draft, t2);
  assert.deepEqual(withoutId(first), withoutId(stampEvent(origin, draft, t1)));
  assert.equal((first['event_metadata'] as { timestamp: string }).timestamp, '2026-11-23T18:40:46.123456789Z');
  assert.equal((again['event_metadata'] as { timestamp: string }).timestamp, '2026-11-23T18:40:46.123456789Z');
  assert.equal((later['event_metadata'] as { timestamp: string }).timestamp, '2026-11-23T18:40:46.123457789Z');
  assert.notEqual((first['event_metadata'] as { event_id: string }).event_id, (again['event_metadata'] as { event_id: string }).event_id);
});
