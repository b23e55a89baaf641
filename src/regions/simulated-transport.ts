// The in-process transport: a simulated network between the local region and one replica, with one-way
// latency and jitter in each direction, in order, and cuts that lose whatever is in flight.
import { systemClock, type Clock, type TimerHandle } from '../lib/clock.js';
import type { Ack, Batch, FaultInjection, LinkConditions, ReplicaEndpoint, Transport } from './transport.js';

export type SimulatedTransport = Transport & FaultInjection;

export interface SimulatedTransportOptions {
  latencyMs: number;
  jitterMs: number;
  /** the delays run on it; the system clock by default */
  clock?: Pick<Clock, 'monoMs' | 'setTimeout' | 'clearTimeout'>;
  /** uniform in [0, 1); injectable so tests can fix the jitter */
  random?: () => number;
  warn?(message: string): void;
}

/**
 * A one-way FIFO with delay. Jitter never reorders: an item is delivered no earlier than the one before
 * it, as on a single ordered connection.
 */
function createPipe<T>(clock: Pick<Clock, 'monoMs' | 'setTimeout' | 'clearTimeout'>, deliver: (item: T) => void) {
  let queue: Array<{ at: number; item: T }> = [];
  let head = 0;
  let last = 0;
  let timer: TimerHandle | undefined;
  // What is due already goes on the next turn of the event loop: no time passes, whatever the clock.
  let immediate: NodeJS.Immediate | undefined;

  const run = () => {
    timer = undefined;
    immediate = undefined;
    const now = clock.monoMs();
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
    if (timer !== undefined || immediate !== undefined || head >= queue.length) return;
    const wait = (queue[head] as { at: number }).at - clock.monoMs();
    if (wait <= 0) immediate = setImmediate(run);
    else timer = clock.setTimeout(run, Math.ceil(wait));
  };

  return {
    push(item: T, delayMs: number) {
      const at = Math.max(clock.monoMs() + delayMs, last);
      last = at;
      queue.push({ at, item });
      schedule();
    },
    clear() {
      clock.clearTimeout(timer);
      if (immediate !== undefined) clearImmediate(immediate);
      timer = undefined;
      immediate = undefined;
      queue = [];
      head = 0;
      last = 0;
    },
  };
}

export function createSimulatedTransport(replica: ReplicaEndpoint, options: SimulatedTransportOptions): SimulatedTransport {
  const random = options.random ?? Math.random;
  const clock = options.clock ?? systemClock;
  const conditions: LinkConditions = { up: true, latencyMs: options.latencyMs, jitterMs: options.jitterMs };
  let onAck: (ack: Ack) => void = () => {};
  let closed = false;
  // Bumped by every cut: an acknowledgement of a batch delivered before the cut is lost with the connection.
  let generation = 0;
  const delay = () => conditions.latencyMs + (conditions.jitterMs > 0 ? random() * conditions.jitterMs : 0);

  const acks = createPipe<Ack>(clock, (ack) => onAck(ack));
  const batches = createPipe<Batch>(clock, (batch) => {
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
