// The event webhook outbox: every webhook with an event trigger gets its organization's matching events,
// asynchronously, at least once and in offset order, one in flight at a time, with retries and back-off.
// Positions and dead letters are durable, so a restart resumes where the last run left off; the event log
// keeps every event a webhook has still to deliver.
import type { Change } from '../domain/changes.js';
import type { Webhook } from '../domain/state.js';
import type { Metrics } from '../lib/metrics.js';
import type { DeadLetter } from '../wal/outbox-store.js';
import { createDeliveryProgress } from './delivery-progress.js';
import { createOutboxMetrics } from './outbox-metrics.js';
import { startWorker, type Worker, type WorkerDeps } from './outbox-worker.js';

/** Dead letters kept per webhook; past it the oldest go (counted in /metrics). */
export const MAX_DEAD_LETTERS = 10_000;

/** What the outbox passes through to each webhook's worker, and what it needs itself. */
export interface OutboxDeps extends Pick<WorkerDeps, 'log' | 'store' | 'caller' | 'signer' | 'retry' | 'random' | 'clock' | 'calls'> {
  /** the organization's webhooks as its state has them now; undefined for an unknown organization */
  webhooks(org: string): ReadonlyMap<string, Webhook> | undefined;
  organizations(): Iterable<string>;
  metrics: Metrics;
  warn(message: string): void;
  maxDeadLetters?: number;
}

/** What the outbox reads of a durable commit: the part of the organization actor's commit record it needs. */
export interface OutboxCommit {
  readonly org: string;
  readonly entries: ReadonlyArray<{ readonly changes: readonly Change[] }>;
  readonly events: readonly unknown[];
}

export interface Outbox {
  /** Starts a worker per webhook with an event trigger or a queued retry; forgets what deleted webhooks left. */
  start(): Promise<void>;
  /** The commit bus's subscriber: starts, stops and wakes workers after each durable commit. */
  committed(commit: OutboxCommit): void;
  /** The oldest event offset of the organization that some webhook has still to deliver. */
  keepFrom(org: string): number | undefined;
  /** The webhook's dead letters' offsets, ascending. */
  deadLetterOffsets(org: string, webhook: string): number[];
  deadLetter(org: string, webhook: string, offset: number): DeadLetter | undefined;
  /** Queues a dead letter for redelivery (durably); undefined when there is none. */
  retry(org: string, webhook: string, offset: number): Promise<DeadLetter | undefined>;
  /** Removes a dead letter; false when there is none. */
  discard(org: string, webhook: string, offset: number): Promise<boolean>;
  /** Stops every worker, aborting calls in flight, and writes the positions reached. */
  stop(): Promise<void>;
  /** A deleted organization: its workers stop at once and write nothing more (its stored keys are removed apart). */
  forgetOrganization(org: string): void;
}

const hasEventTrigger = (w: Webhook | undefined) => w !== undefined && w.triggers.some((t) => t.trigger_type === 'event');

