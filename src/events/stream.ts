// Fans each organization's events out to its subscribers: replay from the durable log, then live, with no gap
// and no duplicate at the seam; bounded send buffers, and slow consumers cut off with the offset to resume from.
//
// The seam: a subscriber in catch-up reads the log only up to the durable head, and the head moves only in
// publish(), which runs synchronously after each durable commit and delivers that commit to every live
// subscriber. So a subscriber that has read up to the head and turns live in the same tick gets the next
// commit from publish(): nothing between the two, nothing twice. Each subscriber also keeps `next`, the offset
// it must send next, and never sends an offset below it.
//
// Live subscribers that share a format and a filter form a group joined to one socket topic, and a commit is
// broadcast to the group once per frame (uWebSockets.js publishes natively) rather than sent to each socket:
// with a hundred subscribers the per-socket work left in JavaScript is one buffered() check per commit. A member
// whose queue cannot take the whole commit leaves the topic for that commit and is served frame by frame, so the
// cut-off happens at the same frame as before. uWebSockets.js queues what is published and drains it as each
// event-loop turn ends, each socket corked: every commit that finished in the turn reaches a socket together, in one
// write per 16 KB (its cork buffer, about 28 PersonCreated JSON frames; past it the buffer is written and refilled),
// the least it can do with one WebSocket message per event. bench/events.ts --syscalls counts those writes.
import type { EventLog, LoggedEvent } from './log.js';

/** What the stream needs of a WebSocket; the front adapts uWebSockets.js to it. */
export interface Sink {
  /** Queues one frame: a text frame (UTF-8) or a binary one. */
  send(frame: Uint8Array, binary: boolean): void;
  /** Bytes queued and not yet written to the socket. */
  buffered(): number;
  /** Runs fn with the socket corked, so that its sends leave together: one write per 16 KB (uWebSockets.js's cork buffer). */
  cork(fn: () => void): void;
  /** Sends a close frame after what is queued. closed() is called before it returns or soon after. */
  close(code: number, reason: string): void;
  /** Joins a topic: broadcast() to it reaches this socket, in order with its own sends. */
  join(topic: string): void;
  /** Leaves a topic joined; what was broadcast before is still delivered first. */
  leave(topic: string): void;
  /** Queues one frame on every socket joined to the topic, this one included. */
  broadcast(topic: string, frame: Uint8Array, binary: boolean): void;
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
  encodeProtobufFrame(offset: number, eventName: string, event: Record<string, unknown>, chain: Uint8Array | undefined): Uint8Array;
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
  /** the group whose topic it has joined, while live */
  group: Group | undefined;
}

/** Live subscribers of one organization with the same format and filter: one topic, one broadcast per frame. */
interface Group {
  readonly key: string;
  readonly topic: string;
  readonly format: StreamFormat;
  readonly types: ReadonlySet<string> | undefined;
  readonly members: Set<Subscriber>;
}

interface OrgSubscribers {
  readonly all: Set<Subscriber>;
  readonly groups: Map<string, Group>;
}

/** The format and filter as a key: subscribers with equal keys receive the same frames. */
function groupKey(request: SubscriptionRequest): string {
  return `${request.format} ${request.types === undefined ? '*' : [...request.types].sort().join(',')}`;
}

function eventName(event: Record<string, unknown>): string {
  return (event['event_metadata'] as { event_name?: string } | undefined)?.event_name ?? '';
}

/** `{offset, chain, event}`; chain is the lowercase hex of the event's chain link (left out where there is none). */
export function encodeJsonFrame(offset: number, event: Record<string, unknown>, chain?: Uint8Array): Uint8Array {
  const link = chain === undefined ? '' : `"chain":"${Buffer.from(chain.buffer, chain.byteOffset, chain.byteLength).toString('hex')}",`;
  return Buffer.from(`{"offset":${offset},${link}"event":${JSON.stringify(event)}}`);
}

