// Consistency waits across regions. A request waiting for all_regions holds no thread and no lock: it is
// an entry in a sorted queue per (organization, region), resolved by acknowledgements, plus one timer.
import { ServiceError } from '../errors.js';
import { systemClock, type Clock, type TimerHandle } from '../lib/clock.js';
import type { Histogram } from '../lib/metrics.js';
import { consistencyTimeout, type Consistency, type ConsistencyWaiter } from './consistency.js';

/** What the waiter needs from a replication link: its acknowledged offsets and news of new ones. */
export interface AckSource {
  readonly region: string;
  acked(org: string): number;
  onAck(listener: (org: string, offset: number) => void): void;
}

interface Waiter {
  org: string;
  offset: number;
  /** regions that have not acknowledged the offset yet */
  remaining: number;
  /** the queues this waiter is still in, for removal at the timeout */
  regions: string[];
  started: number;
  timer: TimerHandle | undefined;
  resolve(): void;
  reject(error: unknown): void;
}

export interface RegionWaiter extends ConsistencyWaiter {
  /** waits outstanding, over every region */
  pending(): number;
  /** answers every outstanding wait with 503 (the service is stopping) */
  close(): void;
}

/** Index of the first waiter whose offset is >= offset. */
function lowerBound(queue: readonly Waiter[], offset: number): number {
  let lo = 0;
  let hi = queue.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((queue[mid] as Waiter).offset < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function createRegionWaiter(sources: readonly AckSource[], latency: Histogram, clock: Pick<Clock, 'monoMs' | 'setTimeout' | 'clearTimeout'> = systemClock): RegionWaiter {
  /** region → organization → waiters sorted by offset */
  const queues = new Map<string, Map<string, Waiter[]>>(sources.map((s) => [s.region, new Map()]));
  const live = new Set<Waiter>();

  // Every local_region write passes here: its series is bound once.
  const localReached = latency.bind({ level: 'local_region', outcome: 'reached' });
  const observe = (w: Waiter, outcome: string) => latency.observe((clock.monoMs() - w.started) / 1000, { level: 'all_regions', outcome });

  const settle = (w: Waiter) => {
    live.delete(w);
    clock.clearTimeout(w.timer);
  };

  const remove = (w: Waiter) => {
    for (const region of w.regions) {
      const byOrg = queues.get(region) as Map<string, Waiter[]>;
      const queue = byOrg.get(w.org);
      if (!queue) continue;
      for (let i = lowerBound(queue, w.offset); i < queue.length && (queue[i] as Waiter).offset === w.offset; i++) {
        if (queue[i] === w) {
          queue.splice(i, 1);
          break;
        }
      }
      if (queue.length === 0) byOrg.delete(w.org);
    }
  };

  for (const source of sources) {
    const byOrg = queues.get(source.region) as Map<string, Waiter[]>;
    source.onAck((org, acked) => {
      const queue = byOrg.get(org);
      if (!queue) return;
      let n = 0;
      while (n < queue.length && (queue[n] as Waiter).offset <= acked) n++;
      if (n === 0) return;
      const reached = queue.splice(0, n);
      if (queue.length === 0) byOrg.delete(org);
      for (const w of reached) {
        w.regions = w.regions.filter((r) => r !== source.region);
        if (--w.remaining > 0) continue;
        settle(w);
        observe(w, 'reached');
        w.resolve();
      }
    });
  }

  return {
    wait(org: string, offset: number, consistency: Consistency): Promise<void> | undefined {
      if (consistency.level === 'local_region') {
        localReached.observe(0);
        return undefined;
      }
      const started = clock.monoMs();
      const missing = sources.filter((s) => s.acked(org) < offset).map((s) => s.region);
      if (missing.length === 0) {
        latency.observe(0, { level: 'all_regions', outcome: 'reached' });
        return undefined;
      }
      return new Promise<void>((resolve, reject) => {
        const w: Waiter = { org, offset, remaining: missing.length, regions: missing, started, timer: undefined, resolve, reject };
        for (const region of missing) {
          const byOrg = queues.get(region) as Map<string, Waiter[]>;
          let queue = byOrg.get(org);
          if (!queue) byOrg.set(org, (queue = []));
          // Offsets mostly arrive in increasing order, so this is nearly always a push.
          const last = queue[queue.length - 1];
          if (!last || last.offset <= offset) queue.push(w);
          else queue.splice(lowerBound(queue, offset + 1), 0, w);
        }
        live.add(w);
        w.timer = clock.setTimeout(() => {
          settle(w);
          remove(w);
          observe(w, 'timeout');
          reject(consistencyTimeout(consistency));
        }, consistency.timeoutMs);
      });
    },

    pending: () => live.size,

    close() {
      for (const w of [...live]) {
        settle(w);
        remove(w);
        observe(w, 'aborted');
        w.reject(new ServiceError('ERR_UNAVAILABLE', 'the service is stopping; the write is committed locally and may still reach every region'));
      }
    },
  };
}
