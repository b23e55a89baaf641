// One webhook's event deliveries as a state machine: a head-of-line queue with one delivery in flight.
// pending finds the next delivery, in_flight makes one attempt, retry_wait backs off, and each delivery ends
// delivered or dead (dead-lettered) before the next is taken. The machine holds no I/O: its driver does.
import { assign, createActor, fromPromise, setup, type Actor } from 'xstate';
import { systemClock, type Clock } from '../lib/clock.js';

export interface DeliveryItem {
  /** the event's offset in the organization's event log */
  offset: number;
  event_name: string;
  /** the event in proto3 JSON */
  event: Record<string, unknown>;
  /** log: the next matching event after the webhook's position; dead_letter: a dead letter queued for retry */
  source: 'log' | 'dead_letter';
}

export type AttemptResult = { ok: true } | { ok: false; error: string };

/** What the machine asks of the outbox for one webhook. */
export interface DeliveryDriver {
  /** attempts per delivery before it is dead-lettered */
  readonly limit: number;
  /** Whether next() may find something (queued retries, events past the position); synchronous. */
  hasWork(): boolean;
  /** The next delivery; 'more' when a bounded scan found none yet and has events left to look at. */
  next(): DeliveryItem | 'more' | undefined;
  /** One attempt (1-based); the signal aborts it when the machine is stopped. */
  attempt(item: DeliveryItem, attempt: number, signal: AbortSignal): Promise<AttemptResult>;
  /** The delivery succeeded: move past it. */
  delivered(item: DeliveryItem, attempts: number): void;
  /** The delivery ran out of attempts: store it as a dead letter durably, then move past it. */
  bury(item: DeliveryItem, attempts: number, lastError: string): Promise<void>;
  /** The wait after the failures-th failed attempt. */
  retryDelayMs(failures: number): number;
  /** The wait after the outbox itself failed (a read or a dead-letter write), before pending looks again. */
  readonly pauseMs: number;
  failed(error: unknown): void;
}

interface Context {
  driver: DeliveryDriver;
  item: DeliveryItem | undefined;
  /** the attempt in flight, or the number of attempts made while waiting */
  attempt: number;
  error: string;
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

export const deliveryMachine = setup({
  types: {
    context: {} as Context,
    input: {} as { driver: DeliveryDriver },
    events: {} as { type: 'work' },
  },
  actors: {
    next: fromPromise<DeliveryItem | 'more' | undefined, { driver: DeliveryDriver }>(async ({ input }) => input.driver.next()),
    attempt: fromPromise<AttemptResult, { driver: DeliveryDriver; item: DeliveryItem; attempt: number }>(({ input, signal }) =>
      input.driver.attempt(input.item, input.attempt, signal),
    ),
    bury: fromPromise<void, { driver: DeliveryDriver; item: DeliveryItem; attempt: number; error: string }>(({ input }) =>
      input.driver.bury(input.item, input.attempt, input.error),
    ),
  },
  guards: {
    hasWork: ({ context }) => context.driver.hasWork(),
    exhausted: ({ context }) => context.attempt >= context.driver.limit,
  },
  delays: {
    backoff: ({ context }) => context.driver.retryDelayMs(context.attempt),
    pause: ({ context }) => context.driver.pauseMs,
  },
}).createMachine({
  id: 'webhook-delivery',
  context: ({ input }) => ({ driver: input.driver, item: undefined, attempt: 0, error: '' }),
  initial: 'idle',
  states: {
    // Checked on every entry as well as on `work`, so an event committed while pending looked is not missed.
    idle: {
      always: { guard: 'hasWork', target: 'pending' },
      on: { work: { guard: 'hasWork', target: 'pending' } },
    },
    pending: {
      invoke: {
        src: 'next',
        input: ({ context }) => ({ driver: context.driver }),
        onDone: [
          {
            guard: ({ event }) => typeof event.output === 'object',
            target: 'in_flight',
            actions: assign({ item: ({ event }) => event.output as DeliveryItem, attempt: 1, error: '' }),
          },
          { guard: ({ event }) => event.output === 'more', target: 'pending', reenter: true },
          { target: 'idle' },
        ],
        onError: { target: 'paused', actions: ({ context, event }) => context.driver.failed(event.error) },
      },
    },
    in_flight: {
      invoke: {
        src: 'attempt',
        input: ({ context }) => ({ driver: context.driver, item: context.item as DeliveryItem, attempt: context.attempt }),
        onDone: [
          { guard: ({ event }) => event.output.ok, target: 'delivered' },
          { guard: 'exhausted', target: 'dead', actions: assign({ error: ({ event }) => (event.output.ok ? '' : event.output.error) }) },
          { target: 'retry_wait', actions: assign({ error: ({ event }) => (event.output.ok ? '' : event.output.error) }) },
        ],
        onError: [
          { guard: 'exhausted', target: 'dead', actions: assign({ error: ({ event }) => describe(event.error) }) },
          { target: 'retry_wait', actions: assign({ error: ({ event }) => describe(event.error) }) },
        ],
      },
    },
    retry_wait: {
      after: { backoff: { target: 'in_flight', actions: assign({ attempt: ({ context }) => context.attempt + 1 }) } },
    },
    delivered: {
      entry: ({ context }) => context.driver.delivered(context.item as DeliveryItem, context.attempt),
      always: { target: 'pending', actions: assign({ item: undefined, attempt: 0, error: '' }) },
    },
    dead: {
      invoke: {
        src: 'bury',
        input: ({ context }) => ({ driver: context.driver, item: context.item as DeliveryItem, attempt: context.attempt, error: context.error }),
        onDone: { target: 'pending', actions: assign({ item: undefined, attempt: 0, error: '' }) },
        // Not stored: the delivery is not passed over; pending finds it again and it gets a fresh round.
        onError: { target: 'paused', actions: ({ context, event }) => context.driver.failed(event.error) },
      },
    },
    paused: {
      after: { pause: 'pending' },
    },
  },
});

export type DeliveryActor = Actor<typeof deliveryMachine>;

/** The back-off and the pause run on `clock` (xstate's delayed transitions take it as their scheduler). */
export function startDelivery(driver: DeliveryDriver, clock: Pick<Clock, 'setTimeout' | 'clearTimeout'> = systemClock): DeliveryActor {
  return createActor(deliveryMachine, { input: { driver }, clock }).start();
}
