import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createManualClock } from '../../src/lib/manual-clock.js';
import { createPendingFlows, type PendingFlow } from '../../src/sso/pending.js';
import { STATE_TTL_MS } from '../../src/sso/state-cookie.js';

const flow = (state: string, expires: number): PendingFlow => ({ state, org: 'o', client_id: 'c', redirect_uri: 'https://app.example/cb', nonce: 'n', code_verifier: 'v', expires });

test('given a pending flow, when it is taken twice, then the second take is a replay naming its organization', () => {
  const clock = createManualClock();
  const flows = createPendingFlows(clock);
  assert.ok(flows.add(flow('s1', clock.nowMs() + STATE_TTL_MS)));
  const first = flows.take('s1');
  assert.equal(first.kind, 'flow');
  assert.deepEqual(flows.take('s1'), { kind: 'used', org: 'o', client_id: 'c' });
  assert.deepEqual(flows.take('never'), { kind: 'unknown' });
});

test('given a pending flow, when its 10 minutes pass on the clock, then it is gone and its timer with it', () => {
  const clock = createManualClock();
  const flows = createPendingFlows(clock);
  flows.add(flow('s1', clock.nowMs() + STATE_TTL_MS));
  clock.advance(STATE_TTL_MS - 1);
  assert.equal(flows.size(), 1);
  clock.advance(1);
  assert.equal(flows.size(), 0);
  assert.equal(clock.pending(), 0);
  assert.deepEqual(flows.take('s1'), { kind: 'unknown' });
});

test('given a full table, when one more flow starts, then it is refused', () => {
  const clock = createManualClock();
  const flows = createPendingFlows(clock, 2);
  assert.ok(flows.add(flow('a', clock.nowMs() + 1000)));
  assert.ok(flows.add(flow('b', clock.nowMs() + 1000)));
  assert.equal(flows.add(flow('c', clock.nowMs() + 1000)), false);
  clock.advance(1000);
  assert.ok(flows.add(flow('c', clock.nowMs() + 1000)));
});
