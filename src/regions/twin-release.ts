// Owed twins come due here: once every replica region has acknowledged an entry that owes a plain twin,
// the organization's actor is told so (EmitOwedTwins), and emits the twin and stops owing it in one entry.
// That entry is the only place a twin is emitted, so a second notice for the same offset changes nothing.
import { ServiceError } from '../errors.js';
import type { CommitBus } from '../org/commit-bus.js';
import type { Registry } from '../org/registry.js';
import type { AckSource } from './waiters.js';

export interface TwinReleaseDeps {
  registry: Pick<Registry, 'get' | 'all'>;
  /** a commit of an organization whose notice was refused is the moment to try again */
  commits: Pick<CommitBus, 'subscribe'>;
  /** one per replica region; none when the deployment has a single region */
  sources: readonly AckSource[];
  warn(message: string): void;
}

export interface TwinRelease {
  /** Looks at every organization once: twins owed for entries that every region already holds are emitted. */
  start(): void;
  /** No notice is sent after this; whatever is still owed stays owed in the log for the next start. */
  stop(): void;
}

export function createTwinRelease(deps: TwinReleaseDeps): TwinRelease {
  const { registry, sources } = deps;
  /** organizations with an EmitOwedTwins command in flight: acknowledgements meanwhile are looked at after it */
  const busy = new Set<string>();
  /** organizations whose command was refused (a full mailbox): tried again at their next commit */
  const refused = new Set<string>();
  let stopped = false;

  const check = (org: string): void => {
    if (stopped || busy.has(org)) return;
    const actor = registry.get(org);
    const first = actor?.state.owed_twins[0];
    if (!actor || !first) return;
    // With no replica, every entry the actor holds is everywhere (twins owed under an earlier, larger configuration).
    let everywhere = actor.state.offset;
    for (const s of sources) everywhere = Math.min(everywhere, s.acked(org));
    if (everywhere < first.offset) return;
    busy.add(org);
    actor.execute({ kind: 'EmitOwedTwins', through: everywhere }).then(
      () => {
        busy.delete(org);
        check(org);
      },
      (error: unknown) => {
        busy.delete(org);
        if (stopped) return;
        if (!(error instanceof ServiceError)) deps.warn(`emitting the owed twins of ${org} failed: ${String(error)}`);
        refused.add(org);
      },
    );
  };

  for (const s of sources) s.onAck((org) => check(org));
  const unsubscribe = deps.commits.subscribe(({ org }) => {
    if (refused.delete(org)) check(org);
  }, 'the owed-twin release');

  return {
    start() {
      for (const actor of registry.all()) check(actor.id);
    },
    stop() {
      stopped = true;
      unsubscribe();
    },
  };
}
