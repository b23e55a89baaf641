// One organization's actor: a mailbox in front of decide/apply, with group commit to the WAL.
// Commands that arrive while a commit is in flight are decided against the pending state and share the
// next transaction, so a busy organization pays one fsync per batch. Nothing is acknowledged before its
// batch is durable. Under load a batch is also let grow for a few event-loop turns before it commits (gather):
// a durable commit costs a fixed few hundred µs of CPU (the flush's I/O), so fewer, larger commits leave more
// of a core to the requests.
import { ServiceError } from '../errors.js';
import { applyEntry } from '../domain/apply.js';
import type { Change } from '../domain/changes.js';
import type { Command } from '../domain/commands.js';
import { decide } from '../domain/decide.js';
import type { DecideContext } from '../domain/decision.js';
import { heldSnapshot, toSnapshot } from '../domain/snapshot.js';
import type { OrgGenesis, OrgState } from '../domain/state.js';
import type { LoggedEvent } from '../events/log.js';
import { ZERO_CHAIN, type ChainLink, type Chainer } from '../events/chain.js';
import type { EventStamper } from '../events/stamp.js';
import type { EncodedWrite, SnapshotItem, Wal } from '../wal/log.js';
import type { CommitRecord, CommittedEntry } from './commit-bus.js';
import { createLifecycle } from './lifecycle.js';
import { createGatheringQueue, type GatheringQueue } from './gather.js';

export interface Outcome<R = unknown> {
  reply: R;
  /** WAL offset the reply depends on: the command's own entry, or the last one before it */
  offset: number;
  /** the events the command emitted, as stamped and logged */
  events: LoggedEvent[];
}

export interface ActorDeps {
  wal: Wal;
  context(): DecideContext;
  nowNs(): bigint;
  stamp: EventStamper;
  /** links each event to the organization's chain; without it events are stored unchained */
  chain?: Chainer;
  mailboxLimit: number;
  snapshotInterval: number;
  /** how long a batch may gather under load, ms; GATHER_MAX_MS when absent */
  gatherMaxMs?: number;
  /** called once per durable batch, before its replies */
  committed(commit: CommitRecord): void;
  /** with SERVICE_COMMIT=quorum: the region's commit stream, where a batch is stored before the local append */
  quorum?: Quorum;
  fatal(error: unknown): void;
  warn(message: string): void;
}

/**
 * The region's quorum (several processes, one writer per organization): a batch is acknowledged only once the
 * region's replicated commit stream stores it, and only by the process holding the organization's write lease.
 */
export interface Quorum {
  /** Why this process may not write the organization now (a 307 to the holder, or a 503), or undefined. */
  mayWrite(org: string): ServiceError | undefined;
  /** Stores the batch in the region's stream; resolves to what the local append records beside it. */
  store(org: string, writes: EncodedWrite[], newOrgs: string[]): Promise<ReadonlyArray<[string, unknown]>>;
  /** The stream refused the batch or did not answer: the actor's memory is ahead of every log and must be rebuilt. */
  refused(org: string, error: unknown): void;
}

/** Up to this many persons a snapshot is packed in one turn (a few milliseconds), like one slice of a larger one. */
const PACK_AT_ONCE = 5_000;

interface Pending {
  command: Command;
  resolve(outcome: Outcome): void;
  reject(error: unknown): void;
}

const unavailable = (org: string) => new ServiceError('ERR_UNAVAILABLE', `organization ${org} is changing writers; retry shortly`, { headers: { 'Retry-After': '1' } });

export class OrgActor {
  state: OrgState;
  /** The last event offset whose batch is durable. state.event_offset runs ahead of it while a commit is in flight. */
  durableEventOffset: number;
  /** The last WAL offset whose batch is durable. state.offset runs ahead of it while a commit is in flight. */
  durableOffset: number;
  private readonly deps: ActorDeps;
  private readonly lifecycle = createLifecycle();
  private readonly queue: GatheringQueue<Pending>;
  private snapshotOffset: number;
  /** a sliced snapshot is still being packed */
  private packing = false;
  /** the periodic snapshot being written, if any: a deleted organization's must land before its keys are removed */
  private snapshotWrite: Promise<void> | undefined;
  /** the organization was deleted: a command that arrives after is the caller's, not the service's, problem */
  private deleted = false;
  /** the chain link of the last event decided (ahead of the durable one while a commit is in flight); read at first use */
  private chainHead: Buffer | undefined;
  /** the region's stream refused a batch: the state is ahead of the log, so nothing more is decided on it */
  private fenced = false;

  constructor(state: OrgState, deps: ActorDeps, snapshotOffset = 0) {
    this.state = state;
    this.durableEventOffset = state.event_offset;
    this.durableOffset = state.offset;
    this.deps = deps;
    this.snapshotOffset = snapshotOffset;
    this.queue = createGatheringQueue((batch) => this.commit(batch), deps.gatherMaxMs);
    this.lifecycle.send({ type: 'loaded' });
  }

