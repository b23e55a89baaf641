// The write-ahead log: per-organization entries with consecutive offsets, events beside them, snapshots.
// One append is one LMDB transaction; in durable mode it resolves only once the commit is flushed to disk.
import { decodeRecord, encodeRecord, encodeRecordInSlices, CorruptRecordError, type SlicedList } from './codec.js';
import { decodeEntry, encodeEntry, type WalEntry } from './entry.js';
import { decodeEventRecord, encodeEventRecord, eventRecordLink, type WireDecoder, type WireEvent } from './event-record.js';
import type { Store } from './store.js';

export type { WalEntry } from './entry.js';

export interface EncodedWrite {
  org: string;
  offset: number;
  record: Buffer;
  /** each event's record (encodeEvent: the event, or its protobuf bytes, with its chain link) */
  events: Array<{ offset: number; record: Buffer }>;
}

export interface Snapshot<S = unknown> {
  offset: number;
  event_offset: number;
  state: S;
}

export interface SnapshotItem {
  org: string;
  snapshot: Snapshot;
  lists?: readonly SlicedList[];
}

/** Packed snapshots committed together by saveSnapshots: hundreds of small organizations' in one commit, the next ones packing while it flushes. */
const SNAPSHOT_BATCH_BYTES = 16 * 1024 * 1024;

export interface ReplayResult {
  lastOffset: number;
  lastEventOffset: number;
  /** set when a corrupt or missing entry was found and everything from it on was cut */
  cutAt?: number;
}

export interface Wal {
  encodeEntry(entry: WalEntry): Buffer;
  /** The event's record, carrying its chain link when given one (see event-record.ts). */
  encodeEvent(event: unknown, chain?: Uint8Array, wire?: WireEvent): Buffer;
  /**
   * Appends writes (several organizations may share one transaction); newOrgs are recorded for recovery, and
   * `meta` values (a position in the region's commit stream) are stored in the same transaction.
   */
  append(writes: EncodedWrite[], newOrgs?: string[], meta?: ReadonlyArray<[key: string, value: unknown]>): Promise<void>;
  organizations(): string[];
  loadSnapshot<S>(org: string): Snapshot<S> | undefined;
  /**
   * Stores a snapshot. With `lists`, the last fields of snapshot.state are empty arrays that stand for them, and
   * the lists are packed a slice at a time with the event loop free between slices (see encodeRecordInSlices).
   */
  saveSnapshot(org: string, snapshot: Snapshot, lists?: readonly SlicedList[]): Promise<void>;
  /**
   * Stores many organizations' snapshots (a clean stop's) in few durable commits: each is packed in turn (as
   * saveSnapshot packs it), and the packed ones are committed together every SNAPSHOT_BATCH_BYTES, the next ones
   * packing while that commit flushes. One that fails to pack is warned of and left out: the WAL has its entries.
   */
  saveSnapshots(items: Iterable<SnapshotItem>): Promise<void>;
  /**
   * Installs a snapshot shipped by another process (a reader behind a stream's retention) in one transaction with
   * the organization's record (made if new), the chain link of its last event and `meta` values: a crash leaves
   * the old log or the snapshot, never a mix. Entries up to its offset are no longer read (recovery starts at the
   * snapshot); compaction removes them.
   */
  installSnapshot(org: string, snapshot: Snapshot, options?: InstallOptions): Promise<void>;
  /** Calls fn for every entry after `after`, in order; cuts a corrupt or torn tail, with a warning. */
  replay<C>(org: string, after: number, afterEvent: number, fn: (offset: number, entry: WalEntry<C>) => void): Promise<ReplayResult>;
  entries<C>(org: string, after: number, limit: number): Array<{ offset: number; entry: WalEntry<C> }>;
  /** The framed records after `after`, undecoded: replication ships them as is and the replica verifies them. */
  records(org: string, after: number, limit: number): Array<{ offset: number; record: Buffer }>;
  /** Events with their chain links (absent only in a data dir whose links were never computed). */
  events(org: string, from: number, limit: number): Array<{ offset: number; event: unknown; chain?: Buffer }>;
  /** The stored chain link of the event at `offset`, or undefined. */
  chainAt(org: string, offset: number): Buffer | undefined;
  /** The highest offset with a stored chain link, or undefined. */
  lastChainOffset(org: string): number | undefined;
  /** Stores chain links computed after the fact (a data dir written before links were kept). */
  putChains(org: string, links: Array<{ offset: number; chain: Buffer }>): Promise<void>;
  /** The offset of the organization's oldest event still stored, or undefined when none is. */
  firstEventOffset(org: string): number | undefined;
  /** Removes up to `limit` of the organization's oldest events with offsets below `below`; resolves to how many. */
  removeEvents(org: string, below: number, limit: number): Promise<number>;
  /** The offset of the organization's newest snapshot known to be durable, or 0: recovery needs no entry up to it. */
  snapshotOffset(org: string): number;
  /** The offset of the organization's oldest WAL entry still stored, or undefined when none is. */
  firstOffset(org: string): number | undefined;
  /**
   * Removes up to `limit` of the organization's oldest entries with offsets up to `through` (compaction), and
   * records how far the log was compacted; resolves to how many went.
   */
  removeEntries(org: string, through: number, limit: number): Promise<number>;
  getMeta<T>(key: string): T | undefined;
  putMeta(key: string, value: unknown): Promise<void>;
}

