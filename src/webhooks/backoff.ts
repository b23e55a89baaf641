// How long a failed event delivery waits before its next attempt: exponential, capped, with jitter.
export interface Backoff {
  baseMs: number;
  maxMs: number;
}

/**
 * The wait after the `failures`-th failed attempt of one event: base · 2^(failures−1), capped at max, of which
 * the upper half is random ("equal jitter"). The jitter spreads the retries of many webhooks whose receiver
 * came back at once; the fixed half keeps the wait from collapsing towards zero.
 */
export function retryDelayMs(failures: number, backoff: Backoff, random: () => number): number {
  const exponential = backoff.baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 40);
  const ceiling = Math.min(backoff.maxMs, exponential);
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}
