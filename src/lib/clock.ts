// Time as the rest of the code sees it: milliseconds and nanosecond RFC 3339 text, injectable for tests.
export interface Clock {
  nowMs(): number;
  /** Nanoseconds since the epoch (wall clock, with sub-millisecond precision from the monotonic clock). */
  nowNs(): bigint;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  nowNs: () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e3)) * 1000n,
};

/** RFC 3339 UTC with nine fractional digits. */
export function rfc3339Nanos(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return new Date(ms).toISOString().slice(0, 19) + '.' + frac + 'Z';
}

/** RFC 3339 UTC with millisecond precision, for record timestamps. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}