export interface InstallOptions {
  meta?: ReadonlyArray<[key: string, value: unknown]>;
  /** the chain link of the snapshot's last event (event_offset), as the shipping process stored it */
  chain?: Buffer;
  /** stamped on the organization's record when it is new here */
  createdMs?: number;
}

/** The meta key holding the highest offset compaction removed of an organization's entries. */
const compactedKey = (org: string) => `compacted:${org}`;

/** Recovery would need entries that compaction removed: the snapshot they were folded into is missing or unreadable. */
export class CompactedLogError extends Error {
  override name = 'CompactedLogError';
}

/** The link an event record carries, or undefined (a format-0 record, or one too corrupt to vouch for its link). */
function linkIn(record: Uint8Array): Buffer | undefined {
  try {
    return eventRecordLink(record);
  } catch (error) {
    if (error instanceof CorruptRecordError) return undefined;
    throw error;
  }
}

export interface WalOptions {
  /** packed bytes per commit of saveSnapshots (default SNAPSHOT_BATCH_BYTES); tests lower it to see several commits */
  snapshotBatchBytes?: number;
  /** decodes the events of records that hold them as protobuf (the service's events codec); reading one without it throws */
  decodeEvent?: WireDecoder;
}

export function createWal(store: Store, warn: (message: string) => void, options: WalOptions = {}): Wal {
  const snapshotBatchBytes = options.snapshotBatchBytes ?? SNAPSHOT_BATCH_BYTES;
  const decodeEvent = options.decodeEvent;
  // The store syncs each commit before resolving it (see store.ts), so a resolved commit is durable.
  async function durable(commit: Promise<unknown>): Promise<void> {
    await commit;
  }
  /** org → the offset of the newest snapshot stored by this process */
  const written = new Map<string, number>();
  /** org → the offset of the newest snapshot known durable (stored and flushed, or read back) */
  const durableSnapshots = new Map<string, number>();
  const noteDurable = (org: string, offset: number) => {
    if (offset > (durableSnapshots.get(org) ?? 0)) durableSnapshots.set(org, offset);
  };
  const compactedThrough = (org: string): number => {
    const bytes = store.meta.getBinary(compactedKey(org));
    return bytes ? decodeRecord<number>(bytes) : 0;
  };
  /**
   * Two snapshots of one organization may be packed at once (a periodic one still packing when the stop's
   * starts): the older must not replace the newer. True, and noted, when this one is the newest.
   */
  function newest(org: string, snapshot: Snapshot): boolean {
    if ((written.get(org) ?? -1) > snapshot.offset) return false;
    written.set(org, snapshot.offset);
    return true;
  }
  function packSnapshot(snapshot: Snapshot, lists: readonly SlicedList[] | undefined): Promise<Buffer> | Buffer {
    // state last, so its last fields are the last bytes packed, where the lists are spliced in
    return lists === undefined ? encodeRecord(snapshot, 'records') : encodeRecordInSlices({ offset: snapshot.offset, event_offset: snapshot.event_offset, state: snapshot.state }, lists);
  }

  return {
    encodeEntry,
    encodeEvent: encodeEventRecord,

    append(writes, newOrgs = [], meta) {
      // One batch: its puts are committed in one transaction, in order. Unlike transaction(), whose
      // callback the write thread must wait for the JavaScript thread to run, a batch is handed over
      // whole now, so the write thread can commit it while this thread serves requests.
      return durable(
        store.root.batch(() => {
          for (const org of newOrgs) void store.orgs.put(org, encodeRecord({ created: Date.now() }));
          for (const w of writes) {
            void store.wal.put([w.org, w.offset], w.record);
            for (const e of w.events) void store.events.put([w.org, e.offset], e.record);
          }
          if (meta) for (const [key, value] of meta) void store.meta.put(key, encodeRecord(value));
        }),
      );
    },

    async installSnapshot(org, snapshot, { meta, chain, createdMs = Date.now() } = {}) {
      // Encoded as saveSnapshot packs it, so recovery reads it like the log's own.
      const bytes = encodeRecord(snapshot, 'records');
      const known = store.orgs.doesExist(org);
      await store.root.batch(() => {
        if (!known) void store.orgs.put(org, encodeRecord({ created: createdMs }));
        void store.snapshots.put(org, bytes);
        // Where the organization's next event chains from (its events up to here are not in this log).
        if (chain && snapshot.event_offset > 0) void store.chains.put([org, snapshot.event_offset], chain);
        if (meta) for (const [key, value] of meta) void store.meta.put(key, encodeRecord(value));
      });
      // Newer than any periodic snapshot still packing from before: that one must not replace it.
      written.set(org, Math.max(written.get(org) ?? 0, snapshot.offset));
      noteDurable(org, snapshot.offset);
    },

    organizations() {
      return [...store.orgs.getKeys()];
    },

    loadSnapshot<S>(org: string) {
      const bytes = store.snapshots.getBinary(org);
      if (!bytes) return undefined;
      try {
        const snapshot = decodeRecord<Snapshot<S>>(bytes);
        noteDurable(org, snapshot.offset);
        return snapshot;
      } catch (error) {
        warn(`snapshot of ${org} is corrupt (${(error as Error).message}); replaying its WAL from the start`);
        return undefined;
      }
    },

    async saveSnapshot(org, snapshot, lists) {
      const bytes = await packSnapshot(snapshot, lists);
      if (!newest(org, snapshot)) return;
      await durable(store.snapshots.put(org, bytes));
      noteDurable(org, snapshot.offset);
    },

    async saveSnapshots(items) {
      const commits: Array<Promise<unknown>> = [];
      let batch: Array<[string, Buffer, number]> = [];
      let bytes = 0;
      const commit = () => {
        const puts = batch;
        batch = [];
        bytes = 0;
        commits.push(store.root.batch(() => {
          for (const [org, record] of puts) void store.snapshots.put(org, record);
        }).then(() => {
          for (const [org, , offset] of puts) noteDurable(org, offset);
        }));
      };
      for (const { org, snapshot, lists } of items) {
        let record: Buffer;
        try {
          record = await packSnapshot(snapshot, lists);
        } catch (error) {
          warn(`snapshot of ${org} failed: ${String(error)}`);
          continue;
        }
        if (!newest(org, snapshot)) continue;
        batch.push([org, record, snapshot.offset]);
        bytes += record.length;
        if (bytes >= snapshotBatchBytes) commit();
      }
      if (batch.length > 0) commit();
      await durable(Promise.all(commits));
    },

    async replay<C>(org: string, after: number, afterEvent: number, fn: (offset: number, entry: WalEntry<C>) => void) {
      // Cutting here would throw away the whole log: the entries are gone because a snapshot held them.
      const compacted = compactedThrough(org);
      if (after < compacted) throw new CompactedLogError(`WAL of ${org} was compacted through entry ${compacted}, but recovery starts after ${after}: its snapshot is missing or unreadable; restore the data dir from a backup or a replica`);
      let expected = after + 1;
      let lastEventOffset = afterEvent;
      let cutAt: number | undefined;
      for (const { key, value } of store.wal.getRange({ start: [org, after + 1], end: [org, Number.MAX_SAFE_INTEGER] })) {
        const offset = key[1];
        if (offset !== expected) {
          cutAt = expected;
          warn(`WAL of ${org}: entry ${expected} is missing; cutting from ${offset} on`);
          break;
        }
        let entry: WalEntry<C>;
        try {
          entry = decodeEntry<C>(value);
        } catch (error) {
          if (!(error instanceof CorruptRecordError)) throw error;
          cutAt = offset;
          warn(`WAL of ${org}: entry ${offset} is corrupt (${error.message}); cutting it and everything after it`);
          break;
        }
        fn(offset, entry);
        lastEventOffset = entry.ev;
        expected++;
      }
      const lastOffset = expected - 1;
      if (cutAt !== undefined) {
        await durable(
          store.root.transaction(() => {
            for (const key of store.wal.getKeys({ start: [org, cutAt as number], end: [org, Number.MAX_SAFE_INTEGER] })) store.wal.removeSync(key);
            for (const key of store.events.getKeys({ start: [org, lastEventOffset + 1], end: [org, Number.MAX_SAFE_INTEGER] })) store.events.removeSync(key);
            for (const key of store.chains.getKeys({ start: [org, lastEventOffset + 1], end: [org, Number.MAX_SAFE_INTEGER] })) store.chains.removeSync(key);
          }),
        );
      }
      return cutAt === undefined ? { lastOffset, lastEventOffset } : { lastOffset, lastEventOffset, cutAt };
    },

    entries<C>(org: string, after: number, limit: number) {
      const out: Array<{ offset: number; entry: WalEntry<C> }> = [];
      for (const { key, value } of store.wal.getRange({ start: [org, after + 1], end: [org, Number.MAX_SAFE_INTEGER], limit })) {
        out.push({ offset: key[1], entry: decodeEntry<C>(value) });
      }
      return out;
    },

    records(org, after, limit) {
      const out: Array<{ offset: number; record: Buffer }> = [];
      for (const { key, value } of store.wal.getRange({ start: [org, after + 1], end: [org, Number.MAX_SAFE_INTEGER], limit })) {
        out.push({ offset: key[1], record: value });
      }
      return out;
    },

    events(org, from, limit) {
      const out: Array<{ offset: number; event: unknown; chain?: Buffer }> = [];
      for (const { key, value } of store.events.getRange({ start: [org, from], end: [org, Number.MAX_SAFE_INTEGER], limit })) {
        const stored = decodeEventRecord(value, decodeEvent);
        // Events written before links moved into their records have theirs (if any) in the chains database.
        const chain = stored.chain ?? store.chains.getBinary(key);
        out.push(chain ? { offset: key[1], event: stored.event, chain: Buffer.from(chain) } : { offset: key[1], event: stored.event });
      }
      return out;
    },

    chainAt(org, offset) {
      const record = store.events.getBinary([org, offset]);
      const inline = record ? linkIn(record) : undefined;
      if (inline) return inline;
      const chain = store.chains.getBinary([org, offset]);
      return chain ? Buffer.from(chain) : undefined;
    },

    lastChainOffset(org) {
      let last: number | undefined;
      for (const key of store.chains.getKeys({ start: [org, Number.MAX_SAFE_INTEGER], end: [org, 0], reverse: true, limit: 1 })) last = key[1];
      // The newest event carries its link unless it was written before links moved into event records.
      for (const { key, value } of store.events.getRange({ start: [org, Number.MAX_SAFE_INTEGER], end: [org, 0], reverse: true, limit: 1 })) {
        if (key[1] > (last ?? 0) && linkIn(value)) last = key[1];
      }
      return last;
    },

    putChains(org, links) {
      return durable(
        store.root.batch(() => {
          for (const l of links) void store.chains.put([org, l.offset], l.chain);
        }),
      );
    },

    firstEventOffset(org) {
      for (const key of store.events.getKeys({ start: [org, 0], end: [org, Number.MAX_SAFE_INTEGER], limit: 1 })) return key[1];
      return undefined;
    },

    async removeEvents(org, below, limit) {
      let removed = 0;
      // Only the commit is awaited, not the flush: losing a removal to a crash merely keeps an event longer.
      await store.root.transaction(() => {
        // The link just below the oldest retained event stays, and so does the newest: the chain goes on from it.
        // Links kept in event records leave with them, so the last removed event's link moves to the chains database.
        let lastRemoved: { offset: number; link: Buffer | undefined } | undefined;
        for (const { key, value } of store.events.getRange({ start: [org, 0], end: [org, below], limit })) {
          lastRemoved = { offset: key[1], link: linkIn(value) };
          store.events.removeSync(key);
          removed++;
        }
        if (lastRemoved?.link) store.chains.putSync([org, lastRemoved.offset], lastRemoved.link);
        let last: number | undefined;
        for (const key of store.chains.getKeys({ start: [org, Number.MAX_SAFE_INTEGER], end: [org, 0], reverse: true, limit: 1 })) last = key[1];
        const keepFrom = lastRemoved?.link ? lastRemoved.offset : Math.min(below - 1, last ?? 0);
        for (const key of store.chains.getKeys({ start: [org, 0], end: [org, keepFrom], limit: limit + 1 })) store.chains.removeSync(key);
      });
      return removed;
    },

    snapshotOffset(org) {
      if (!durableSnapshots.has(org)) {
        // Read once: a snapshot installed behind this log's back (a replica's) only makes the answer low, never high.
        const bytes = store.snapshots.getBinary(org);
        let offset = 0;
        try {
          if (bytes) offset = decodeRecord<Snapshot>(bytes).offset;
        } catch {
          offset = 0;
        }
        durableSnapshots.set(org, Math.max(offset, durableSnapshots.get(org) ?? 0));
      }
      return durableSnapshots.get(org) ?? 0;
    },

    firstOffset(org) {
      for (const key of store.wal.getKeys({ start: [org, 0], end: [org, Number.MAX_SAFE_INTEGER], limit: 1 })) return key[1];
      return undefined;
    },

    async removeEntries(org, through, limit) {
      // Keys are read first and the removal handed to the write thread whole (as append does), so the JavaScript
      // thread never waits inside a write transaction for it.
      const keys = [...store.wal.getKeys({ start: [org, 0], end: [org, through + 1], limit })];
      const last = keys.at(-1);
      if (last === undefined) return 0;
      const marker = encodeRecord(Math.max(last[1], compactedThrough(org)));
      await store.root.batch(() => {
        for (const key of keys) void store.wal.remove(key);
        void store.meta.put(compactedKey(org), marker);
      });
      return keys.length;
    },

    getMeta<T>(key: string) {
      const bytes = store.meta.getBinary(key);
      return bytes ? decodeRecord<T>(bytes) : undefined;
    },

    putMeta(key, value) {
      return durable(store.meta.put(key, encodeRecord(value)));
    },
  };
}
