// Driving a manual clock while real I/O (a replica's LMDB commits) completes: time moves only while no
// such work is outstanding, so what a test measures on the clock does not depend on the machine's speed.
import type { ManualClock } from '../../src/lib/manual-clock.js';
import type { Ack, Batch, ReplicaEndpoint } from '../../src/regions/transport.js';

/** A replica endpoint that counts the batches it has not answered yet. */
export function countingEndpoint(inner: ReplicaEndpoint, onBatch?: (batch: Batch) => void) {
  let outstanding = 0;
  const endpoint: ReplicaEndpoint = {
    receive(batch: Batch): Promise<Ack> {
      onBatch?.(batch);
      outstanding++;
      return inner.receive(batch).finally(() => outstanding--);
    },
  };
  return { endpoint, outstanding: () => outstanding };
}

/** Waits in real time (bounded) until no batch is outstanding and the event loop has turned. */
export async function settled(outstanding: () => number, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  do {
    await new Promise((r) => setTimeout(r, 1));
    if (performance.now() > deadline) throw new Error(`batches still outstanding after ${timeoutMs} ms`);
  } while (outstanding() > 0);
}

/**
 * Until `done()`: lets outstanding work settle, then moves the clock to its next timer. Fails when nothing
 * is left that could make `done()` true, or after `maxMs` of clock time.
 */
export async function driveUntil(clock: ManualClock, outstanding: () => number, done: () => boolean, what: string, maxMs = 60_000): Promise<void> {
  const limit = clock.monoMs() + maxMs;
  for (;;) {
    await settled(outstanding);
    if (done()) return;
    if (clock.monoMs() > limit) throw new Error(`still waiting for ${what} after ${maxMs} ms of clock time`);
    if (!clock.next()) {
      await settled(outstanding);
      if (done()) return;
      throw new Error(`nothing left to happen, and still waiting for ${what}`);
    }
  }
}