  get id(): string {
    return this.state.id;
  }

  /** A batch decided here is on its way to the logs: the state holds it, durableOffset not yet (nor will, if refused). */
  get committing(): boolean {
    return this.state.offset > this.durableOffset && !this.fenced;
  }

  execute<R = unknown>(command: Command): Promise<Outcome<R>> {
    if (this.lifecycle.getSnapshot().value !== 'ready') {
      if (this.deleted) return Promise.reject(new ServiceError('ERR_UNAUTHORIZED', 'the API key is not valid: its organization was deleted'));
      return Promise.reject(new ServiceError('ERR_UNAVAILABLE', 'the service is shutting down'));
    }
    const refusal = this.fenced ? unavailable(this.state.id) : this.deps.quorum?.mayWrite(this.state.id);
    if (refusal) return Promise.reject(refusal);
    if (this.queue.length >= this.deps.mailboxLimit) {
      return Promise.reject(new ServiceError('ERR_UNAVAILABLE', 'too many commands queued for this organization; retry shortly', { headers: { 'Retry-After': '1' } }));
    }
    return new Promise<Outcome<R>>((resolve, reject) => {
      this.queue.push({ command, resolve: resolve as (o: Outcome) => void, reject });
    });
  }

  /**
   * Refuses later commands and resolves once every queued one has been answered: the first step of a clean stop
   * (Registry.stop), whose final snapshots are then stored together (finalSnapshot).
   */
  async quiesce(): Promise<void> {
    this.lifecycle.send({ type: 'stop' });
    while (this.queue.draining) await new Promise((r) => setImmediate(r));
    this.lifecycle.send({ type: 'drained' });
  }

  /**
   * Refuses later commands and resolves once nothing of this organization is left to be written: its queued
   * commands answered and committed, its periodic snapshot stored. The first step of deleting it.
   */
  async retire(): Promise<void> {
    this.deleted = true;
    await this.quiesce();
    await this.snapshotWrite;
  }

  /**
   * After quiesce: the snapshot a clean stop stores, if anything was logged since the last one, for
   * Wal.saveSnapshots; release() once it is written.
   */
  finalSnapshot(): { item: SnapshotItem; release(): void } | undefined {
    if (this.state.offset <= this.snapshotOffset) return undefined;
    this.snapshotOffset = this.state.offset;
    return this.snapshotItem();
  }

  /**
   * A standby's copy of an entry another process wrote (read from the region's stream, already in the local log):
   * the state follows it, and the chain is read again from the log should this process write next.
   */
  follow(offset: number, changes: Change[], ev: number): void {
    this.state = applyEntry(this.state, { offset, changes, ev });
    this.durableOffset = offset;
    this.durableEventOffset = this.state.event_offset;
    this.chainHead = undefined;
    this.maybeSnapshot();
  }

  private async commit(batch: Pending[]): Promise<void> {
    if (this.fenced) {
      for (const item of batch) item.reject(unavailable(this.state.id));
      return;
    }
    const ctx = this.deps.context();
    const nowNs = this.deps.nowNs();
    const writes: EncodedWrite[] = [];
    const entries: CommittedEntry[] = [];
    const answers: Array<[Pending, Outcome]> = [];
    const spawned: OrgGenesis[] = [];
    let keyRotated = false;
    const origin = { organization_id: this.state.id, root_organization_id: this.state.root_id };

    for (const item of batch) {
      let d;
      try {
        d = decide(this.state, item.command, ctx);
      } catch (error) {
        item.reject(error);
        continue;
      }
      if (d.changes.length === 0 && d.events.length === 0 && !d.spawn) {
        answers.push([item, { reply: d.reply, offset: this.state.offset, events: [] }]);
        continue;
      }
      const offset = this.state.offset + 1;
      // Stamp and encode before anything changes: a failure here answers this command alone and leaves
      // the state as it was, instead of breaking the batch with the state half applied.
      let events: CommittedEntry['events'];
      let write: EncodedWrite;
      try {
        let eventOffset = this.state.event_offset;
        events = d.events.map((e) => ({ offset: ++eventOffset, event: this.deps.stamp(origin, e, nowNs) }));
        const links = this.link(events);
        const record = this.deps.wal.encodeEntry({ at: ctx.nowMs, changes: d.changes, ev: eventOffset });
        write = { org: this.state.id, offset, record, events: events.map((e, i) => ({ offset: e.offset, record: this.deps.wal.encodeEvent(e.event, e.chain, links?.[i]?.wire) })) };
        if (links) this.chainHead = events[events.length - 1]?.chain;
      } catch (error) {
        item.reject(error);
        continue;
      }
      writes.push(write);
      this.state = applyEntry(this.state, { offset, changes: d.changes, ev: this.state.event_offset + events.length });
      for (const change of d.changes) if (change.t === 'ApiKeyRotated') keyRotated = true;
      if (d.spawn) {
        const genesis: Change = { t: 'OrgCreated', genesis: d.spawn };
        writes.push({ org: d.spawn.id, offset: 1, record: this.deps.wal.encodeEntry({ at: ctx.nowMs, changes: [genesis], ev: 0 }), events: [] });
        spawned.push(d.spawn);
      }
      entries.push({ offset, changes: d.changes, events });
      answers.push([item, { reply: d.reply, offset, events }]);
    }

    if (writes.length > 0) {
      const newOrgs = spawned.map((g) => g.id);
      let meta: ReadonlyArray<[string, unknown]> | undefined;
      if (this.deps.quorum) {
        try {
          meta = await this.deps.quorum.store(this.state.id, writes, newOrgs);
        } catch (error) {
          // Nothing of the batch is in the local log; the region's stream may or may not hold it (a lost PubAck), and
          // its followers apply it if it does. Either way this state is ahead: the registry rebuilds it from the logs.
          this.fenced = true;
          const refusal = error instanceof ServiceError ? error : unavailable(this.state.id);
          for (const [item] of answers) item.reject(refusal);
          this.deps.quorum.refused(this.state.id, error);
          return;
        }
      }
      try {
        await this.deps.wal.append(writes, newOrgs, meta);
      } catch (error) {
        // Memory is ahead of the disk now; the only safe way on is to stop and recover from the log.
        this.deps.fatal(error);
        for (const [item] of answers) item.reject(new ServiceError('ERR_UNAVAILABLE', 'the write could not be committed'));
        return;
      }
      this.durableEventOffset = this.state.event_offset;
      this.durableOffset = this.state.offset;
      // One record per batch; a batch of one entry (the common case) shares that entry's events array.
      const last = entries[entries.length - 1] as CommittedEntry;
      const events = entries.length === 1 ? last.events : entries.flatMap((e) => e.events);
      this.deps.committed({ org: this.state.id, entries, events, offset: last.offset, spawned, keyRotated });
    }
    for (const [item, outcome] of answers) item.resolve(outcome);
    this.maybeSnapshot();
  }

