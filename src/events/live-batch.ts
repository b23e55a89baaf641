// When a live topic's frames leave: at once on a quiet topic, joined with the next commits' on a busy one.
//
// Each broadcast costs every socket of the topic one write (one send, one loopback delivery), whatever it holds; at
// a hundred subscribers those writes, not the encoding, are what the fan-out costs. So a topic broadcast less than
// `flushMs` ago holds the next commits' frames and broadcasts them together once `flushMs` has passed since the
// last broadcast: under load a socket gets one write per `flushMs` instead of one per commit, and a frame waits at
// most `flushMs`. A quiet topic (nothing broadcast for `flushMs`) sends a commit's frames at once, with no wait.
// One timer per topic, none per socket.

export interface LiveBatch {
  /** bytes held and not yet broadcast: each member's queue will grow by them */
  readonly heldBytes: number;
  /** Broadcasts the frames now if the topic is quiet, else holds them behind what is already held. */
  push(frames: readonly Uint8Array[], bytes: number): void;
  /** Broadcasts what is held now: before the topic's members change, so that none gets a frame twice or misses one. */
  flush(): void;
  /** Drops what is held: the topic has no member left. */
  cancel(): void;
}

export interface LiveBatchOptions {
  /** milliseconds a topic waits between broadcasts while busy; 0 broadcasts every commit at once */
  flushMs: number;
  now(): number;
  /** queues the frames, in order, on every socket of the topic */
  broadcast(frames: readonly Uint8Array[]): void;
}

export function createLiveBatch(o: LiveBatchOptions): LiveBatch {
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  /** when the topic was last broadcast to; -Infinity: never, so the first commit goes at once */
  let lastAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;

  function flush(): void {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (held.length === 0) return;
    const frames = held;
    held = [];
    heldBytes = 0;
    lastAt = o.now();
    o.broadcast(frames);
  }

  return {
    get heldBytes() {
      return heldBytes;
    },
    push(frames, bytes) {
      if (frames.length === 0) return;
      const now = o.now();
      if (held.length === 0 && now - lastAt >= o.flushMs) {
        lastAt = now;
        o.broadcast(frames);
        return;
      }
      for (const frame of frames) held.push(frame);
      heldBytes += bytes;
      if (timer === undefined) {
        timer = setTimeout(flush, Math.max(0, lastAt + o.flushMs - now));
        // Held frames never keep a stopping process alive: a closing subscriber is flushed first.
        timer.unref();
      }
    },
    flush,
    cancel() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      held = [];
      heldBytes = 0;
    },
  };
}
