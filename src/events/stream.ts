// Fans each organization's events out to its subscribers: replay from the durable log, then live, with no gap
// and no duplicate at the seam; bounded send buffers, and slow consumers cut off with the offset to resume from.
//
// The seam: a subscriber in catch-up reads the log only up to the durable head, and the head moves only in
// publish(), which runs synchronously after each durable commit and delivers that commit to every live
// subscriber. So a subscriber that has read up to the head and turns live in the same tick gets the next
// commit from publish(): nothing between the two, nothing twice. Each subscriber also keeps `next`, the offset
// it must send next, and never sends an offset below it.
import type { EventLog, LoggedEvent } from './log.js';

/** What the stream needs of a WebSocket; the front adapts uWebSockets.js to it. */
export interface Sink {
  /** Queues one frame: a text frame (UTF-8) or a binary one. */
  send(frame: Uint8Array, binary: boolean): void;
  /** Bytes queued and not yet written to the socket. */
  buffered(): number;
  /** Runs fn with the socket corked, so that its sends leave in one write. */
  cork(fn: () => void): void;
  /** Sends a close frame after what is queued. closed() is called before it returns or soon after. */
  close(code: number, reason: string): void;
}

export type StreamFormat = 'json' | 'protobuf';

export interface SubscriptionRequest {
  org: string;
  /** event message names to send; undefined sends all */
  types: ReadonlySet<string> | undefined;
  /** replay retained events from this offset first; undefined sends only live events */
  from: number | undefined;
  format: StreamFormat;
}

export interface Subscription {
  /** The socket's buffer drained: a paused catch-up resumes. */
  drained(): void;
  /** The socket closed, either way: the subscriber is forgotten. */
  closed(): void;
}

/** Close codes the stream uses; each reason ends with "resume with from=N", the first offset not sent. */
export const CLOSE_SLOW_CONSUMER = 4008;
export const CLOSE_KEY_ROTATED = 4001;
export const CLOSE_GOING_AWAY = 1001;

export interface EventStreamDeps {
  log: EventLog;
  encodeProtobufFrame(offset: number, eventName: string, event: Record<string, unknown>): Uint8Array;
  /** bytes a live subscriber may have queued; one more frame past it and it is cut off */
  maxBuffer: number;
  warn(message: string): void;
  /** counts cut-off subscribers */
  onSlowConsumer?(): void;
}

/** What the stream reads of a durable commit: the part of the organization actor's commit record it needs. */
export interface StreamedCommit {
  readonly org: string;
  readonly events: readonly LoggedEvent[];
  readonly keyRotated: boolean;
}

export interface EventStream {
  subscribe(request: SubscriptionRequest, sink: Sink): Subscription;
  /** Delivers one durable commit's events of an organization. */
  publish(org: string, events: readonly LoggedEvent[]): void;
  /** The commit bus's subscriber: publishes the commit's events, and ends the subscriptions a rotated key opened. */
  committed(commit: StreamedCommit): void;
  /** Closes every subscriber of the organization (its API key changed) or of all of them. */
  closeOrg(org: string, code: number, why: string): void;
  closeAll(code: number, why: string): void;
  count(): number;
}

/** Events read per catch-up step; one step runs, then the event loop gets a turn. */
const CATCH_UP_BATCH = 256;

interface Subscriber {
  readonly request: SubscriptionRequest;
  readonly sink: Sink;
  next: number;
  mode: 'catch-up' | 'live' | 'closed';
  /** catch-up waits for the socket to drain */
  paused: boolean;
  scheduled: boolean;
}

function eventName(event: Record<string, unknown>): string {
  return (event['event_metadata'] as { event_name?: string } | undefined)?.event_name ?? '';
}

export function encodeJsonFrame(offset: number, event: Record<string, unknown>): Uint8Array {
  return Buffer.from(`{"offset":${offset},"event":${JSON.stringify(event)}}`);
}

