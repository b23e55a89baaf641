// A real registry over a WAL in a store of the test's, for tests of the actor, the commit bus and the regions
// without a whole service: the service's defaults, with what a test varies given as overrides.
import assert from 'node:assert/strict';
import { createEventStamper } from '../../src/events/stamp.js';
import { systemClock } from '../../src/lib/clock.js';
import { createIdSource } from '../../src/lib/ids.js';
import { createCommitBus } from '../../src/org/commit-bus.js';
import { Registry, type RegistryDeps } from '../../src/org/registry.js';
import { createWal } from '../../src/wal/log.js';
import type { Store } from '../../src/wal/store.js';

export function testRegistry(store: Store, overrides: Partial<RegistryDeps> = {}): Registry {
  const ids = overrides.ids ?? createIdSource();
  return new Registry({
    wal: createWal(store, () => {}),
    clock: systemClock,
    ids,
    stamp: createEventStamper(ids),
    regions: ['europe-belgium'],
    mailboxLimit: 100,
    snapshotInterval: 1000,
    commits: createCommitBus(assert.fail),
    fatal: (error) => assert.fail(`fatal: ${String(error)}`),
    log: () => {},
    warn: () => {},
    ...overrides,
  });
}

/** Counts the write batches the WAL hands LMDB (each one transaction, one durable commit). */
export function countCommits(store: Store): { count: number } {
  const counter = { count: 0 };
  const batch = store.root.batch.bind(store.root);
  store.root.batch = ((fn: () => void) => {
    counter.count++;
    return batch(fn);
  }) as typeof store.root.batch;
  return counter;
}
