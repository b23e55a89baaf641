// A standby further behind than its region's commit stream retains (down longer than SERVICE_NATS_RETENTION, or a
// new process with an empty data dir): the stream's oldest message of an organization is past its local log + 1,
// and the entries between are gone. As a replica region does (jetstream/catch-up.ts), it fetches the snapshot of
// the process writing the organization, installs it, and applies the stream on from there; the apply by offset
// skips what the snapshot covers. Every process of the region serves its own log's snapshots on a subject of its own.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Registry } from '../../org/registry.js';
import type { EncodedWrite, Wal } from '../../wal/log.js';
import { fetchSnapshot, processSnapshotSubject, serveSnapshots } from '../jetstream/snapshot-source.js';
import type { LeaseBucket } from './leases.js';

export interface StandbySnapshotOptions {
  nc: NatsConnection;
  region: string;
  process: string;
  wal: Wal;
  bucket: Pick<LeaseBucket, 'read'>;
  registry(): Registry | undefined;
  warn(message: string): void;
  /** how long one part of a snapshot may take to arrive */
  requestTimeoutMs?: number;
}

export interface StandbySnapshots {
  /**
   * Before a batch of the stream applies: each organization whose first write in it is past its local log + 1
   * gets its writer's snapshot installed and its actor rebuilt from it. A fetch that fails leaves the gap (the
   * caller warns of it) and is tried again at a later batch, after a pause.
   */
  fill(writes: readonly EncodedWrite[], head: (org: string) => number): Promise<void>;
  /** snapshots installed since this process started (GET /health) */
  installed(): number;
  stop(): void;
}

/** After a failed fetch, batches of the organization pass without asking again for this long. */
const RETRY_MS = 2000;

export function standbySnapshots(options: StandbySnapshotOptions): StandbySnapshots {
  const { nc, region, process, wal, warn } = options;
  const timeout = options.requestTimeoutMs ?? 10_000;
  const where = `process ${process} of region ${region}`;
  const served: Subscription = serveSnapshots(nc, processSnapshotSubject(region, process), where, wal, warn);
  const failedAt = new Map<string, number>();
  let installed = 0;

  async function install(org: string, at: number, first: number): Promise<void> {
    const lease = await options.bucket.read(org);
    const holder = lease?.holder;
    if (!holder || holder === process) throw new Error(`no other process writes ${org} (lease holder: ${holder || 'none'})`);
    const snapshot = await fetchSnapshot(nc, processSnapshotSubject(region, holder), org, timeout);
    // Behind the gap still (the writer's log trails its PubAcks by a flush): a later batch asks again.
    if (snapshot.offset + 1 < first) throw new Error(`the snapshot of ${holder} is at entry ${snapshot.offset}, before the stream's ${first}`);
    if (snapshot.offset <= at) return;
    await wal.installSnapshot(org, snapshot);
    await options.registry()?.reload(org);
    installed++;
    warn(`${process}: ${org} was at entry ${at} and the commit stream of ${region} holds it from entry ${first} on; installed the snapshot of ${holder} at entry ${snapshot.offset}`);
  }

  return {
    async fill(writes, head) {
      const firsts = new Map<string, number>();
      for (const w of writes) if (!firsts.has(w.org)) firsts.set(w.org, w.offset);
      for (const [org, first] of firsts) {
        const at = head(org);
        if (first <= at + 1) continue;
        if (performance.now() - (failedAt.get(org) ?? -Infinity) < RETRY_MS) continue;
        try {
          await install(org, at, first);
          failedAt.delete(org);
        } catch (error) {
          failedAt.set(org, performance.now());
          warn(`${process}: ${org} is at entry ${at}, the commit stream of ${region} holds it from entry ${first} on, and its snapshot could not be installed (${(error as Error).message})`);
        }
      }
    },
    installed: () => installed,
    stop() {
      served.unsubscribe();
    },
  };
}
