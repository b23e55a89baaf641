// Waiting for a write to reach the consistency level a request asked for.
import { ServiceError } from '../errors.js';

/** The level a write waits for before it is answered, and how long it may wait; a request carries one. */
export interface Consistency {
  level: 'local_region' | 'all_regions';
  timeoutMs: number;
  /**
   * The write a wait was for, recorded by the waiter before it waits (so a 408 has it too): the front answers it
   * as a Service-Consistency-Token. A frozen consistency (the one reads share) records nothing.
   */
  written?: { org: string; offset: number };
}

export interface ConsistencyWaiter {
  /**
   * Resolves when the entry at `offset` of `org` has reached the level; a 408 past the timeout. Undefined when
   * it has reached it already (every local_region write): the caller goes on at once instead of a turn later.
   */
  wait(org: string, offset: number, consistency: Consistency): Promise<void> | undefined;
}

/**
 * Records on each request's consistency the write it waits for (the highest offset, when a request waits more than
 * once): every write path waits through here, so every write answers a consistency token without doing anything.
 */
export function recordingWrites<W extends ConsistencyWaiter>(inner: W): W {
  // The waiter's other methods (pending, close) stay as they are.
  return {
    ...inner,
    wait(org: string, offset: number, consistency: Consistency) {
      const seen = consistency.written;
      if ((seen === undefined || seen.offset < offset || seen.org !== org) && !Object.isFrozen(consistency)) consistency.written = { org, offset };
      return inner.wait(org, offset, consistency);
    },
  };
}

/** With no replica regions, all_regions is reached when the local commit is. */
export const localOnly: ConsistencyWaiter = {
  wait: () => undefined,
};

export function consistencyTimeout(consistency: Consistency): ServiceError {
  return new ServiceError('ERR_TIMEOUT', `${consistency.level} consistency was not reached within ${consistency.timeoutMs / 1000} s; the write is committed locally and may still reach every region`);
}