export function createEventStream(deps: EventStreamDeps): EventStream {
  const byOrg = new Map<string, Set<Subscriber>>();
  // Catch-up stops queueing past this and waits for a drain; well below the live limit, so a subscriber that has
  // just turned live has room for a burst.
  const highWater = Math.max(16 * 1024, Math.min(1024 * 1024, deps.maxBuffer / 4));
  let total = 0;

  function frameOf(sub: Subscriber, e: LoggedEvent, name: string): Uint8Array | undefined {
    if (sub.request.format === 'json') return encodeJsonFrame(e.offset, e.event);
    try {
      return deps.encodeProtobufFrame(e.offset, name, e.event);
    } catch (error) {
      deps.warn(`event ${e.offset} of ${sub.request.org} (${name}) does not encode as protobuf and is skipped: ${String(error)}`);
      return undefined;
    }
  }

  function wants(sub: Subscriber, name: string): boolean {
    return sub.request.types === undefined || sub.request.types.has(name);
  }

  function close(sub: Subscriber, code: number, why: string): void {
    if (sub.mode === 'closed') return;
    forget(sub);
    // At most 123 bytes of reason; these stay far below.
    sub.sink.close(code, `${why}; resume with from=${sub.next}`);
  }

  function forget(sub: Subscriber): void {
    if (sub.mode === 'closed') return;
    sub.mode = 'closed';
    total--;
    const set = byOrg.get(sub.request.org);
    set?.delete(sub);
    if (set?.size === 0) byOrg.delete(sub.request.org);
  }

  function schedule(sub: Subscriber): void {
    if (sub.scheduled || sub.mode !== 'catch-up') return;
    sub.scheduled = true;
    setImmediate(() => catchUp(sub));
  }

  function catchUp(sub: Subscriber): void {
    sub.scheduled = false;
    if (sub.mode !== 'catch-up') return;
    const { org } = sub.request;
    const batch = deps.log.read(org, sub.next, CATCH_UP_BATCH);
    // A first offset above `next` means those events are no longer retained (the requested `from` was older
    // than the oldest retained, or pruning overtook this subscriber): delivery continues from what is there,
    // and the jump in offsets tells the client what it missed.
    sub.sink.cork(() => {
      for (const e of batch) {
        const name = eventName(e.event);
        const frame = wants(sub, name) ? frameOf(sub, e, name) : undefined;
        if (frame) sub.sink.send(frame, sub.request.format === 'protobuf');
        sub.next = e.offset + 1;
      }
    });
    const head = deps.log.head(org);
    if (batch.length === 0) sub.next = Math.max(sub.next, head + 1);
    if (sub.next > head) {
      // Caught up, in the same tick as the last read: the next publish() carries offset head + 1.
      sub.mode = 'live';
      return;
    }
    if (sub.sink.buffered() > highWater) sub.paused = true;
    else schedule(sub);
  }

  const stream: EventStream = {
    subscribe(request, sink) {
      const head = deps.log.head(request.org);
      const sub: Subscriber = {
        request,
        sink,
        next: request.from ?? head + 1,
        mode: request.from === undefined ? 'live' : 'catch-up',
        paused: false,
        scheduled: false,
      };
      let set = byOrg.get(request.org);
      if (!set) byOrg.set(request.org, (set = new Set()));
      set.add(sub);
      total++;
      schedule(sub);
      return {
        drained() {
          if (sub.mode !== 'catch-up' || !sub.paused || sink.buffered() > highWater / 2) return;
          sub.paused = false;
          schedule(sub);
        },
        closed: () => forget(sub),
      };
    },

    publish(org, events) {
      const set = byOrg.get(org);
      if (!set || events.length === 0) return;
      // Each event is encoded at most once per format for this commit, however many subscribers get it.
      const names = events.map((e) => eventName(e.event));
      const json: Array<Uint8Array | undefined> = [];
      const protobuf: Array<Uint8Array | null | undefined> = [];
      const slow: Subscriber[] = [];
      for (const sub of set) {
        if (sub.mode !== 'live') continue;
        const binary = sub.request.format === 'protobuf';
        sub.sink.cork(() => {
          for (let i = 0; i < events.length; i++) {
            const e = events[i] as LoggedEvent;
            if (e.offset < sub.next) continue;
            const name = names[i] as string;
            if (!wants(sub, name)) {
              sub.next = e.offset + 1;
              continue;
            }
            let frame: Uint8Array | undefined;
            if (binary) {
              if (protobuf[i] === undefined) protobuf[i] = frameOf(sub, e, name) ?? null;
              frame = protobuf[i] ?? undefined;
            } else frame = json[i] ??= encodeJsonFrame(e.offset, e.event);
            if (frame) {
              if (sub.sink.buffered() + frame.byteLength > deps.maxBuffer) {
                slow.push(sub);
                return;
              }
              sub.sink.send(frame, binary);
            }
            sub.next = e.offset + 1;
          }
        });
      }
      // Closed outside the cork, and after the loop over the set they leave.
      for (const sub of slow) {
        deps.onSlowConsumer?.();
        close(sub, CLOSE_SLOW_CONSUMER, 'slow consumer');
      }
    },

    committed(commit) {
      stream.publish(commit.org, commit.events);
      // The key a subscriber presented stops working at once; so does its subscription.
      if (commit.keyRotated) stream.closeOrg(commit.org, CLOSE_KEY_ROTATED, 'API key rotated');
    },

    closeOrg(org, code, why) {
      for (const sub of [...(byOrg.get(org) ?? [])]) close(sub, code, why);
    },

    closeAll(code, why) {
      for (const set of [...byOrg.values()]) for (const sub of [...set]) close(sub, code, why);
    },

    count: () => total,
  };
  return stream;
}
