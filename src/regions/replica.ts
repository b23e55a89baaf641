// A replica region: its own copy of every organization's state, built only from the WAL entries it
// receives. Entries apply idempotently by offset, are durable before they are acknowledged, and the
// applied offset is saved in the same transaction, so a restarted replica resumes exactly where it was.
import { applyEntry } from '../domain/apply.js';
import type { Change } from '../domain/changes.js';
import { fromSnapshot, toSnapshot } from '../domain/snapshot.js';
import type { OrgState } from '../domain/state.js';
import { recoverOrg } from '../org/recovery.js';
import type { StoredRecord } from '../lib/versions.js';
import type { Snapshot } from '../wal/log.js';
import { decodeEntry, type WalEntry } from '../wal/entry.js';
import type { ReplicaStore, ReplicaWrite } from './replica-store.js';
import type { Ack, Batch, ReplicaEndpoint } from './transport.js';

export interface ReplicaStats {
  /** entries applied since this process started */
  applied: number;
  /** entries received again and skipped because their offset was already applied */
  duplicates: number;
  /** batches whose first new entry did not follow the applied offset */
  gaps: number;
  /** entries refused because their record did not verify */
  corrupt: number;
  /** snapshots shipped by the origin and installed in place of entries the stream no longer held */
  installed: number;
}

interface Inbound {
  batch: Batch;
  resolve(ack: Ack): void;
  reject(error: unknown): void;
}

/** A snapshot shipped by the origin, installed in turn with the batches around it. */
interface Install {
  org: string;
  snapshot: Snapshot<StoredRecord>;
  resolve(offset: number): void;
  reject(error: unknown): void;
}

interface Decoded extends ReplicaWrite {
  entry: WalEntry<Change>;
}

export class Replica implements ReplicaEndpoint {
  readonly region: string;
  readonly stats: ReplicaStats = { applied: 0, duplicates: 0, gaps: 0, corrupt: 0, installed: 0 };
  private readonly store: ReplicaStore;
  private readonly states = new Map<string, OrgState>();
  private readonly snapshotOffsets = new Map<string, number>();
  private readonly snapshotInterval: number;
  private readonly warn: (message: string) => void;
  private inbox: Array<Inbound | Install> = [];
  /** the replica's own last snapshot write, which an installed snapshot must land after */
  private saving: Promise<unknown> = Promise.resolve();
  private draining: Promise<void> | undefined;
  private closed = false;

  private constructor(region: string, store: ReplicaStore, snapshotInterval: number, warn: (message: string) => void) {
    this.region = region;
    this.store = store;
    this.snapshotInterval = snapshotInterval;
    this.warn = warn;
  }

  /** Rebuilds every organization from the replica's own snapshot and log. */
  static async open(region: string, store: ReplicaStore, snapshotInterval: number, warn: (message: string) => void): Promise<Replica> {
    const replica = new Replica(region, store, snapshotInterval, warn);
    for (const org of store.wal.organizations()) {
      const r = await recoverOrg(store.wal, org);
      if (!r) continue;
      const saved = store.savedOffset(org);
      if (r.state.offset < saved) warn(`replica ${region}: ${org} was saved at offset ${saved} but its log holds ${r.state.offset}; resuming from ${r.state.offset}`);
      replica.states.set(org, r.state);
      replica.snapshotOffsets.set(org, r.snapshotOffset);
    }
    return replica;
  }

  applied(org: string): number {
    return this.states.get(org)?.offset ?? 0;
  }

  state(org: string): OrgState | undefined {
    return this.states.get(org);
  }

  organizations(): string[] {
    return [...this.states.keys()];
  }

  get wal() {
    return this.store.wal;
  }

  receive(batch: Batch): Promise<Ack> {
    if (this.closed) return Promise.reject(new Error(`replica ${this.region} is closed`));
    return new Promise<Ack>((resolve, reject) => {
      this.inbox.push({ batch, resolve, reject });
      this.draining ??= this.drain();
    });
  }