  /**
   * Sets each event's chain link and answers the links with the protobuf bytes each record is to keep; the last
   * link becomes the head once the entry is taken.
   */
  private link(events: LoggedEvent[]): ChainLink[] | undefined {
    const chain = this.deps.chain;
    if (!chain || events.length === 0) return undefined;
    let head = (this.chainHead ??= this.startingLink());
    return events.map((e) => {
      const link = chain(head, e.event);
      e.chain = head = link.chain;
      return link;
    });
  }

  /** The link of the last durable event, as stored (the service fills in the links of older data dirs at start). */
  private startingLink(): Buffer {
    const at = this.state.event_offset;
    if (at === 0) return ZERO_CHAIN;
    const stored = this.deps.wal.chainAt(this.state.id, at);
    if (stored) return stored;
    this.deps.warn(`organization ${this.state.id}: no chain link stored for event ${at}; the chain restarts from zero after it`);
    return ZERO_CHAIN;
  }

  /**
   * A snapshot costs CPU in proportion to the organization's persons (about 4 µs each): taken every
   * `snapshotInterval` entries whatever the size, at a million persons it would cost more than the writes between
   * two of them, and one would start before the last had finished packing. So the interval is at least a quarter
   * of the persons (at most about 16 µs of packing an entry), and a sliced snapshot still packing defers the next.
   */
  private maybeSnapshot(): void {
    const interval = Math.max(this.deps.snapshotInterval, this.state.persons.size >> 2);
    if (this.packing || this.state.offset - this.snapshotOffset < interval) return;
    this.snapshotWrite = this.writeSnapshot();
  }

  private async writeSnapshot(): Promise<void> {
    this.snapshotOffset = this.state.offset;
    const { item, release } = this.snapshotItem();
    this.packing = item.lists !== undefined;
    try {
      await this.deps.wal.saveSnapshot(item.org, item.snapshot, item.lists);
    } catch (error) {
      this.deps.warn(`snapshot of ${this.state.id} failed: ${String(error)}`);
    } finally {
      this.packing = false;
      release();
    }
  }

  /**
   * The state as a snapshot. A small organization's is packed in one go: one turn of the event loop, and each
   * shape defined once in the record, which is quicker to read back at start than a record of slices. A larger
   * one's persons and groups are held and packed a slice at a time, so that commands go on being answered
   * meanwhile (seconds at a million persons).
   */
  private snapshotItem(): { item: SnapshotItem; release(): void } {
    const s = this.state;
    if (s.persons.size <= PACK_AT_ONCE) return { item: { org: s.id, snapshot: { offset: s.offset, event_offset: s.event_offset, state: toSnapshot(s) } }, release: () => {} };
    const held = heldSnapshot(s);
    return { item: { org: s.id, snapshot: { offset: s.offset, event_offset: s.event_offset, state: held.snapshot }, lists: held.lists }, release: held.release };
  }
}
