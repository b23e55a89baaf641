// A clock that stands still until it is told to move: advance(ms) fires the timers that come due, in order,
// so tests (and simulations) see time pass without sleeping and without depending on the machine's speed.
import type { Clock, TimerHandle } from './clock.js';

export interface ManualClock extends Clock {
  /**
   * Moves time forward by `ms`, firing every timer due by then in order of due time (then of creation),
   * each with the clock reading its own due time. Timers set while advancing fire too if they come due.
   */
  advance(ms: number): void;
  /** Moves time to the next pending timer and fires what is due then; false when none is pending. */
  next(): boolean;
  /** Timers and intervals pending. */
  pending(): number;
}

interface Timer {
  at: number;
  seq: number;
  every: number | undefined;
  callback: () => void;
}

/** Starts at `startMs` on the wall clock (default 2026-01-01T00:00:00Z) and 0 on the monotonic one. */
export function createManualClock(startMs = Date.UTC(2026, 0, 1)): ManualClock {
  let mono = 0;
  let seq = 0;
  const timers = new Set<Timer>();

  const due = (until: number): Timer | undefined => {
    let first: Timer | undefined;
    for (const t of timers) if (t.at <= until && (!first || t.at < first.at || (t.at === first.at && t.seq < first.seq))) first = t;
    return first;
  };

  const fire = (t: Timer) => {
    if (t.every === undefined) timers.delete(t);
    else {
      t.at += t.every;
      t.seq = seq++;
    }
    t.callback();
  };

  const add = (callback: () => void, ms: number, every: number | undefined): TimerHandle => {
    // As with Node's timers, a delay below one is one, so a timer never fires within the call that set it.
    const delay = Math.max(1, Number.isFinite(ms) ? ms : 1);
    const t: Timer = { at: mono + delay, seq: seq++, every: every === undefined ? undefined : delay, callback };
    timers.add(t);
    return t as unknown as TimerHandle;
  };

  const advance = (ms: number): void => {
    if (!(ms >= 0)) throw new RangeError(`a clock cannot go back (advance(${ms}))`);
    const until = mono + ms;
    for (let t = due(until); t; t = due(until)) {
      mono = Math.max(mono, t.at);
      fire(t);
    }
    mono = until;
  };

  return {
    nowMs: () => startMs + Math.floor(mono),
    nowNs: () => BigInt(startMs) * 1_000_000n + BigInt(Math.round(mono * 1e6)),
    monoMs: () => mono,
    setTimeout: (callback, ms) => add(callback, ms, undefined),
    setInterval: (callback, ms) => add(callback, ms, ms),
    clearTimeout(handle) {
      if (handle) timers.delete(handle as unknown as Timer);
    },
    advance,
    next() {
      const first = due(Infinity);
      if (!first) return false;
      advance(first.at - mono);
      return true;
    },
    pending: () => timers.size,
  };
}
