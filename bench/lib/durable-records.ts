// One durable record per token for the minimal mint server's durable variant (the floor durability sets): the
// service's own WAL store and commit path (openStore, Wal.append) in a temporary directory, batched as its actor batches.
import { createGatheringQueue } from '../../src/org/gather.js';
import { createWal } from '../../src/wal/log.js';
import { openTempStore } from './temp-store.js';

/**
 * What the service writes per mint-token, measured from a service's data dir read back after minting: a 153-byte
 * WAL entry (RecordToken's change) and a 325-byte TokenMinted event record (its chain link and protobuf bytes; it
 * was 521 bytes of msgpack before records kept the protobuf). The floor writes them as one record under one key.
 */
export const MINT_RECORD_BYTES = 153 + 325;

/**
 * How the records are grouped into commits. `gather`: as the service's organization actor does (its queue, src/org/gather.ts):
 * one commit in flight; what arrives meanwhile is the next batch, let grow while each event-loop turn adds to it,
 * up to GATHER_MIN records or GATHER_MAX_MS; the first record after a quiet spell commits at the end of its turn.
 * `turn`: each record is appended on its own, and lmdb-js alone groups them (the puts of one turn, and those
 * queued while its write thread flushes): the least batching any durable server gets.
 */
export type Grouping = 'gather' | 'turn';
export const GROUPINGS: readonly Grouping[] = ['gather', 'turn'];

export interface DurableRecords {
  /** Resolves once one more record is durable (its commit synced to disk). */
  record(): Promise<void>;
  /** records handed to Wal.append so far (durable once their append resolves) */
  readonly records: number;
  /** Wal.append calls so far: with `gather` each is a commit of its own; with `turn` lmdb-js joins them */
  readonly appends: number;
  /** Closes the store and removes its directory. */
  close(): Promise<void>;
}

const ORG = 'minimal';

export function createDurableRecords(grouping: Grouping, recordBytes = MINT_RECORD_BYTES): DurableRecords {
  // Sync durability: a commit resolves only once it is on disk.
  const temp = openTempStore('minimal-durable-', true);
  const wal = createWal(temp.store, (message) => console.error(message));
  const bytes = Buffer.alloc(recordBytes, 0x5a);
  let offset = 0;
  let appends = 0;
  let records = 0;

  function append(count: number): Promise<void> {
    const writes = Array.from({ length: count }, () => ({ org: ORG, offset: ++offset, record: bytes, events: [] }));
    appends++;
    records += count;
    return wal.append(writes);
  }

  // The actor's own mailbox, committing each batch as one append.
  const queue = createGatheringQueue<{ resolve(): void; reject(error: unknown): void }>(async (batch) => {
    try {
      await append(batch.length);
      for (const p of batch) p.resolve();
    } catch (error) {
      for (const p of batch) p.reject(error);
    }
  });

  return {
    record() {
      if (grouping === 'turn') return append(1);
      return new Promise<void>((resolve, reject) => queue.push({ resolve, reject }));
    },
    get appends() {
      return appends;
    },
    get records() {
      return records;
    },
    close: () => temp.close(),
  };
}
