// The service's own WAL store (openStore: the same LMDB options) in a temporary directory, for the benchmarks
// that measure commits or stand in for the service's writes; close() also removes the directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../src/wal/store.js';

export interface TempStore {
  store: Store;
  dir: string;
  close(): Promise<void>;
}

/** `durable`: sync durability, a commit resolving only once it is on disk, as the service runs by default. */
export function openTempStore(prefix: string, durable: boolean): TempStore {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const store = openStore(dir, 'local', durable);
  return {
    store,
    dir,
    async close() {
      try {
        await store.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
