// WAL compaction: an organization's entries up to its newest durable snapshot are no longer needed to recover
// it, and once every reader downstream holds them (each replica region has applied them), no longer needed to
// ship either. A periodic job removes them in small transactions, each awaited, so requests and group commits
// run between them; LMDB reuses the freed pages, so a log written for months stays the size of its tail.
// The event log is not touched: it keeps its own retention (events/log.ts).
import type { Wal } from './log.js';
import { periodic } from '../lib/periodic.js';

/** One log to compact: the local one, or an in-process replica's. */
export interface CompactedLog {
  wal: Pick<Wal, 'snapshotOffset' | 'firstOffset' | 'removeEntries'>;
  organizations(): Iterable<string>;
  /**
   * The highest offset of the organization every reader downstream holds (each replica region's acknowledged
   * offset); absent when nothing reads this log but its own recovery.
   */
  shipped?(org: string): number;
}

export interface CompactionDeps {
  logs: readonly CompactedLog[];
  warn(message: string): void;
  /** entries removed per LMDB transaction; default 1000 */
  batchSize?: number;
}

export interface Compaction {
  /** One pass over every organization; resolves to the number of entries removed. */
  compact(): Promise<number>;
  /** Runs compact() every intervalMs (never two passes at once) until stop(); 0 never runs it. */
  start(intervalMs: number): void;
  stop(): Promise<void>;
}

/** How far the organization's log may be compacted: what recovery and every replica region can do without. */
export function compactableThrough(log: Pick<CompactedLog, 'wal' | 'shipped'>, org: string): number {
  const snapshot = log.wal.snapshotOffset(org);
  return log.shipped ? Math.min(snapshot, log.shipped(org)) : snapshot;
}

export function createCompaction(deps: CompactionDeps): Compaction {
  const batchSize = deps.batchSize ?? 1000;

  async function compactOrg(log: CompactedLog, org: string): Promise<number> {
    const through = compactableThrough(log, org);
    const first = log.wal.firstOffset(org);
    if (first === undefined || first > through) return 0;
    let removed = 0;
    for (;;) {
      const n = await log.wal.removeEntries(org, through, batchSize);
      removed += n;
      if (n < batchSize) return removed;
    }
  }

  async function pass(): Promise<number> {
    let removed = 0;
    for (const log of deps.logs) {
      for (const org of [...log.organizations()]) {
        try {
          removed += await compactOrg(log, org);
        } catch (error) {
          deps.warn(`compacting the WAL of ${org} failed: ${String(error)}`);
        }
      }
    }
    return removed;
  }

  const job = periodic(pass);
  return { compact: job.run, start: job.start, stop: job.stop };
}
