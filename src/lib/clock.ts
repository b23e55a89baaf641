// Time as the rest of the code sees it: the wall clock, a monotonic clock and timers, injectable for tests.

/** A pending timer, as returned by Clock.setTimeout and Clock.setInterval; opaque to its holder. */
export type TimerHandle = { readonly __timer: unique symbol };

export interface Clock {
  nowMs(): number;
  /** Nanoseconds since the epoch (wall clock, with sub-millisecond precision from the monotonic clock). */
  nowNs(): bigint;
  /** Milliseconds from an arbitrary origin; never goes back, so durations are measured with it. */
  monoMs(): number;
  /**
   * Calls `callback` once, `ms` from now. A `background` timer alone does not keep the process alive
   * (a link's tick); a waiting request's deadline does.
   */
  setTimeout(callback: () => void, ms: number, options?: TimerOptions): TimerHandle;
  /** Calls `callback` every `ms` until cleared. */
  setInterval(callback: () => void, ms: number, options?: TimerOptions): TimerHandle;
  /** Stops a timer or an interval; harmless for one that has fired or was cleared. */
  clearTimeout(handle: TimerHandle | undefined): void;
}

export interface TimerOptions {
  background?: boolean;
}

type NodeTimer = ReturnType<typeof globalThis.setTimeout>;

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  nowNs: () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e3)) * 1000n,
  monoMs: () => performance.now(),
  setTimeout(callback, ms, options) {
    const t = globalThis.setTimeout(callback, ms);
    if (options?.background) t.unref();
    return t as unknown as TimerHandle;
  },
  setInterval(callback, ms, options) {
    const t = globalThis.setInterval(callback, ms);
    if (options?.background) t.unref();
    return t as unknown as TimerHandle;
  },
  // Node's clearTimeout clears intervals too.
  clearTimeout: (handle) => globalThis.clearTimeout(handle as unknown as NodeTimer | undefined),
};
