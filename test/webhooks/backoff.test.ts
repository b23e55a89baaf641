// The back-off between attempts of one event delivery: doubling from the base, capped, jittered in its upper half.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retryDelayMs } from '../../src/webhooks/backoff.js';

const backoff = { baseMs: 1000, maxMs: 300_000 };

test('doubles from the base and stops at the cap', () => {
  const top = (n: number) => retryDelayMs(n, backoff, () => 1);
  assert.deepEqual([1, 2, 3, 4, 9, 10, 50, 5000].map(top), [1000, 2000, 4000, 8000, 256_000, 300_000, 300_000, 300_000]);
});

test('the jitter stays within the upper half of the wait', () => {
  assert.equal(retryDelayMs(3, backoff, () => 0), 2000);
  assert.equal(retryDelayMs(3, backoff, () => 0.5), 3000);
  for (let i = 0; i < 200; i++) {
    const d = retryDelayMs(4, backoff, Math.random);
    assert.ok(d >= 4000 && d <= 8000, String(d));
  }
});
