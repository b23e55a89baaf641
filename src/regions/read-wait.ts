// Read-your-writes: a read carrying a consistency token is answered once the region serving it has applied the
// token's offset. The origin has applied every write it acknowledged, so there it costs one comparison; a
// process serving a replica region waits on its replica's applied offsets (an AckSource), up to the timeout.
import { ServiceError } from '../errors.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { Histogram } from '../lib/metrics.js';
import { createRegionWaiter, type AckSource } from './waiters.js';

export interface ReadWaiter {
  /** Resolves once this region has applied `offset` of `org`; a 408 past timeoutMs. */
  wait(org: string, offset: number, timeoutMs: number): Promise<void>;
}

function notApplied(region: string, offset: number, timeoutMs: number): ServiceError {
  return new ServiceError('ERR_TIMEOUT', `region ${region} has not applied entry ${offset} of the consistency token within ${timeoutMs / 1000} s; retry, or read where the write was made`);
}

/** The origin region: its own log holds every write it answered. */
export function originReads(region: string, applied: (org: string) => number): ReadWaiter {
  return {
    wait(org, offset, timeoutMs) {
      // An authentic token past the origin's log means the log lost entries (a restore from an older copy):
      // waiting would not bring them back.
      return offset <= applied(org) ? Promise.resolve() : Promise.reject(notApplied(region, offset, timeoutMs));
    },
  };
}

/** A replica region: waits on what its replica has applied. */
export function replicaReads(source: AckSource, latency: Histogram, clock: Pick<Clock, 'monoMs' | 'setTimeout' | 'clearTimeout'> = systemClock): ReadWaiter {
  const waiter = createRegionWaiter([source], latency, clock);
  return {
    async wait(org, offset, timeoutMs) {
      if (source.acked(org) >= offset) return;
      try {
        await waiter.wait(org, offset, { level: 'all_regions', timeoutMs });
      } catch (error) {
        if (error instanceof ServiceError && error.status === 408) throw notApplied(source.region, offset, timeoutMs);
        throw error;
      }
    },
  };
}