export function createOutbox(deps: OutboxDeps): Outbox {
  const workers = new Map<string, Map<string, Worker>>();
  const progress = createDeliveryProgress(deps.store, deps.warn);
  /** positions saved by an earlier run, for webhooks that have no worker yet */
  const saved = new Map<string, number>();
  let deadLetterCount = 0;
  let stopped = false;
  const key = (org: string, webhook: string) => `${org}\u0000${webhook}`;
  const metrics = createOutboxMetrics(deps.metrics, () => {
    const backlog = new Map<string, number>();
    for (const [org, byId] of workers) {
      let n = 0;
      for (const w of byId.values()) n += w.backlog();
      backlog.set(org, n);
    }
    return { backlog, deadLetters: deadLetterCount };
  });

  function ensure(org: string, webhook: string, retrying: readonly number[] = []): Worker | undefined {
    const existing = workers.get(org)?.get(webhook);
    if (existing || stopped) return existing;
    const current = () => deps.webhooks(org)?.get(webhook);
    const w = current();
    if (!w) return undefined;
    // A webhook without a saved position starts at its earliest event trigger: never from history.
    const starts = w.triggers.filter((t) => t.trigger_type === 'event').map((t) => (t.from_event ?? deps.log.head(org) + 1) - 1);
    const position = saved.get(key(org, webhook)) ?? (starts.length > 0 ? Math.min(...starts) : deps.log.head(org));
    saved.delete(key(org, webhook));
    const worker = startWorker(
      {
        org,
        webhookId: webhook,
        webhook: current,
        log: deps.log,
        store: deps.store,
        progress,
        caller: deps.caller,
        signer: deps.signer,
        retry: deps.retry,
        random: deps.random,
        clock: deps.clock,
        calls: deps.calls,
        metrics,
        maxDeadLetters: deps.maxDeadLetters ?? MAX_DEAD_LETTERS,
        deadLetters: (delta) => void (deadLetterCount += delta),
        warn: deps.warn,
      },
      position,
      retrying,
    );
    (workers.get(org) ?? workers.set(org, new Map()).get(org))?.set(webhook, worker);
    return worker;
  }

  function drop(org: string, webhook: string): void {
    const byId = workers.get(org);
    byId?.get(webhook)?.stop();
    byId?.delete(webhook);
    if (byId?.size === 0) workers.delete(org);
    progress.forget(org, webhook);
    saved.delete(key(org, webhook));
    deps.store.forgetWebhook(org, webhook).then(
      (removed) => void (deadLetterCount -= removed),
      (error: unknown) => deps.warn(`forgetting the deliveries of deleted webhook ${webhook} of ${org} failed: ${String(error)}`),
    );
  }

  return {
    async start() {
      const gone: Array<[string, string]> = [];
      for (const p of deps.store.positions()) {
        if (deps.webhooks(p.org)?.has(p.webhook)) saved.set(key(p.org, p.webhook), p.position);
        else gone.push([p.org, p.webhook]);
      }
      const retrying = new Map<string, number[]>();
      for (const [org, webhook] of deps.store.webhooksWithDeadLetters()) {
        if (!deps.webhooks(org)?.has(webhook)) {
          gone.push([org, webhook]);
          continue;
        }
        const offsets = deps.store.deadLetterOffsets(org, webhook);
        deadLetterCount += offsets.length;
        const queued = offsets.filter((o) => deps.store.deadLetter(org, webhook, o)?.state === 'retrying');
        if (queued.length > 0) retrying.set(key(org, webhook), queued);
      }
      // Everything above and the workers below in one synchronous stretch: no commit can come in between.
      for (const org of [...deps.organizations()]) {
        for (const w of deps.webhooks(org)?.values() ?? []) {
          const queued = retrying.get(key(org, w.id));
          if (queued || hasEventTrigger(w)) ensure(org, w.id, queued);
        }
      }
      for (const [org, webhook] of gone) await deps.store.forgetWebhook(org, webhook);
    },

    committed({ org, entries, events }) {
      if (stopped) return;
      for (const entry of entries) {
        for (const c of entry.changes) {
          if (c.t === 'WebhookDeleted') drop(org, c.id);
          else if (c.t === 'WebhookTriggerAdded' && c.trigger.trigger_type === 'event') ensure(org, c.id);
        }
      }
      if (events.length > 0) for (const w of workers.get(org)?.values() ?? []) w.wake();
    },

    keepFrom(org) {
      let oldest: number | undefined;
      for (const w of workers.get(org)?.values() ?? []) {
        const p = w.position();
        if (p !== undefined && (oldest === undefined || p + 1 < oldest)) oldest = p + 1;
      }
      return oldest;
    },

    deadLetterOffsets: (org, webhook) => deps.store.deadLetterOffsets(org, webhook),
    deadLetter: (org, webhook, offset) => deps.store.deadLetter(org, webhook, offset),

    async retry(org, webhook, offset) {
      const letter = await deps.store.updateDeadLetter(org, webhook, offset, (l) => ({ ...l, state: 'retrying' }));
      if (letter) ensure(org, webhook)?.queueRetry(offset);
      return letter;
    },

    async discard(org, webhook, offset) {
      const removed = await deps.store.removeDeadLetter(org, webhook, offset);
      if (removed) deadLetterCount--;
      return removed;
    },

    forgetOrganization(org) {
      for (const [webhook, worker] of workers.get(org) ?? []) {
        worker.stop();
        progress.forget(org, webhook);
      }
      workers.delete(org);
      for (const k of saved.keys()) if (k.startsWith(key(org, ''))) saved.delete(k);
      for (const [o, webhook] of deps.store.webhooksWithDeadLetters()) if (o === org) deadLetterCount -= deps.store.deadLetterOffsets(org, webhook).length;
    },

    async stop() {
      stopped = true;
      for (const byId of workers.values()) for (const w of byId.values()) w.stop();
      workers.clear();
      await progress.flush();
    },
  };
}
