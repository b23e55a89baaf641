// GCRA (generic cell rate algorithm): one theoretical arrival time per key, bounded in the number of keys.
export interface GcraLimit {
  /** emission interval: one request per intervalMs sustained */
  intervalMs: number;
  /** requests allowed at once */
  burst: number;
}

export interface GcraResult {
  allowed: boolean;
  remaining: number;
  /** ms until a request would be allowed again (0 when allowed) */
  retryAfterMs: number;
  /** ms until the bucket is full again */
  resetMs: number;
}

export interface Gcra {
  take(key: string, nowMs: number): GcraResult;
  size(): number;
}

export function createGcra(limit: GcraLimit, maxKeys = 100_000): Gcra {
  const tat = new Map<string, number>();
  const T = limit.intervalMs;
  const tau = limit.burst * T;
  return {
    take(key, now) {
      const prev = tat.get(key);
      const base = prev === undefined || prev < now ? now : prev;
      const next = base + T;
      const allowAt = next - tau;
      if (now < allowAt) return { allowed: false, remaining: 0, retryAfterMs: allowAt - now, resetMs: base - now };
      // Re-insert, so that the Map's order is least recently used first.
      tat.delete(key);
      tat.set(key, next);
      if (tat.size > maxKeys) {
        const oldest = tat.keys().next().value as string;
        tat.delete(oldest);
      }
      return { allowed: true, remaining: Math.floor((now - allowAt) / T), retryAfterMs: 0, resetMs: next - now };
    },
    size: () => tat.size,
  };
}
