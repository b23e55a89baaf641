// Writes webhook delivery positions to the outbox store in the background, coalesced: however many deliveries
// move a position while a write is in flight, the next transaction carries each webhook's latest one only.
import type { DeliveryPosition, OutboxStore } from '../wal/outbox-store.js';

export interface DeliveryProgress {
  /** Records that the webhook is done with everything up to position; written soon, not awaited. */
  mark(org: string, webhook: string, position: number): void;
  /** Drops a pending write (the webhook is gone). */
  forget(org: string, webhook: string): void;
  /** Resolves once every position marked so far is written. */
  flush(): Promise<void>;
}

export function createDeliveryProgress(store: Pick<OutboxStore, 'savePositions'>, warn: (message: string) => void): DeliveryProgress {
  const dirty = new Map<string, DeliveryPosition>();
  let writing: Promise<void> | undefined;
  const key = (org: string, webhook: string) => `${org}\u0000${webhook}`;

  async function drain(): Promise<void> {
    while (dirty.size > 0) {
      const batch = [...dirty.values()];
      dirty.clear();
      // A failed write only means those events may be delivered again after a restart: at least once still holds.
      await store.savePositions(batch).catch((error: unknown) => warn(`saving webhook delivery positions failed: ${String(error)}`));
    }
  }

  return {
    mark(org, webhook, position) {
      dirty.set(key(org, webhook), { org, webhook, position });
      writing ??= drain().finally(() => {
        writing = undefined;
      });
    },
    forget(org, webhook) {
      dirty.delete(key(org, webhook));
    },
    async flush() {
      while (writing) await writing;
    },
  };
}
