// A replica region's own LMDB environment, `${dataDir}/replica-${region}.mdb`: the WAL records it has
// applied, byte for byte as the local log framed them, and its applied offset per organization.
import { encodeRecord, decodeRecord } from '../wal/codec.js';
import { createWal, type Snapshot, type Wal } from '../wal/log.js';
import { openStore, type Store } from '../wal/store.js';

export interface ReplicaWrite {
  org: string;
  offset: number;
  record: Buffer;
}

export interface ReplicaStore {
  /** the replica's log, read through the same interface as the local one (replay, snapshots, records) */
  readonly wal: Wal;
  /** the applied offset saved with the last commit that touched the organization */
  savedOffset(org: string): number;
  /**
   * Writes the entries and the new applied offsets in one transaction; resolves once it is durable, so an
   * acknowledgement sent after it can never be taken back by a crash.
   */
  commit(writes: ReplicaWrite[], applied: Map<string, number>, newOrgs: string[]): Promise<void>;
  /**
   * Installs a snapshot shipped by the origin and its offset as the applied offset, in one transaction: a
   * crash leaves either the old floor and log or the snapshot and the new floor, never a mix.
   */
  install(org: string, snapshot: Snapshot): Promise<void>;
  close(): Promise<void>;
}

const appliedKey = (org: string) => `applied:${org}`;

export function replicaStoreName(region: string): string {
  return `replica-${region}`;
}

/** `nowMs` stamps the record of an organization the replica sees for the first time. */
export function openReplicaStore(dataDir: string, region: string, durable: boolean, warn: (message: string) => void, nowMs: () => number = Date.now): ReplicaStore {
  const store: Store = openStore(dataDir, replicaStoreName(region), durable);
  const wal = createWal(store, warn);
  return {
    wal,
    savedOffset(org) {
      const bytes = store.meta.getBinary(appliedKey(org));
      return bytes ? decodeRecord<number>(bytes) : 0;
    },
    async commit(writes, applied, newOrgs) {
      await store.root.transaction(() => {
        const created = encodeRecord({ created: nowMs() });
        for (const org of newOrgs) store.orgs.putSync(org, created);
        for (const w of writes) store.wal.putSync([w.org, w.offset], w.record);
        for (const [org, offset] of applied) store.meta.putSync(appliedKey(org), encodeRecord(offset));
      });
    },
    install: (org, snapshot) => wal.installSnapshot(org, snapshot, { meta: [[appliedKey(org), snapshot.offset]], createdMs: nowMs() }),
    close: () => store.close(),
  };
}
