// Removing deleted organizations from the local LMDB environment: the durable intent first, then every key of
// each organization in small transactions, so a deletion of millions of entries never holds the write lock long.
import { decodeRecord, encodeRecord } from './codec.js';
import type { Database, Key } from 'lmdb';
import type { Store, WalKey } from './store.js';

/** What DELETE /organizations recorded before removing anything: the caller, its parent and every organization to go. */
export interface DeletionIntent {
  org: string;
  parent: string;
  /** the caller first, then every organization below it */
  orgs: string[];
}

export interface OrgRemoval {
  /** Deletions recorded and not yet finished (a crash in the middle leaves them here for the next start). */
  intents(): DeletionIntent[];
  record(intent: DeletionIntent): Promise<void>;
  /**
   * Removes up to `limit` of the organization's keys in one transaction, the ones that make it an organization
   * (its entry in the list recovered at start, its snapshot) first; resolves to how many went, 0 once none is left.
   */
  removeSome(org: string, limit: number): Promise<number>;
  /** The deletion is complete: its intent goes last. */
  finish(intent: DeletionIntent): Promise<void>;
}

const INTENT_PREFIX = 'org_deletion:';
/** Metadata this service keeps per organization beside its log (tokens/checkpoint.ts's key). */
const perOrgMeta = (org: string) => [`event_checkpoint:${org}`];

export function createOrgRemoval(store: Store): OrgRemoval {
  const orgRange = (org: string) => ({ start: [org, 0] as WalKey, end: [org, Number.MAX_SAFE_INTEGER] as WalKey });
  return {
    intents() {
      const out: DeletionIntent[] = [];
      for (const { value } of store.meta.getRange({ start: INTENT_PREFIX, end: `${INTENT_PREFIX}\uffff` })) out.push(decodeRecord<DeletionIntent>(value));
      return out;
    },

    async record(intent) {
      await store.meta.put(`${INTENT_PREFIX}${intent.org}`, encodeRecord(intent));
    },

    async removeSome(org, limit) {
      let removed = 0;
      await store.root.transaction(() => {
        const drop = (ok: boolean) => void (removed += ok ? 1 : 0);
        drop(store.orgs.removeSync(org));
        drop(store.snapshots.removeSync(org));
        for (const key of perOrgMeta(org)) drop(store.meta.removeSync(key));
        for (const db of [store.wal, store.events, store.chains]) {
          if (removed >= limit) return;
          for (const key of db.getKeys({ ...orgRange(org), limit: limit - removed })) drop(db.removeSync(key));
        }
        // The SSO providers' tokens of its persons: keys `org\u001fperson\u001fclient` (sso/provider-tokens.ts).
        if (removed >= limit) return;
        for (const key of store.ssoTokens.getKeys({ start: `${org}\u001f`, end: `${org}\u001f\uffff`, limit: limit - removed })) drop(store.ssoTokens.removeSync(key));
        // Webhook delivery positions and dead letters: keys [org, webhook(, offset)], all after [org] and before [org, '\uffff'].
        for (const db of [store.deliveries, store.deadLetters] as Array<Database<Buffer, Key>>) {
          if (removed >= limit) return;
          for (const key of db.getKeys({ start: [org], end: [org, '\uffff'], limit: limit - removed })) drop(db.removeSync(key));
        }
      });
      return removed;
    },

    async finish(intent) {
      await store.meta.remove(`${INTENT_PREFIX}${intent.org}`);
    },
  };
}
