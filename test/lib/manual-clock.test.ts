// The manual clock: time moves only when advanced, and due timers fire in order with the clock at their time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createManualClock } from '../../src/lib/manual-clock.js';
import { systemClock } from '../../src/lib/clock.js';

test('given timers set out of order, when the clock advances past them, then they fire in due order at their own time', () => {
  const clock = createManualClock(Date.UTC(2026, 0, 1));
  const fired: Array<[string, number]> = [];
  clock.setTimeout(() => fired.push(['c', clock.monoMs()]), 30);
  clock.setTimeout(() => fired.push(['a', clock.monoMs()]), 10);
  clock.setTimeout(() => fired.push(['b', clock.monoMs()]), 10);
  clock.advance(9);
  assert.deepEqual(fired, []);
  clock.advance(21);
  assert.deepEqual(fired, [['a', 10], ['b', 10], ['c', 30]]);
  assert.equal(clock.monoMs(), 30);
  assert.equal(clock.nowMs(), Date.UTC(2026, 0, 1) + 30);
  assert.equal(clock.nowNs(), BigInt(Date.UTC(2026, 0, 1) + 30) * 1_000_000n);
  assert.equal(clock.pending(), 0);
});

test('given a timer set by a firing timer within the advance, then it fires in the same advance; a cleared one never does', () => {
  const clock = createManualClock();
  const fired: number[] = [];
  const cleared = clock.setTimeout(() => fired.push(-1), 5);
  clock.setTimeout(() => clock.setTimeout(() => fired.push(clock.monoMs()), 10), 5);
  clock.clearTimeout(cleared);
  clock.advance(15);
  assert.deepEqual(fired, [15]);
  clock.setTimeout(() => fired.push(0), 0);
  assert.deepEqual(fired, [15], 'a zero delay does not fire within the call that set it');
  clock.advance(1);
  assert.deepEqual(fired, [15, 0]);
});

test('given an interval, then it fires once per period until cleared', () => {
  const clock = createManualClock();
  const at: number[] = [];
  const every = clock.setInterval(() => at.push(clock.monoMs()), 100);
  clock.advance(350);
  assert.deepEqual(at, [100, 200, 300]);
  clock.clearTimeout(every);
  clock.advance(1000);
  assert.deepEqual(at, [100, 200, 300]);
});

test('next() moves to the next timer only; the clock never goes back', () => {
  const clock = createManualClock();
  let fired = false;
  clock.setTimeout(() => (fired = true), 250);
  assert.equal(clock.next(), true);
  assert.equal(fired, true);
  assert.equal(clock.monoMs(), 250);
  assert.equal(clock.next(), false);
  assert.throws(() => clock.advance(-1), RangeError);
});

test('the system clock fires its timers and clears them; a background timer fires while something else keeps the process alive', async () => {
  const before = systemClock.monoMs();
  let background = false;
  systemClock.setTimeout(() => (background = true), 1, { background: true });
  let fired = false;
  const h = systemClock.setTimeout(() => (fired = true), 1);
  systemClock.clearTimeout(h);
  await new Promise<void>((resolve) => systemClock.setTimeout(resolve, 20));
  assert.equal(fired, false);
  assert.equal(background, true);
  assert.ok(systemClock.monoMs() >= before);
});
