// The in-process transport: a simulated network between the local region and one replica, with one-way
// latency and jitter in each direction, in order, and cuts that lose whatever is in flight.
import type { Ack, Batch, LinkConditions, ReplicaEndpoint, Transport } from './transport.js';

export interface SimulatedTransportOptions {
  latencyMs: number;
  jitterMs: number;
  /** uniform in [0, 1); injectable so tests can fix the jitter */
  random?: () => number;
  warn?(message: string): void;
}

/**
 * A one-way FIFO with delay. Jitter never reorders: an item is delivered no earlier than the one before
 * it, as on a single ordered connection.
 */
function createPipe<T>(deliver: (item: T) => void) {
  let queue: Array<{ at: number; item: T }> = [];
  let head = 0;
  let last = 0;
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined;

  const run = () => {
    timer = undefined;
    const now = performance.now();
    while (head < queue.length && (queue[head] as { at: number }).at <= now) {
      const { item } = queue[head++] as { item: T };
      deliver(item);
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
    schedule();
  };

  const schedule = () => {
    if (timer !== undefined || head >= queue.length) return;
    const wait = (queue[head] as { at: number }).at - performance.now();
    timer = wait <= 0 ? setImmediate(run) : setTimeout(run, Math.ceil(wait));
  };

  return {
    push(item: T, delayMs: number) {
      const at = Math.max(performance.now() + delayMs, last);
      last = at;
      queue.push({ at, item });
      schedule();
    },
    clear() {
      if (timer !== undefined) {
        clearTimeout(timer as NodeJS.Timeout);
        clearImmediate(timer as NodeJS.Immediate);
      }
      timer = undefined;
      queue = [];
      head = 0;
      last = 0;
    },
  };
}

export function createSimulatedTransport(replica: ReplicaEndpoint, options: SimulatedTransportOptions): Transport {
  const random = options.random ?? Math.random;
  const conditions: LinkConditions = { up: true, latencyMs: options.latencyMs, jitterMs: options.jitterMs };
  let onAck: (ack: Ack) => void = () => {};
  let closed = false;
  // Bumped by every cut: an acknowledgement of a batch delivered before the cut is lost with the connection.
  let generation = 0;
  const delay = () => conditions.latencyMs + (conditions.jitterMs > 0 ? random() * conditions.jitterMs : 0);

  const acks = createPipe<Ack>((ack) => onAck(ack));
  const batches = createPipe<Batch>((batch) => {
    const sentIn = generation;
    replica.receive(batch).then(
      (ack) => {
        if (!closed && conditions.up && sentIn === generation) acks.push(ack, delay());
      },
      (error: unknown) => options.warn?.(`replica refused a batch of ${batch.org}: ${String(error)}`),
    );
  });

  return {
    send(batch) {
      if (closed || !conditions.up) return;
      batches.push(batch, delay());
    },
    onAck(listener) {
      onAck = listener;
    },
    conditions: () => ({ ...conditions }),
    setConditions(change) {
      if (change.latencyMs !== undefined) conditions.latencyMs = change.latencyMs;
      if (change.jitterMs !== undefined) conditions.jitterMs = change.jitterMs;
      if (change.up === false && conditions.up) {
        conditions.up = false;
        generation++;
        batches.clear();
        acks.clear();
      } else if (change.up === true) {
        conditions.up = true;
      }
      return { ...conditions };
    },
    close() {
      closed = true;
      generation++;
      batches.clear();
      acks.clear();
    },
  };
}
