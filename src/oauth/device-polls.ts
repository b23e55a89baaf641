// The pace of a device's polls (RFC 8628 3.5): a poll sooner than the interval after the last is slow_down, and
// the interval grows by 5 seconds for that device code from then on. Kept in memory: a restart merely forgets
// how fast a device polled, which costs nothing but one poll's patience.
import type { Clock } from '../lib/clock.js';
import { DEVICE_POLL_INTERVAL_S } from '../domain/device-codes.js';

/** RFC 8628 3.5: what slow_down adds to the interval. */
const SLOW_DOWN_S = 5;
/** Past this many tracked codes, the expired ones are swept on the next poll. */
const SWEEP_AT = 10_000;

export interface PollPacer {
  /** Records a poll of the code; true when it came sooner than the code's interval allows (answer slow_down). */
  tooSoon(deviceCodeHash: string, expiresAtMs: number): boolean;
}

export function createPollPacer(clock: Pick<Clock, 'nowMs'>): PollPacer {
  const polls = new Map<string, { last: number; interval_s: number; expires: number }>();
  return {
    tooSoon(hash, expiresAtMs) {
      const now = clock.nowMs();
      const seen = polls.get(hash);
      if (seen === undefined) {
        if (polls.size >= SWEEP_AT) for (const [h, p] of polls) if (p.expires <= now) polls.delete(h);
        polls.set(hash, { last: now, interval_s: DEVICE_POLL_INTERVAL_S, expires: expiresAtMs });
        return false;
      }
      const early = now - seen.last < seen.interval_s * 1000;
      if (early) seen.interval_s += SLOW_DOWN_S;
      seen.last = now;
      return early;
    },
  };
}
