// What happens after a durable commit: each actor publishes one typed record per batch, and every consumer
// (the key index, the event stream, the webhook outbox, the replication links) subscribes to it.
import type { Change } from '../domain/changes.js';
import type { OrgGenesis } from '../domain/state.js';
import type { LoggedEvent } from '../events/log.js';

/** One WAL entry of the batch: its offset, the changes it applied and the events it emitted. */
export interface CommittedEntry {
  offset: number;
  changes: Change[];
  events: LoggedEvent[];
}

/** One durable batch of one organization. Built once per commit, shared by every subscriber: read-only. */
export interface CommitRecord {
  readonly org: string;
  /** in offset order; never empty */
  readonly entries: readonly CommittedEntry[];
  /** the events of every entry, in offset order */
  readonly events: readonly LoggedEvent[];
  /** the WAL offset of the last entry */
  readonly offset: number;
  /** suborganizations created by the batch; their genesis entries were committed in the same transaction */
  readonly spawned: readonly OrgGenesis[];
  /** the organization's API key changed: what authenticated with the old one must stop */
  readonly keyRotated: boolean;
}

export type CommitListener = (commit: CommitRecord) => void;

export interface CommitBus {
  /** Listeners run in subscription order; the returned function unsubscribes. */
  subscribe(listener: CommitListener, name?: string): () => void;
  /** Runs inside the actor's commit, before its replies: a listener's failure is warned about, never the writer's. */
  publish(commit: CommitRecord): void;
}

export function createCommitBus(warn: (message: string) => void): CommitBus {
  let listeners: ReadonlyArray<{ listener: CommitListener; name: string }> = [];
  return {
    subscribe(listener, name = 'a commit subscriber') {
      const entry = { listener, name };
      // Copied, not mutated: a listener that unsubscribes during a publish does not skip its neighbour.
      listeners = [...listeners, entry];
      return () => {
        listeners = listeners.filter((l) => l !== entry);
      };
    },
    publish(commit) {
      for (const { listener, name } of listeners) {
        try {
          listener(commit);
        } catch (error) {
          warn(`${name} failed on the commit of ${commit.org} through entry ${commit.offset}: ${String((error as Error).stack ?? error)}`);
        }
      }
    },
  };
}
