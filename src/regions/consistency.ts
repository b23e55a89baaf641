// Waiting for a write to reach the consistency level a request asked for.
import { ServiceError } from '../errors.js';
import type { Consistency } from '../http/route.js';

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
