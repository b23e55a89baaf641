// Waiting for a write to reach the consistency level a request asked for.
import { ServiceError } from '../errors.js';

/** The level a write waits for before it is answered, and how long it may wait; a request carries one. */
export interface Consistency {
  level: 'local_region' | 'all_regions';
  timeoutMs: number;
}

export interface ConsistencyWaiter {
  /** Resolves when the entry at `offset` of `org` has reached the level; a 408 past the timeout. */
  wait(org: string, offset: number, consistency: Consistency): Promise<void>;
}

/** With no replica regions, all_regions is reached when the local commit is. */
export const localOnly: ConsistencyWaiter = {
  wait: async () => undefined,
};

export function consistencyTimeout(consistency: Consistency): ServiceError {
  return new ServiceError('ERR_TIMEOUT', `${consistency.level} consistency was not reached within ${consistency.timeoutMs / 1000} s; the write is committed locally and may still reach every region`);
}