export function createEventStream(deps: EventStreamDeps): EventStream {
  const byOrg = new Map<string, OrgSubscribers>();
  // Catch-up stops queueing past this and waits for a drain; well below the live limit, so a subscriber that has
  // just turned live has room for a burst.
  const highWater = Math.max(16 * 1024, Math.min(1024 * 1024, deps.maxBuffer / 4));
  let total = 0;

  function encodeProtobuf(org: string, e: LoggedEvent, name: string): Uint8Array | undefined {
    try {
      return deps.encodeProtobufFrame(e.offset, name, e.event, e.chain);
    } catch (error) {
      deps.warn(`event ${e.offset} of ${org} (${name}) does not encode as protobuf and is skipped: ${String(error)}`);
      return undefined;
    }
  }

  function frameOf(sub: Subscriber, e: LoggedEvent, name: string): Uint8Array | undefined {
    return sub.request.format === 'json' ? encodeJsonFrame(e.offset, e.event, e.chain) : encodeProtobuf(sub.request.org, e, name);
  }

  /**
   * Sends a commit's frames to one live subscriber until one would take its queue past the bound; false then,
   * with `next` at the first offset not sent.
   */
  function sendAlone(
    sub: Subscriber,
    events: readonly LoggedEvent[],
    names: readonly string[],
    frameAt: (i: number, format: StreamFormat) => Uint8Array | undefined,
  ): boolean {
    const binary = sub.request.format === 'protobuf';
    let fits = true;
    sub.sink.cork(() => {
      for (let i = 0; i < events.length; i++) {
        const e = events[i] as LoggedEvent;
        if (e.offset < sub.next) continue;
        const name = names[i] as string;
        const frame = wants(sub, name) ? frameAt(i, sub.request.format) : undefined;
        if (frame) {
          if (sub.sink.buffered() + frame.byteLength > deps.maxBuffer) {
            fits = false;
            return;
          }
          sub.sink.send(frame, binary);
        }
        sub.next = e.offset + 1;
      }
    });
    return fits;
  }

  function wants(sub: Subscriber, name: string): boolean {
    return sub.request.types === undefined || sub.request.types.has(name);
  }

  /** Joins the group of its format and filter; from now on publish() delivers to it. */
  function goLive(sub: Subscriber): void {
    sub.mode = 'live';
    const org = byOrg.get(sub.request.org);
    if (!org) return;
    const key = groupKey(sub.request);
    let group = org.groups.get(key);
    if (!group) {
      group = { key, topic: `events ${sub.request.org} ${key}`, format: sub.request.format, types: sub.request.types, members: new Set() };
      org.groups.set(key, group);
    }
    join(sub, group);
  }

  function join(sub: Subscriber, group: Group): void {
    sub.group = group;
    group.members.add(sub);
    sub.sink.join(group.topic);
  }

  function leave(sub: Subscriber): void {
    const group = sub.group;
    if (!group) return;
    sub.group = undefined;
    group.members.delete(sub);
    sub.sink.leave(group.topic);
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
    const org = byOrg.get(sub.request.org);
    // The socket leaves its topics as it closes: only the stream's own records change here.
    const group = sub.group;
    sub.group = undefined;
    if (group) {
      group.members.delete(sub);
      if (group.members.size === 0) org?.groups.delete(group.key);
    }
    org?.all.delete(sub);
    if (org?.all.size === 0) byOrg.delete(sub.request.org);
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
      goLive(sub);
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
        group: undefined,
      };
      let org = byOrg.get(request.org);
      if (!org) byOrg.set(request.org, (org = { all: new Set(), groups: new Map() }));
      org.all.add(sub);
      total++;
      if (sub.mode === 'live') goLive(sub);
      else schedule(sub);
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
      const subs = byOrg.get(org);
      if (!subs || events.length === 0) return;
      // Each event is encoded at most once per format for this commit, however many subscribers get it.
      const names = events.map((e) => eventName(e.event));
      const json: Array<Uint8Array | undefined> = [];
      const protobuf: Array<Uint8Array | null | undefined> = [];
      const frameAt = (i: number, format: StreamFormat): Uint8Array | undefined => {
        const e = events[i] as LoggedEvent;
        if (format === 'json') return (json[i] ??= encodeJsonFrame(e.offset, e.event, e.chain));
        if (protobuf[i] === undefined) protobuf[i] = encodeProtobuf(org, e, names[i] as string) ?? null;
        return protobuf[i] ?? undefined;
      };
      const firstOffset = (events[0] as LoggedEvent).offset;
      const next = (events.at(-1) as LoggedEvent).offset + 1;
      const slow: Subscriber[] = [];

      for (const group of [...subs.groups.values()]) {
        const binary = group.format === 'protobuf';
        const frames: Uint8Array[] = [];
        let bytes = 0;
        for (let i = 0; i < events.length; i++) {
          if (group.types !== undefined && !group.types.has(names[i] as string)) continue;
          const frame = frameAt(i, group.format);
          if (frame) {
            frames.push(frame);
            bytes += frame.byteLength;
          }
        }
        // A member whose queue cannot take the whole commit is served alone, frame by frame, up to its bound; so is
        // one that asked for a `from` past the head and is not there yet.
        const alone: Subscriber[] = [];
        if (bytes > 0) for (const sub of group.members) if (sub.next > firstOffset || sub.sink.buffered() + bytes > deps.maxBuffer) alone.push(sub);
        for (const sub of alone) leave(sub);
        const first = group.members.values().next().value as Subscriber | undefined;
        if (first) for (const frame of frames) first.sink.broadcast(group.topic, frame, binary);
        // The members left were all at the commit's first offset; now they are past its last.
        for (const sub of group.members) if (sub.next < next) sub.next = next;
        for (const sub of alone) {
          if (sendAlone(sub, events, names, frameAt)) {
            join(sub, group);
          } else slow.push(sub);
        }
        if (group.members.size === 0) subs.groups.delete(group.key);
      }
      // Closed after the loop over the groups they leave.
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
      for (const sub of [...(byOrg.get(org)?.all ?? [])]) close(sub, code, why);
    },

    closeAll(code, why) {
      for (const org of [...byOrg.values()]) for (const sub of [...org.all]) close(sub, code, why);
    },

    count: () => total,
  };
  return stream;
}
