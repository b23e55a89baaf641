// Each organization's event log as readers see it: durable events at consecutive offsets from 1, read from
// any retained offset, and pruned to the configured retention by a periodic job in bounded batches. Pruning
// never removes an event that a webhook has still to deliver.
import type { EventRetention } from '../config.js';
import type { Wal } from '../wal/log.js';
import { parseRfc3339 } from '../lib/time-text.js';
import { int64AsDecimal } from './int64-json.js';
import { periodic } from '../lib/periodic.js';

export interface LoggedEvent {
  offset: number;
  event: Record<string, unknown>;
  /** the event's link of the organization's chain (events/chain.ts); absent only where none was ever computed */
  chain?: Buffer;
}

export interface EventLogDeps {
  wal: Wal;
  /**
   * The last offset of the organization whose commit is durable (0 before its first event). Readers never see
   * past it, even though LMDB shows a commit to readers a moment before its flush completes: an event that a
   * crash could still take back is never handed out.
   */
  head(org: string): number;
  organizations(): Iterable<string>;
  retention: EventRetention;
  nowMs(): number;
  warn(message: string): void;
  /**
   * The oldest offset of the organization that must be kept whatever the retention says (the oldest event a
   * webhook has not yet delivered), or undefined when nothing holds the log back.
   */
  keepFrom?(org: string): number | undefined;
  /** events removed (or, for age retention, inspected) per LMDB transaction; default 1000 */
  batchSize?: number;
}

export interface EventLog {
  head(org: string): number;
  /** The oldest offset still retained; head + 1 when nothing is (nothing emitted yet, or everything aged out). */
  oldest(org: string): number;
  /** Up to `limit` events with offsets from `from` up to the head, in order. */
  read(org: string, from: number, limit: number): LoggedEvent[];
  /** One pruning pass over every organization; resolves to the number of events removed. */
  prune(): Promise<number>;
  /** Runs prune() every intervalMs (never two passes at once) until stop(). */
  startPruning(intervalMs: number): void;
  stop(): Promise<void>;
}

/**
 * A record kept as JSON (not protobuf) by an earlier version may hold a 64-bit integer as a number, as its
 * emitter gave it; readers get it as events are emitted now, a decimal string.
 */
function asEmittedNow(e: LoggedEvent): LoggedEvent {
  const name = (e.event['event_metadata'] as { event_name?: unknown } | undefined)?.event_name;
  if (typeof name !== 'string') return e;
  const event = int64AsDecimal(name, e.event);
  return event === e.event ? e : { ...e, event };
}

export function createEventLog(deps: EventLogDeps): EventLog {
  const batchSize = deps.batchSize ?? 1000;

  function oldest(org: string): number {
    const head = deps.head(org);
    const first = deps.wal.firstEventOffset(org);
    return first === undefined || first > head ? head + 1 : first;
  }

  function read(org: string, from: number, limit: number): LoggedEvent[] {
    const head = deps.head(org);
    if (from > head || limit <= 0) return [];
    const events = (deps.wal.events(org, from, Math.min(limit, head - from + 1)) as LoggedEvent[]).map(asEmittedNow);
    // Below a pruned stretch the range starts later than `from`, and the count alone could reach past the head.
    const last = events.at(-1);
    return last !== undefined && last.offset > head ? events.filter((e) => e.offset <= head) : events;
  }

  /** Removes everything below `below` in transactions of at most batchSize keys, awaiting each: between them
   * the event loop (requests, commits, subscribers) runs. */
  async function removeBelow(org: string, below: number): Promise<number> {
    let removed = 0;
    for (;;) {
      const n = await deps.wal.removeEvents(org, below, batchSize);
      removed += n;
      if (n < batchSize) return removed;
    }
  }

  async function pruneOrg(org: string): Promise<number> {
    const first = deps.wal.firstEventOffset(org);
    if (first === undefined) return 0;
    const head = deps.head(org);
    // Read once, before removing anything: a webhook's position only moves forward, so this stays safe.
    const keep = deps.keepFrom?.(org) ?? Infinity;
    const retention = deps.retention;
    if (retention.kind === 'count') {
      const below = Math.min(head - retention.count + 1, keep);
      return below > first ? removeBelow(org, below) : 0;
    }
    // Offsets follow commit order, so timestamps rise with them (up to wall-clock steps): walk from the oldest,
    // one batch at a time, and stop at the first event young enough to keep.
    const cutoffMs = deps.nowMs() - retention.ms;
    let removed = 0;
    let at = first;
    for (;;) {
      const batch = read(org, at, batchSize);
      const young = batch.find((e) => !isOlderThan(e.event, cutoffMs));
      const below = Math.min(young?.offset ?? (batch.at(-1)?.offset ?? at - 1) + 1, keep);
      if (below > at) removed += await removeBelow(org, below);
      if (young !== undefined || batch.length < batchSize || below >= keep) return removed;
      at = below;
    }
  }

  async function pass(): Promise<number> {
    let removed = 0;
    for (const org of [...deps.organizations()]) {
      try {
        removed += await pruneOrg(org);
      } catch (error) {
        deps.warn(`pruning the event log of ${org} failed: ${String(error)}`);
      }
    }
    return removed;
  }

  const pruning = periodic(pass);
  return { head: deps.head, oldest, read, prune: pruning.run, startPruning: pruning.start, stop: pruning.stop };
}

function isOlderThan(event: Record<string, unknown>, cutoffMs: number): boolean {
  const metadata = event['event_metadata'] as { timestamp?: unknown } | undefined;
  const parts = typeof metadata?.timestamp === 'string' ? parseRfc3339(metadata.timestamp) : undefined;
  // An event without a readable timestamp cannot be younger than anything: it goes with its neighbours.
  if (parts === undefined) return true;
  return parts.seconds * 1000 + parts.nanos / 1e6 < cutoffMs;
}
