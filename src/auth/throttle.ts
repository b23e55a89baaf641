// A sliding-window limiter of failed attempts per key, in memory, with a bounded number of keys.
export interface Limiter {
  /** 0 when another attempt is allowed now; else how long until it is */
  retryAfterMs(key: string, nowMs: number): number;
  fail(key: string, nowMs: number): void;
  /** takes back one failure counted at atMs: an attempt reserved as a failure that turned out not to be one */
  release(key: string, atMs: number): void;
  reset(key: string): void;
}

export function createLimiter(options: { windowMs: number; limit: number; maxKeys?: number }): Limiter {
  const { windowMs, limit } = options;
  const maxKeys = options.maxKeys ?? 100_000;
  /** key → failure times, oldest first, at most `limit` of them (older ones cannot matter) */
  const failures = new Map<string, number[]>();

  const recent = (key: string, nowMs: number): number[] => {
    const times = failures.get(key);
    if (!times) return [];
    while (times.length > 0 && (times[0] as number) <= nowMs - windowMs) times.shift();
    if (times.length === 0) failures.delete(key);
    return times;
  };

  return {
    retryAfterMs(key, nowMs) {
      const times = recent(key, nowMs);
      return times.length < limit ? 0 : (times[0] as number) + windowMs - nowMs;
    },
    fail(key, nowMs) {
      const times = recent(key, nowMs);
      times.push(nowMs);
      if (times.length > limit) times.shift();
      // Re-inserting keeps the map in order of last failure, so the stalest key is the one dropped.
      failures.delete(key);
      failures.set(key, times);
      if (failures.size > maxKeys) failures.delete(failures.keys().next().value as string);
    },
    release(key, atMs) {
      const times = failures.get(key);
      const at = times?.lastIndexOf(atMs) ?? -1;
      if (at < 0) return;
      times?.splice(at, 1);
      if (times?.length === 0) failures.delete(key);
    },
    reset(key) {
      failures.delete(key);
    },
  };
}
