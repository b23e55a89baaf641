// One-time values seen (a client assertion's jti, RFC 7523 3 item 7), each remembered until it expires. In
// memory: a durable record would put a WAL commit on every token request; instead what this process could
// not have seen (assertions issued before it started) is refused where they are checked.
import type { Clock } from './clock.js';

export interface ReplayGuard {
  /** true the first time key is offered before expS (seconds); false for a replay */
  firstUse(key: string, expS: number): boolean;
  readonly size: number;
}

/** beyond this many live entries a new one is refused: a bound on memory, reached only by a flood */
export const MAX_REMEMBERED = 500_000;

export function createReplayGuard(clock: Pick<Clock, 'nowMs'>, max = MAX_REMEMBERED): ReplayGuard {
  const seen = new Map<string, number>();
  let sweptS = 0;
  const sweep = (nowS: number) => {
    sweptS = nowS;
    for (const [key, exp] of seen) if (exp < nowS) seen.delete(key);
  };
  return {
    firstUse(key, expS) {
      const nowS = Math.floor(clock.nowMs() / 1000);
      // at most once a second, or when full: the map's cost stays one pass per second at any rate
      if (nowS > sweptS || seen.size >= max) sweep(nowS);
      const held = seen.get(key);
      if (held !== undefined && held >= nowS) return false;
      if (seen.size >= max) return false;
      seen.set(key, expS);
      return true;
    },
    get size() {
      return seen.size;
    },
  };
}
