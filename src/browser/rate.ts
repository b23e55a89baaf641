// Fixed-window request counters per key (an IP, an organization), in memory, with a bounded number of keys:
// browser routes take no credentials, so a flood is answered 429 before it reaches the organization's actor.
export interface RateLimit {
  /** counts a request; 0 when it is allowed, else the milliseconds until the key's window ends */
  take(key: string, nowMs: number): number;
}

export function createRateLimit(options: { windowMs: number; limit: number; maxKeys?: number }): RateLimit {
  const { windowMs, limit } = options;
  const maxKeys = options.maxKeys ?? 100_000;
  const windows = new Map<string, { start: number; count: number }>();
  return {
    take(key, nowMs) {
      let w = windows.get(key);
      if (w === undefined || nowMs - w.start >= windowMs) {
        if (w !== undefined) windows.delete(key);
        w = { start: nowMs, count: 0 };
        windows.set(key, w);
        // Keys are kept in order of their window's start: the stalest goes first.
        if (windows.size > maxKeys) windows.delete(windows.keys().next().value as string);
      }
      if (w.count >= limit) return Math.max(1, w.start + windowMs - nowMs);
      w.count++;
      return 0;
    },
  };
}

/** 429 with Retry-After in whole seconds, at least one. */
export const retryAfter = (ms: number) => ({ 'Retry-After': String(Math.max(1, Math.ceil(ms / 1000))) });
