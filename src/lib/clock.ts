// Time as the rest of the code sees it, injectable for tests.
export interface Clock {
  nowMs(): number;
  /** Nanoseconds since the epoch (wall clock, with sub-millisecond precision from the monotonic clock). */
  nowNs(): bigint;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  nowNs: () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e3)) * 1000n,
};
