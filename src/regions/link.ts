// A replication link to one replica region: ships each organization's committed WAL records from the
// replica's acknowledged offset on, in order and batched, over any Transport, and tracks acknowledgements.
// Whatever is lost (a cut, a restart, a refused batch) is sent again from the last acknowledgement; the
// replica skips what it already has, so nothing is lost and nothing is applied twice. How late an
// acknowledgement may be comes from the round trips the link measures, whatever carries its batches.
import { systemClock, type Clock, type TimerHandle } from '../lib/clock.js';
import type { Wal } from '../wal/log.js';
import { createLinkLifecycle, type LinkState } from './link-machine.js';
import { createRoundTrip } from './round-trip.js';
import type { Ack, Transport } from './transport.js';

export interface LinkOptions {
  region: string;
  wal: Pick<Wal, 'records'>;
  transport: Transport;
  warn(message: string): void;
  /** the tick and every duration run on it; the system clock by default */
  clock?: Pick<Clock, 'monoMs' | 'setInterval' | 'clearTimeout'>;
  /** entries per batch (at least one entry is always sent) */
  batchEntries?: number;
  batchBytes?: number;
  /** unacknowledged entries in flight per organization */
  windowEntries?: number;
  tickMs?: number;
  /** how much longer than a round trip acknowledgements may take before the link counts as lagging */
  stallMarginMs?: number;
}

export interface LinkView {
  name: string;
  state: LinkState;
  lag_entries: number;
}

interface Cursor {
  /** last locally committed (durable) offset */
  committed: number;
  /** the replica's applied offset, as last acknowledged */
  acked: number;
  /** last offset sent in this session */
  sent: number;
  /** whether the replica has answered in this session, so `acked` is where to resume */
  known: boolean;
  /** when the organization last fell behind or last made progress */
  since: number;
  /** when its unacknowledged entries were last sent again */
  resent: number;
  /** when the send being timed left (one per organization at a time); undefined when none is */
  timedAt: number | undefined;
  /** the offset an acknowledgement must reach to end the timed round trip (0 for a probe) */
  timedOffset: number;
  /** entries up to here were sent again: their acknowledgements may answer the first send, so none is timed */
  untimedThrough: number;
}

const newCursor = (committed: number, known: boolean, now: number): Cursor => ({ committed, acked: 0, sent: 0, known, since: now, resent: 0, timedAt: undefined, timedOffset: 0, untimedThrough: 0 });

export type AckListener = (org: string, offset: number) => void;

export class ReplicationLink {
  readonly region: string;
  private readonly opts: Required<Omit<LinkOptions, 'region' | 'wal' | 'transport' | 'warn' | 'clock'>>;
  private readonly clock: Pick<Clock, 'monoMs' | 'setInterval' | 'clearTimeout'>;
  private readonly roundTrip = createRoundTrip();
  private readonly wal: Pick<Wal, 'records'>;
  private readonly transport: Transport;
  private readonly warn: (message: string) => void;
  private readonly cursors = new Map<string, Cursor>();
  /** organizations not yet known or with unacknowledged entries: the only ones the tick looks at */
  private readonly behind = new Set<string>();
  private readonly listeners: AckListener[] = [];
  private readonly lifecycle = createLinkLifecycle();
  private readonly aheadWarned = new Set<string>();
  private session = 1;
  private ticker: TimerHandle | undefined;

  constructor(options: LinkOptions) {
    this.region = options.region;
    this.wal = options.wal;
    this.transport = options.transport;
    this.warn = options.warn;
    this.clock = options.clock ?? systemClock;
    this.opts = { batchEntries: options.batchEntries ?? 512, batchBytes: options.batchBytes ?? 4 * 1024 * 1024, windowEntries: options.windowEntries ?? 4096, tickMs: options.tickMs ?? 100, stallMarginMs: options.stallMarginMs ?? 500 };
    this.transport.onAck((ack) => this.ack(ack));
  }

  /** Starts with every organization's committed offset and asks the replica where each one stands. */
  start(orgs: Iterable<[org: string, committed: number]>): void {
    const now = this.clock.monoMs();
    for (const [org, committed] of orgs) this.cursors.set(org, newCursor(committed, false, now));
    for (const org of this.cursors.keys()) this.behind.add(org);
    for (const [org, c] of this.cursors) this.probe(org, c);
    this.ticker = this.clock.setInterval(() => this.tick(), this.opts.tickMs, { background: true });
    this.evaluate();
  }

  stop(): void {
    this.clock.clearTimeout(this.ticker);
    this.transport.close();
    this.lifecycle.stop();
  }

  state(): LinkState {
    return this.lifecycle.getSnapshot().value as LinkState;
  }

  acked(org: string): number {
    return this.cursors.get(org)?.acked ?? 0;
  }

  /** Entries committed locally and not yet acknowledged, over every organization. */
  lag(): number {
    let lag = 0;
    for (const org of this.behind) {
      const c = this.cursors.get(org) as Cursor;
      lag += Math.max(0, c.committed - c.acked);
    }
    return lag;
  }

  view(): LinkView {
    return { name: this.region, state: this.state(), lag_entries: this.lag() };
  }

  /** The measured round trip's smoothed mean, ms; 0 before the first acknowledgement. */
  roundTripMs(): number {
    return this.roundTrip.mean();
  }

  onAck(listener: AckListener): void {
    this.listeners.push(listener);
  }

  /** A local commit: `offset` of `org` is durable. A new organization starts known at zero. */
  committed(org: string, offset: number): void {
    let c = this.cursors.get(org);
    if (!c) {
      c = newCursor(0, true, this.clock.monoMs());
      this.cursors.set(org, c);
    }
    if (offset <= c.committed) return;
    c.committed = offset;
    this.track(org, c);
    this.pump(org, c);
  }

