import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLimiter } from '../../src/auth/throttle.js';

test('given limit failures within the window, when one more attempt comes, then it waits until the oldest leaves the window', () => {
  const limiter = createLimiter({ windowMs: 60_000, limit: 3 });
  limiter.fail('k', 1_000);
  limiter.fail('k', 2_000);
  assert.equal(limiter.retryAfterMs('k', 2_500), 0);
  limiter.fail('k', 3_000);
  assert.equal(limiter.retryAfterMs('k', 3_000), 58_000);
  assert.equal(limiter.retryAfterMs('k', 60_999), 1);
  assert.equal(limiter.retryAfterMs('k', 61_000), 0, 'the window slides: the first failure has left it');
  assert.equal(limiter.retryAfterMs('other', 3_000), 0, 'keys are independent');
});

test('given a blocked key, when it is reset, then attempts are allowed again', () => {
  const limiter = createLimiter({ windowMs: 60_000, limit: 1 });
  limiter.fail('k', 0);
  assert.ok(limiter.retryAfterMs('k', 1) > 0);
  limiter.reset('k');
  assert.equal(limiter.retryAfterMs('k', 1), 0);
});

test('given more keys than the bound, then the stalest key is forgotten first', () => {
  const limiter = createLimiter({ windowMs: 60_000, limit: 1, maxKeys: 2 });
  limiter.fail('a', 0);
  limiter.fail('b', 1);
  limiter.fail('a', 2);
  limiter.fail('c', 3);
  assert.equal(limiter.retryAfterMs('b', 4), 0, 'b was the stalest');
  assert.ok(limiter.retryAfterMs('a', 4) > 0);
  assert.ok(limiter.retryAfterMs('c', 4) > 0);
});

test('given a failure reserved ahead, when it is released, then it no longer counts and the others still do', () => {
  const limiter = createLimiter({ windowMs: 60_000, limit: 2 });
  limiter.fail('k', 10);
  limiter.fail('k', 20);
  assert.ok(limiter.retryAfterMs('k', 21) > 0);
  limiter.release('k', 20);
  assert.equal(limiter.retryAfterMs('k', 21), 0);
  limiter.release('k', 99);
  limiter.fail('k', 30);
  assert.ok(limiter.retryAfterMs('k', 31) > 0, 'releasing a time never counted took nothing back');
  limiter.release('k', 10);
  limiter.release('k', 30);
  limiter.release('other', 1);
  assert.equal(limiter.retryAfterMs('k', 31), 0);
});
