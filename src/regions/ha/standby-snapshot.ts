// A standby further behind than its region's commit stream retains (down longer than SERVICE_NATS_RETENTION, or a
// new process with an empty data dir): the stream's oldest message of an organization is past its local log + 1,
// and the entries between are gone. As a replica region does (jetstream/catch-up.ts), it fetches the snapshot of
// the process writing the organization, installs it, and applies the stream on from there; the apply by offset
// skips what the snapshot covers. An organization idle longer than the retention has no message left in the stream
// to show the gap: where the follower starts, each such one is compared with its writer's log. Every process of the
// region serves its own log's snapshots on a subject of its own.
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Registry } from '../../org/registry.js';
import type { EncodedWrite, Wal } from '../../wal/log.js';
import { fetchSnapshot, processSnapshotSubject, serveSnapshots, type ShippedSnapshot } from '../jetstream/snapshot-source.js';
import { commitStreamName, commitSubject, leaseBucket, leaseStreamName } from './commit-stream.js';
import type { LeaseBucket } from './leases.js';

export interface StandbySnapshotOptions {
  nc: NatsConnection;
  jsm: JetStreamManager;
  region: string;
  process: string;
  wal: Wal;
  bucket: Pick<LeaseBucket, 'read'>;
  registry(): Registry | undefined;
  /** the meta value that stores the organization's position in the stream (the follower starts past the lowest) */
  position(org: string, seq: number): [key: string, value: unknown];
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
  /**
   * Before the follower starts at the stream's sequence `last`: each organization of the region (known here, or
   * with a lease in the bucket) of which the stream holds no message gets its writer's snapshot when the writer's
   * log is past this one's.
   */
  start(known: Iterable<string>, head: (org: string) => number, last: number): Promise<void>;
  /** snapshots installed since this process started (GET /health) */
  installed(): number;
  stop(): void;
}

/** After a failed fetch, batches of the organization pass without asking again for this long. */
const RETRY_MS = 2000;

/** Organizations compared with their writers at once at start. */
const START_CONCURRENCY = 16;

export function standbySnapshots(options: StandbySnapshotOptions): StandbySnapshots {
  const { nc, region, process, wal, warn } = options;
  const timeout = options.requestTimeoutMs ?? 10_000;
  const where = `process ${process} of region ${region}`;
  const served: Subscription = serveSnapshots(nc, processSnapshotSubject(region, process), where, wal, warn);
  const failedAt = new Map<string, number>();
  let installed = 0;

  /** The process writing the organization, when another one does. */
  async function writer(org: string): Promise<string | undefined> {
    const holder = (await options.bucket.read(org))?.holder;
    return holder && holder !== process ? holder : undefined;
  }

  /** `why` ends the log line: what the stream holds of the organization. */
  async function install(org: string, at: number, holder: string, { snapshot, chain }: ShippedSnapshot, why: string, position?: number): Promise<void> {
    if (snapshot.offset <= at) return;
    await wal.installSnapshot(org, snapshot, { meta: position === undefined ? [] : [options.position(org, position)], ...(chain ? { chain } : {}) });
    await options.registry()?.reload(org);
    installed++;
    warn(`${process}: ${org} was at entry ${at} and ${why}; installed the snapshot of ${holder} at entry ${snapshot.offset}`);
  }

  async function fillGap(org: string, at: number, first: number): Promise<void> {
    const holder = await writer(org);
    if (!holder) throw new Error(`no other process writes ${org}`);
    const shipped = await fetchSnapshot(nc, processSnapshotSubject(region, holder), org, timeout);
    // Behind the gap still (the writer's log trails its PubAcks by a flush): a later batch asks again.
    if (shipped.snapshot.offset + 1 < first) throw new Error(`the snapshot of ${holder} is at entry ${shipped.snapshot.offset}, before the stream's ${first}`);
    await install(org, at, holder, shipped, `the commit stream of ${region} holds it from entry ${first} on`);
  }

  /** The organizations with a lease in the bucket: a key of one token (the region's own values have a dot). */
  async function leased(): Promise<string[]> {
    const prefix = `$KV.${leaseBucket(region)}.`;
    const info = await options.jsm.streams.info(leaseStreamName(region), { subjects_filter: `${prefix}*` });
    return Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(prefix.length));
  }

  async function compare(org: string, at: number, last: number): Promise<void> {
    // No writer to ask (every process stopped, or this one held it): nothing newer is known anywhere to follow.
    const holder = await writer(org);
    if (!holder) return;
    const shipped = await fetchSnapshot(nc, processSnapshotSubject(region, holder), org, timeout, at);
    if (shipped) await install(org, at, holder, shipped, `the commit stream of ${region} holds no message of it`, last);
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
          await fillGap(org, at, first);
          failedAt.delete(org);
        } catch (error) {
          failedAt.set(org, performance.now());
          warn(`${process}: ${org} is at entry ${at}, the commit stream of ${region} holds it from entry ${first} on, and its snapshot could not be installed (${(error as Error).message})`);
        }
      }
    },
    async start(known, head, last) {
      let orgs: string[];
      try {
        const info = await options.jsm.streams.info(commitStreamName(region), { subjects_filter: commitSubject(region, '*') });
        const retained = info.state.subjects ?? {};
        orgs = [...new Set([...known, ...(await leased())])].filter((org) => !(commitSubject(region, org) in retained));
      } catch (error) {
        warn(`${process}: the organizations the commit stream of ${region} holds no message of could not be listed (${(error as Error).message}); following it without comparing them with their writers`);
        return;
      }
      const next = orgs.values();
      const worker = async () => {
        for (let org = next.next(); !org.done; org = next.next()) {
          try {
            await compare(org.value, head(org.value), last);
          } catch (error) {
            warn(`${process}: ${org.value} has no message in the commit stream of ${region} and could not be compared with its writer's log (${(error as Error).message})`);
          }
        }
      };
      await Promise.all(Array.from({ length: START_CONCURRENCY }, worker));
    },
    installed: () => installed,
    stop() {
      served.unsubscribe();
    },
  };
}