  /**
   * Installs the origin's snapshot of an organization when it is past what is applied here; resolves to the
   * applied offset after it. The snapshot's offset becomes the applied floor in the same transaction, so
   * entries up to it are skipped as already applied and the next one applies on top of it.
   */
  install(org: string, snapshot: Snapshot<StoredRecord>): Promise<number> {
    if (this.closed) return Promise.reject(new Error(`replica ${this.region} is closed`));
    return new Promise<number>((resolve, reject) => {
      this.inbox.push({ org, snapshot, resolve, reject });
      this.draining ??= this.drain();
    });
  }

  /** Waits for the batch being committed, then closes the store; later batches are refused. */
  async close(): Promise<void> {
    this.closed = true;
    await this.draining;
    await this.store.close();
  }

  private async drain(): Promise<void> {
    try {
      while (this.inbox.length > 0) {
        const items = this.inbox;
        this.inbox = [];
        let run: Inbound[] = [];
        for (const item of items) {
          if ('batch' in item) run.push(item);
          else {
            if (run.length > 0) await this.commit(run);
            run = [];
            await this.installOne(item);
          }
        }
        if (run.length > 0) await this.commit(run);
      }
    } finally {
      this.draining = undefined;
    }
  }

  /** Batches that arrived together share one transaction and one flush, like the local group commit. */
  private async commit(items: Inbound[]): Promise<void> {
    const next = new Map<string, number>();
    const writes: Decoded[] = [];
    for (const { batch } of items) {
      let at = next.get(batch.org) ?? this.applied(batch.org);
      for (const e of batch.entries) {
        if (e.offset <= at) {
          this.stats.duplicates++;
          continue;
        }
        if (e.offset !== at + 1) {
          this.stats.gaps++;
          break;
        }
        let entry: WalEntry<Change>;
        try {
          entry = decodeEntry<Change>(e.record);
        } catch (error) {
          this.stats.corrupt++;
          this.warn(`replica ${this.region}: entry ${e.offset} of ${batch.org} does not verify (${(error as Error).message}); waiting for it again`);
          break;
        }
        writes.push({ org: batch.org, offset: e.offset, record: e.record, entry });
        at = e.offset;
      }
      if (at > this.applied(batch.org)) next.set(batch.org, at);
    }

    if (writes.length > 0) {
      const newOrgs = [...next.keys()].filter((org) => !this.states.has(org));
      try {
        await this.store.commit(writes, next, newOrgs);
      } catch (error) {
        // Nothing was applied in memory, so nothing is acknowledged; the sender resends from its last ack.
        for (const item of items) item.reject(error);
        return;
      }
      for (const w of writes) this.applyEntry(w);
      for (const org of next.keys()) this.maybeSnapshot(org);
    }
    for (const { batch, resolve } of items) resolve({ org: batch.org, session: batch.session, offset: this.applied(batch.org) });
  }

  private async installOne({ org, snapshot, resolve, reject }: Install): Promise<void> {
    if (snapshot.offset <= this.applied(org)) return resolve(this.applied(org));
    let state: OrgState;
    try {
      state = fromSnapshot(snapshot.state, true);
      await this.saving;
      await this.store.install(org, snapshot);
    } catch (error) {
      return reject(error);
    }
    this.states.set(org, { ...state, offset: snapshot.offset, event_offset: snapshot.event_offset });
    this.snapshotOffsets.set(org, snapshot.offset);
    this.stats.installed++;
    resolve(snapshot.offset);
  }

  private applyEntry(w: Decoded): void {
    const state = applyEntry(this.states.get(w.org), { offset: w.offset, changes: w.entry.changes, ev: w.entry.ev });
    if (!state) {
      this.warn(`replica ${this.region}: entry ${w.offset} of ${w.org} precedes its genesis; skipped`);
      return;
    }
    this.states.set(w.org, state);
    this.stats.applied++;
  }

  private maybeSnapshot(org: string): void {
    const state = this.states.get(org);
    const last = this.snapshotOffsets.get(org) ?? 0;
    if (!state || state.offset - last < this.snapshotInterval) return;
    this.snapshotOffsets.set(org, state.offset);
    const snapshot = { offset: state.offset, event_offset: state.event_offset, state: toSnapshot(state) };
    this.saving = this.store.wal.saveSnapshot(org, snapshot).catch((error: unknown) => this.warn(`replica ${this.region}: snapshot of ${org} failed: ${String(error)}`));
  }
}
