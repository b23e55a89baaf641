// Consistency waits on a manual clock: a wait is answered by the acknowledgements of every region, or by its
// timeout exactly when it comes due, or by the service stopping. Time passes only when the test moves it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../src/errors.js';
import { createManualClock } from '../../src/lib/manual-clock.js';
import { Metrics } from '../../src/lib/metrics.js';
import { createRegionWaiter, type AckSource } from '../../src/regions/waiters.js';

/** A replica region's acknowledgements, as the test announces them. */
function region(name: string) {
  const acked = new Map<string, number>();
  const listeners: Array<(org: string, offset: number) => void> = [];
  const source: AckSource = {
    region: name,
    acked: (org) => acked.get(org) ?? 0,
    onAck: (l) => void listeners.push(l),
  };
  const ack = (org: string, offset: number) => {
    acked.set(org, offset);
    for (const l of listeners) l(org, offset);
  };
  return { source, ack };
}

function setup() {
  const clock = createManualClock();
  const metrics = new Metrics();
  const iowa = region('us-iowa');
  const japan = region('asia-japan');
  const waiter = createRegionWaiter([iowa.source, japan.source], metrics.histogram('consistency_wait_seconds', 'waits'), clock);
  /** Reads the wait's outcome so far; a wait reached at once returns no promise. */
  const outcome = (p: Promise<void> | undefined) => {
    let value: 'pending' | 'reached' | ServiceError = 'pending';
    if (p === undefined) return () => 'reached' as const;
    p.then(
      () => (value = 'reached'),
      (e: ServiceError) => (value = e),
    );
    return () => value;
  };
  const turn = () => new Promise((r) => setImmediate(r));
  return { clock, metrics, iowa, japan, waiter, outcome, turn };
}

const ALL = (timeoutMs: number) => ({ level: 'all_regions' as const, timeoutMs });

test('given a wait for all regions, when every region acknowledges the offset, then it is reached, whatever the clock says', async () => {
  const { clock, iowa, japan, waiter, outcome, turn } = setup();
  const w = outcome(waiter.wait('org', 5, ALL(1000)));
  iowa.ack('org', 5);
  clock.advance(999);
  await turn();
  assert.equal(w(), 'pending', 'asia-japan has not acknowledged');
  japan.ack('org', 7);
  await turn();
  assert.equal(w(), 'reached');
  assert.equal(waiter.pending(), 0);
  assert.equal(clock.pending(), 0, 'its timer is gone');
});

test('given a wait no region acknowledges, then it answers 408 exactly at its timeout, and a local_region wait never waits', async () => {
  const { clock, metrics, iowa, waiter, outcome, turn } = setup();
  const w = outcome(waiter.wait('org', 3, ALL(1000)));
  iowa.ack('org', 3);
  clock.advance(999);
  await turn();
  assert.equal(w(), 'pending');
  clock.advance(1);
  await turn();
  const answer = w();
  assert.ok(answer instanceof ServiceError);
  assert.equal(answer.code, 'ERR_TIMEOUT');
  assert.equal(waiter.pending(), 0);
  const local = outcome(waiter.wait('org', 9, { level: 'local_region', timeoutMs: 1000 }));
  await turn();
  assert.equal(local(), 'reached', 'answered with no clock time passing');
  const text = metrics.render();
  assert.match(text, /^consistency_wait_seconds_sum\{level="all_regions",outcome="timeout"\} 1$/m, 'waited one second of clock time');
  assert.match(text, /^consistency_wait_seconds_count\{level="local_region",outcome="reached"\} 1$/m);
});

test('given waits outstanding, when the service stops, then each answers 503 and no timer is left', async () => {
  const { clock, waiter, outcome, turn } = setup();
  const ws = [1, 2, 3].map((o) => outcome(waiter.wait('org', o, ALL(5000))));
  assert.equal(waiter.pending(), 3);
  waiter.close();
  await turn();
  for (const w of ws) {
    const answer = w();
    assert.ok(answer instanceof ServiceError && answer.code === 'ERR_UNAVAILABLE');
  }
  assert.equal(clock.pending(), 0);
});
