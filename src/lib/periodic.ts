// A background job run every so often: one pass at a time (a call while a pass runs gets that pass), on an
// interval that keeps no process alive, and a stop that waits for the pass in flight.
export interface Periodic<T> {
  /** A pass now, or the one already running. */
  run(): Promise<T>;
  /** Runs a pass every intervalMs from now on; 0 (or less) never. A second start changes nothing. */
  start(intervalMs: number): void;
  stop(): Promise<void>;
}

export function periodic<T>(pass: () => Promise<T>): Periodic<T> {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<T> | undefined;
  const run = (): Promise<T> =>
    (running ??= pass().finally(() => {
      running = undefined;
    }));
  return {
    run,
    start(intervalMs) {
      if (timer || intervalMs <= 0) return;
      timer = setInterval(() => void run(), intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}
