// Deleting an organization and every one below it (DELETE /organizations): out of service at once, the intent
// recorded durably, its parent told, then its stored keys removed in small transactions in the background.
// A crash at any point leaves the intent, and the next start finishes the deletion.
import { badRequest } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { DeletionIntent, OrgRemoval } from '../wal/org-removal.js';
import type { Registry } from './registry.js';

export interface OrgDeletionDeps {
  registry: Registry;
  removal: OrgRemoval;
  clock: Clock;
  /** keys removed per LMDB transaction */
  batchKeys: number;
  /** wait between two transactions, ms; 0 only yields to the event loop (a test lengthens it to crash midway) */
  pauseMs: number;
  log(message: string): void;
  warn(message: string): void;
}

export interface OrgDeletions {
  /** Deletes the organization and those below it; resolves once the deletion is durable and its parent forgot it. */
  delete(org: string): Promise<void>;
  /** Finishes the deletions a crash interrupted (their organizations were left out of recovery). */
  resume(): void;
  /** Stops between two transactions; what is left is finished at the next start. */
  stop(): Promise<void>;
  /** Resolves once every deletion begun so far has removed everything (tests). */
  settled(): Promise<void>;
}

/** The organizations whose deletion was recorded and not finished: recovery leaves them out. */
export function deletingOrganizations(removal: OrgRemoval): Set<string> {
  return new Set(removal.intents().flatMap((i) => i.orgs));
}

export function createOrgDeletions(deps: OrgDeletionDeps): OrgDeletions {
  const { registry, removal } = deps;
  let stopped = false;
  /** one deletion's removal at a time, in order: they share the write lock with the requests */
  let tail: Promise<void> = Promise.resolve();

  /** the wait between two transactions, cut short by stop() */
  let waking: (() => void) | undefined;
  const pause = () =>
    new Promise<void>((resolve) => {
      if (deps.pauseMs === 0) return void setImmediate(resolve);
      const timer = deps.clock.setTimeout(() => wake(), deps.pauseMs, { background: true });
      const wake = () => {
        deps.clock.clearTimeout(timer);
        waking = undefined;
        resolve();
      };
      waking = wake;
    });

  /** The parent no longer lists the organization. Idempotent; a parent being deleted itself has nothing to forget. */
  async function forgetInParent(intent: DeletionIntent): Promise<void> {
    const parent = registry.get(intent.parent);
    if (!parent) return;
    await parent.execute({ kind: 'DeleteSuborganization', id: intent.org, orgs: intent.orgs });
  }

  async function sweep(intent: DeletionIntent): Promise<void> {
    // First too: a crash may have come between the intent and the parent's entry.
    await forgetInParent(intent);
    for (const org of intent.orgs) {
      let removed = 0;
      for (;;) {
        if (stopped) return;
        const n = await removal.removeSome(org, deps.batchKeys);
        if (n === 0) break;
        removed += n;
        deps.log(`deleting organization ${org}: ${removed} stored key(s) removed`);
        await pause();
      }
    }
    if (stopped) return;
    await forgetInParent(intent);
    await removal.finish(intent);
    deps.log(`deleted organization ${intent.org}${intent.orgs.length > 1 ? ` and ${intent.orgs.length - 1} below it` : ''}`);
  }

  function schedule(intent: DeletionIntent): void {
    tail = tail.then(() =>
      sweep(intent).catch((error: unknown) => deps.warn(`deleting organization ${intent.org} stopped (${String(error)}); the next start goes on with it`)),
    );
  }

  return {
    async delete(org) {
      const actor = registry.get(org);
      if (!actor) return;
      if (actor.state.parent_id === null) throw badRequest('the root organization of a deployment cannot be deleted; delete its suborganizations instead');
      const intent: DeletionIntent = { org, parent: actor.state.parent_id, orgs: await registry.retire(org) };
      await removal.record(intent);
      schedule(intent);
      await forgetInParent(intent);
    },

    resume() {
      for (const intent of removal.intents()) schedule(intent);
    },

    async stop() {
      stopped = true;
      waking?.();
      await tail;
    },

    settled() {
      return tail;
    },
  };
}
