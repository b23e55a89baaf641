// One-time values seen (a client assertion's jti, RFC 7523 3 item 7; a DPoP proof's, RFC 9449 11.1), each
// remembered until it expires. This map is the whole check; wal/used-once.ts keeps it durable for the service.
import type { Clock } from './clock.js';

export interface ReplayGuard {
  /** true the first time key is offered before expS (seconds); false for a replay */
  firstUse(key: string, expS: number): boolean;
  readonly size: number;
}

/** A replay check that may record the first use before it answers (wal/used-once.ts). */
export interface OnceCheck {
  firstUse(key: string, expS: number): boolean | Promise<boolean>;
}

/** beyond this many live entries a new one is refused: a bound on memory, reached only by a flood */
export const MAX_REMEMBERED = 500_000;

/** `forget`: told each key dropped once expired, so a durable copy drops it too. */
export function createReplayGuard(clock: Pick<Clock, 'nowMs'>, max = MAX_REMEMBERED, forget?: (key: string) => void): ReplayGuard {
  const seen = new Map<string, number>();
  let sweptS = 0;
  const sweep = (nowS: number) => {
    sweptS = nowS;
    for (const [key, exp] of seen) {
      if (exp >= nowS) continue;
      seen.delete(key);
      forget?.(key);
    }
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