  /** The transport was cut (fault injection): what was in flight is lost, and nothing is sent until up(). */
  cut(): void {
    if (this.state() !== 'cut') this.lifecycle.send({ type: 'cut' });
  }

  /** The transport is up again after a cut: a new session resumes from where the replica stands. */
  up(): void {
    if (this.state() !== 'cut') return;
    this.lifecycle.send({ type: 'up' });
    this.reconnect();
  }

  private reconnect(): void {
    this.session++;
    const now = this.clock.monoMs();
    for (const [org, c] of this.cursors) {
      c.known = false;
      c.sent = c.acked;
      c.since = now;
      c.untimedThrough = 0;
      this.behind.add(org);
    }
    for (const [org, c] of this.cursors) this.probe(org, c);
  }

  /** Asks where the replica stands; a probe sent again is not timed, since its answer may be the first one's. */
  private probe(org: string, c: Cursor, again = false): void {
    if (this.state() === 'cut') return;
    if (again) c.timedAt = undefined;
    else {
      c.timedAt = this.clock.monoMs();
      c.timedOffset = 0;
    }
    this.transport.send({ org, session: this.session, entries: [] });
  }

  private pump(org: string, c: Cursor): void {
    if (!c.known || this.state() === 'cut') return;
    if (c.sent < c.acked) c.sent = c.acked;
    while (c.sent < c.committed && c.sent - c.acked < this.opts.windowEntries) {
      const limit = Math.min(this.opts.batchEntries, c.committed - c.sent, this.opts.windowEntries - (c.sent - c.acked));
      const records = this.wal.records(org, c.sent, limit);
      let bytes = 0;
      let n = 0;
      while (n < records.length && (n === 0 || bytes + (records[n] as { record: Buffer }).record.length <= this.opts.batchBytes)) {
        bytes += (records[n] as { record: Buffer }).record.length;
        n++;
      }
      const entries = records.slice(0, n);
      const last = entries[entries.length - 1];
      if (!last || entries[0]?.offset !== c.sent + 1) {
        this.warn(`link to ${this.region}: entry ${c.sent + 1} of ${org} is not in the local WAL; shipping paused for it`);
        return;
      }
      this.transport.send({ org, session: this.session, entries });
      if (c.timedAt === undefined && last.offset > c.untimedThrough) {
        c.timedAt = this.clock.monoMs();
        c.timedOffset = last.offset;
      }
      c.sent = last.offset;
    }
  }

  private ack(ack: Ack): void {
    const c = this.cursors.get(ack.org);
    if (!c) return;
    if (ack.offset > c.committed && !this.aheadWarned.has(ack.org)) {
      this.aheadWarned.add(ack.org);
      this.warn(`replica ${this.region} holds ${ack.org} up to ${ack.offset}, beyond the local WAL (${c.committed}): the two have diverged`);
    }
    const now = this.clock.monoMs();
    if (ack.session === this.session && c.timedAt !== undefined && ack.offset >= c.timedOffset) {
      this.roundTrip.sample(now - c.timedAt);
      c.timedAt = undefined;
    }
    if (ack.session === this.session && !c.known) {
      c.known = true;
      c.sent = Math.max(c.acked, ack.offset);
      c.since = now;
    }
    if (ack.offset > c.acked) {
      c.acked = ack.offset;
      c.since = now;
      for (const l of this.listeners) l(ack.org, ack.offset);
    }
    this.track(ack.org, c);
    this.pump(ack.org, c);
    if (this.behind.size === 0) this.evaluate();
  }

  private track(org: string, c: Cursor): void {
    if (!c.known || c.acked < c.committed) {
      if (!this.behind.has(org)) {
        this.behind.add(org);
        c.since = this.clock.monoMs();
      }
    } else {
      this.behind.delete(org);
    }
  }

  /** How long acknowledgements may take before the link counts as lagging: the measured round trip plus a margin. */
  private stallAfterMs(): number {
    return this.opts.stallMarginMs + this.roundTrip.bound();
  }

  private tick(): void {
    if (this.state() === 'cut') return;
    const now = this.clock.monoMs();
    const resendAfter = 4 * this.stallAfterMs();
    for (const org of this.behind) {
      const c = this.cursors.get(org) as Cursor;
      if (now - Math.max(c.since, c.resent) <= resendAfter) continue;
      // Something was lost on the way (or refused): ask again, or resend from the acknowledgement.
      c.resent = now;
      if (!c.known) this.probe(org, c, true);
      else {
        c.untimedThrough = Math.max(c.untimedThrough, c.sent);
        c.timedAt = undefined;
        c.sent = c.acked;
        this.pump(org, c);
      }
    }
    this.evaluate();
  }

  private evaluate(): void {
    const state = this.state();
    if (state === 'cut') return;
    const now = this.clock.monoMs();
    const stallAfter = this.stallAfterMs();
    let stalled = false;
    let unsent = false;
    for (const org of this.behind) {
      const c = this.cursors.get(org) as Cursor;
      if (now - c.since > stallAfter) stalled = true;
      if (!c.known || c.sent < c.committed) unsent = true;
    }
    if (state === 'catching_up' && !stalled && !unsent) this.lifecycle.send({ type: 'caught_up' });
    else if (state === 'streaming' && stalled) this.lifecycle.send({ type: 'stalled' });
    else if (state === 'lagging' && !stalled) this.lifecycle.send({ type: this.behind.size === 0 ? 'caught_up' : 'flowing' });
  }
}
