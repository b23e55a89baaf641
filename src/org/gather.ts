// The organization actor's mailbox: commands queue while a commit is in flight and go as the next batch,
// gathered for a moment under load so that one durable commit carries many of them.
/** A batch this large commits at once; below it, gather waits for more while they keep arriving. */
export const GATHER_MIN = 64;
/** gather never holds a batch back longer than this (ms): well under a durable commit's p99 on a busy disk */
export const GATHER_MAX_MS = 2;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface GatheringQueue<T> {
  push(item: T): void;
  readonly length: number;
  /** a batch is being gathered or committed */
  readonly draining: boolean;
}

/**
 * Hands queued items to `commit` one batch at a time, one batch in flight. The first batch after a quiet spell
 * starts at the end of the I/O turn that queued it, not at once: every request the same poll delivered joins it,
 * instead of the first one paying a commit of its own while the rest queue. Later batches are items that arrived
 * while the last commit was in flight: under load more are on their way (answers of that commit bring their
 * clients' next requests), so the batch grows while each event-loop turn adds to it, up to GATHER_MIN items or
 * `gatherMaxMs`. Once it holds half as many as the last batch, a turn that adds nothing ends it: the load is
 * light, and waiting would only add latency. Before that, quiet turns are the round trip of the clients the last
 * commit answered; not waiting them out made closed-loop load alternate one full commit with one of the few
 * requests that arrived during it, twice the commits (and, fanned out, the socket writes) for the same work.
 * Saturated, a commit per 64 requests rather than per few halves the CPU the flushes take (bench/mint-costs.ts
 * shows requests per commit). `commit` answers its own items, failures included.
 */
export function createGatheringQueue<T>(commit: (batch: T[]) => Promise<void>, gatherMaxMs = GATHER_MAX_MS): GatheringQueue<T> {
  let queue: T[] = [];
  let draining = false;
  let lastBatch = 0;

  async function gather(): Promise<void> {
    const deadline = performance.now() + gatherMaxMs;
    const enough = Math.min(GATHER_MIN, lastBatch >> 1);
    let seen = queue.length;
    while (seen < GATHER_MIN && performance.now() < deadline) {
      await nextTurn();
      if (queue.length === seen && seen >= enough) return;
      seen = queue.length;
    }
  }

  async function drain(): Promise<void> {
    try {
      let first = true;
      while (queue.length > 0) {
        if (!first) await gather();
        first = false;
        const batch = queue;
        queue = [];
        lastBatch = batch.length;
        await commit(batch);
      }
    } finally {
      draining = false;
    }
  }

  return {
    push(item) {
      queue.push(item);
      if (!draining) {
        draining = true;
        setImmediate(() => void drain());
      }
    },
    get length() {
      return queue.length;
    },
    get draining() {
      return draining;
    },
  };
}
