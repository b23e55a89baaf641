// The webhook outbox's durable state: each webhook's delivery position, and its dead letters (event
// deliveries that ran out of attempts, kept with the event itself so that pruning the log cannot lose them).
import { decodeRecord, encodeRecord } from './codec.js';
import type { Store } from './store.js';

export type DeadLetterState = 'dead' | 'retrying';

export interface DeadLetter {
  /** the event's offset in the organization's event log */
  offset: number;
  event_name: string;
  /** the event as it was delivered: proto3 JSON */
  event: Record<string, unknown>;
  /** attempts made so far, over every round */
  attempts: number;
  last_error: string;
  /** when it last ran out of attempts, RFC 3339 */
  failed_at: string;
  /** dead: waiting for someone to retry or discard it; retrying: queued for redelivery */
  state: DeadLetterState;
}

export interface DeliveryPosition {
  org: string;
  webhook: string;
  /** the last event offset the webhook is done with: delivered, dead-lettered, or not matching */
  position: number;
}

export interface OutboxStore {
  positions(): DeliveryPosition[];
  /** One transaction; only the commit is awaited: a position lost to a crash means an event delivered again. */
  savePositions(positions: readonly DeliveryPosition[]): Promise<void>;
  /** The webhooks that have any dead letter, as [org, webhook]. */
  webhooksWithDeadLetters(): Array<[string, string]>;
  deadLetterOffsets(org: string, webhook: string): number[];
  deadLetter(org: string, webhook: string, offset: number): DeadLetter | undefined;
  /** Stores a dead letter durably, dropping the oldest beyond `max`: whether it is new, and how many went. */
  putDeadLetter(org: string, webhook: string, letter: DeadLetter, max: number): Promise<{ created: boolean; dropped: number }>;
  /** Replaces a stored dead letter by fn's result, durably, in one transaction; undefined when there is none. */
  updateDeadLetter(org: string, webhook: string, offset: number, fn: (letter: DeadLetter) => DeadLetter): Promise<DeadLetter | undefined>;
  removeDeadLetter(org: string, webhook: string, offset: number): Promise<boolean>;
  /** Removes the webhook's position and every dead letter of it; resolves to how many dead letters went. */
  forgetWebhook(org: string, webhook: string): Promise<number>;
}

const END = Number.MAX_SAFE_INTEGER;

export function createOutboxStore(store: Store): OutboxStore {
  const range = (org: string, webhook: string) => ({ start: [org, webhook, 0] as [string, string, number], end: [org, webhook, END] as [string, string, number] });
  const read = (org: string, webhook: string, offset: number) => {
    const bytes = store.deadLetters.getBinary([org, webhook, offset]);
    return bytes ? decodeRecord<DeadLetter>(bytes) : undefined;
  };

  return {
    positions() {
      const out: DeliveryPosition[] = [];
      for (const { key, value } of store.deliveries.getRange({})) {
        out.push({ org: key[0], webhook: key[1], position: decodeRecord<{ position: number }>(value).position });
      }
      return out;
    },

    async savePositions(positions) {
      await store.root.transaction(() => {
        for (const p of positions) store.deliveries.putSync([p.org, p.webhook], encodeRecord({ position: p.position }));
      });
    },

    webhooksWithDeadLetters() {
      const out: Array<[string, string]> = [];
      let last = '';
      for (const key of store.deadLetters.getKeys({})) {
        const id = `${key[0]}\u0000${key[1]}`;
        if (id !== last) out.push([key[0], key[1]]);
        last = id;
      }
      return out;
    },

    deadLetterOffsets(org, webhook) {
      return [...store.deadLetters.getKeys(range(org, webhook))].map((k) => k[2]);
    },

    deadLetter: read,

    putDeadLetter(org, webhook, letter, max) {
      return store.root.transaction(() => {
        const created = !store.deadLetters.doesExist([org, webhook, letter.offset]);
        store.deadLetters.putSync([org, webhook, letter.offset], encodeRecord(letter));
        const excess = store.deadLetters.getKeysCount(range(org, webhook)) - max;
        let dropped = 0;
        if (excess > 0) {
          for (const key of store.deadLetters.getKeys({ ...range(org, webhook), limit: excess })) {
            store.deadLetters.removeSync(key);
            dropped++;
          }
        }
        return { created, dropped };
      });
    },

    updateDeadLetter(org, webhook, offset, fn) {
      return store.root.transaction(() => {
        const current = read(org, webhook, offset);
        if (!current) return undefined;
        const next = fn(current);
        store.deadLetters.putSync([org, webhook, offset], encodeRecord(next));
        return next;
      });
    },

    removeDeadLetter(org, webhook, offset) {
      return store.root.transaction(() => store.deadLetters.removeSync([org, webhook, offset]));
    },

    forgetWebhook(org, webhook) {
      return store.root.transaction(() => {
        store.deliveries.removeSync([org, webhook]);
        let removed = 0;
        for (const key of store.deadLetters.getKeys(range(org, webhook))) removed += store.deadLetters.removeSync(key) ? 1 : 0;
        return removed;
      });
    },
  };
}
