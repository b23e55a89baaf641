// A clock that runs with the wall clock but can be moved forward, so tests need not sleep to see time pass.
import { systemClock, type Clock } from '../../src/lib/clock.js';

export interface MovableClock extends Clock {
  advance(ms: number): void;
}

export function movableClock(): MovableClock {
  let skewMs = 0;
  return {
    // Timers and durations run on the system's monotonic clock; only the wall clock moves.
    ...systemClock,
    nowMs: () => Date.now() + skewMs,
    nowNs: () => BigInt(Math.round((performance.timeOrigin + performance.now() + skewMs) * 1e3)) * 1000n,
    advance(ms) {
      skewMs += ms;
    },
  };
}
