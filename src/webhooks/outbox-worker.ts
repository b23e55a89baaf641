// One webhook's event deliveries: its position in the organization's event log, its queue of dead letters to
// retry, and the delivery machine that works through them one at a time. This is the machine's driver.
import type { Webhook } from '../domain/state.js';
import { callTimeoutMs } from '../domain/webhook-rules.js';
import type { EventLog } from '../events/log.js';
import type { Clock } from '../lib/clock.js';
import type { DeadLetter, OutboxStore } from '../wal/outbox-store.js';
import { retryDelayMs, type Backoff } from './backoff.js';
import { WebhookCallError, type WebhookCaller } from './caller.js';
import { startDelivery, type AttemptResult, type DeliveryActor, type DeliveryDriver, type DeliveryItem } from './delivery-machine.js';
import type { DeliveryProgress } from './delivery-progress.js';
import type { DeliverySigner } from './delivery-token.js';
import type { WebhookMetrics } from './metrics.js';
import type { OutboxMetrics } from './outbox-metrics.js';

/** Events looked at per step while skipping those the webhook does not want, so a long skip yields to the loop. */
const SCAN_BATCH = 256;

export interface WorkerDeps {
  org: string;
  webhookId: string;
  /** the webhook as the organization's state has it now; undefined once deleted */
  webhook(): Webhook | undefined;
  log: Pick<EventLog, 'head' | 'read'>;
  store: OutboxStore;
  progress: DeliveryProgress;
  caller: WebhookCaller;
  signer: DeliverySigner;
  retry: Backoff & { limit: number };
  random(): number;
  /** dead letters' times, call durations, and the back-off's timers */
  clock: Pick<Clock, 'nowMs' | 'monoMs' | 'setTimeout' | 'clearTimeout'>;
  calls: WebhookMetrics;
  metrics: OutboxMetrics;
  maxDeadLetters: number;
  /** a dead letter was stored (+1) or removed (−n) */
  deadLetters(delta: number): void;
  warn(message: string): void;
}

export interface Worker {
  /** The last event offset the webhook is done with, or undefined while it has no event trigger. */
  position(): number | undefined;
  /** Events past the position plus queued retries. */
  backlog(): number;
  /** New events were committed, or a retry was queued: look again. */
  wake(): void;
  /** Queues a dead letter (already marked retrying in the store) for redelivery ahead of new events. */
  queueRetry(offset: number): void;
  /** Stops the machine; a call in flight is aborted. */
  stop(): void;
}

const eventTriggers = (w: Webhook | undefined) => (w ? w.triggers.filter((t) => t.trigger_type === 'event') : []);

export function eventName(event: Record<string, unknown>): string {
  const metadata = event['event_metadata'] as { event_name?: unknown } | undefined;
  return typeof metadata?.event_name === 'string' ? metadata.event_name : '';
}

/** The delivery token's subject: the person the event is about, or else the organization. */
export function deliverySubject(org: string, event: Record<string, unknown>): string {
  const person = event['person_id'];
  return typeof person === 'string' && person !== '' ? person : org;
}

export function startWorker(deps: WorkerDeps, initialPosition: number, retrying: readonly number[]): Worker {
  const { org, webhookId } = deps;
  let position = initialPosition;
  /** dead letters to redeliver, oldest event first; the head one stays here while it is in flight */
  const retries = [...retrying].sort((a, b) => a - b);
  /** queued ones asked for again: a round that fails leaves them queued for one more */
  const again = new Set<number>();
  const settle = (offset: number) => {
    const at = retries.indexOf(offset);
    if (at >= 0) retries.splice(at, 1);
    again.delete(offset);
  };

  /** Events before the earliest event trigger was attached are never this webhook's: skip them unread. */
  function catchUp(): ReturnType<typeof eventTriggers> {
    const triggers = eventTriggers(deps.webhook());
    if (triggers.length === 0) return triggers;
    const start = Math.min(...triggers.map((t) => t.from_event ?? 1));
    if (position < start - 1) position = start - 1;
    return triggers;
  }

  function nextRetry(): DeliveryItem | 'more' | undefined {
    const offset = retries[0] as number;
    const letter = deps.store.deadLetter(org, webhookId, offset);
    // Discarded, or already settled, since it was queued.
    if (!letter || letter.state !== 'retrying') {
      settle(offset);
      return 'more';
    }
    return { offset, event_name: letter.event_name, event: letter.event, source: 'dead_letter' };
  }

  const driver: DeliveryDriver = {
    limit: deps.retry.limit,
    pauseMs: deps.retry.maxMs,

    hasWork() {
      if (!deps.webhook()) return false;
      if (retries.length > 0) return true;
      return catchUp().length > 0 && position < deps.log.head(org);
    },

    next() {
      if (!deps.webhook()) return undefined;
      if (retries.length > 0) return nextRetry();
      const triggers = catchUp();
      const head = deps.log.head(org);
      if (triggers.length === 0 || position >= head) return undefined;
      const from = position;
      let found: DeliveryItem | undefined;
      for (const { offset, event } of deps.log.read(org, position + 1, SCAN_BATCH)) {
        const name = eventName(event);
        if (triggers.some((t) => t.trigger_name === name && (t.from_event ?? 1) <= offset)) {
          found = { offset, event_name: name, event, source: 'log' };
          break;
        }
        position = offset;
      }
      if (position > from) deps.progress.mark(org, webhookId, position);
      if (found) return found;
      return position < head ? 'more' : undefined;
    },

    async attempt(item, attempt, signal) {
      const webhook = deps.webhook();
      if (!webhook) return { ok: false, error: 'the webhook was deleted' };
      const body = deps.signer.sign({
        org,
        sub: deliverySubject(org, item.event),
        webhook,
        trigger_type: 'event',
        trigger_name: item.event_name,
        trigger_content: item.event,
      });
      const started = deps.clock.monoMs();
      let result: AttemptResult;
      try {
        const res = await deps.caller.post({ url: webhook.target_url, headers: webhook.custom_headers, body, timeoutMs: callTimeoutMs(webhook, 'event'), signal });
        const seconds = (deps.clock.monoMs() - started) / 1000;
        if (res.status >= 200 && res.status <= 299) {
          deps.calls.record(item.event_name, 'ok', seconds);
          return { ok: true };
        }
        deps.calls.record(item.event_name, 'failed', seconds, 'status');
        result = { ok: false, error: `the receiver answered ${res.status}` };
      } catch (error) {
        if (!(error instanceof WebhookCallError)) throw error;
        if (error.reason === 'aborted') return { ok: false, error: error.message };
        deps.calls.record(item.event_name, 'failed', (deps.clock.monoMs() - started) / 1000, error.reason);
        result = { ok: false, error: `${error.reason}: ${error.message}` };
      }
      if (attempt < deps.retry.limit) deps.metrics.retried();
      return result;
    },

    delivered(item) {
      deps.metrics.delivered();
      if (item.source === 'log') {
        position = item.offset;
        deps.progress.mark(org, webhookId, position);
        return;
      }
      settle(item.offset);
      deps.store.removeDeadLetter(org, webhookId, item.offset).then(
        (removed) => removed && deps.deadLetters(-1),
        (error: unknown) => deps.warn(`removing the delivered dead letter ${item.offset} of webhook ${webhookId} failed: ${String(error)}`),
      );
    },

    async bury(item, attempts, lastError) {
      const failed_at = new Date(deps.clock.nowMs()).toISOString();
      if (item.source === 'dead_letter') {
        const requeue = again.delete(item.offset);
        await deps.store.updateDeadLetter(org, webhookId, item.offset, (l) => ({ ...l, attempts: l.attempts + attempts, last_error: lastError, failed_at, state: requeue ? 'retrying' : 'dead' }));
        if (!requeue) settle(item.offset);
      } else {
        const letter: DeadLetter = { offset: item.offset, event_name: item.event_name, event: item.event, attempts, last_error: lastError, failed_at, state: 'dead' };
        // Stored durably before the position moves past the event: from here on the log may prune it.
        const { created, dropped } = await deps.store.putDeadLetter(org, webhookId, letter, deps.maxDeadLetters);
        deps.deadLetters((created ? 1 : 0) - dropped);
        if (dropped > 0) {
          deps.metrics.dropped(dropped);
          deps.warn(`webhook ${webhookId} of ${org} has more than ${deps.maxDeadLetters} dead letters; the oldest ${dropped} were dropped`);
        }
        position = item.offset;
        deps.progress.mark(org, webhookId, position);
      }
      deps.metrics.deadLettered();
    },

    retryDelayMs: (failures) => retryDelayMs(failures, deps.retry, deps.random),
    failed: (error) => deps.warn(`event deliveries of webhook ${webhookId} of ${org}: ${String((error as Error)?.stack ?? error)}`),
  };

  const actor: DeliveryActor = startDelivery(driver, deps.clock);

  return {
    position: () => (catchUp().length > 0 ? position : undefined),
    backlog: () => retries.length + (catchUp().length > 0 ? Math.max(0, deps.log.head(org) - position) : 0),
    wake: () => actor.send({ type: 'work' }),
    queueRetry(offset) {
      if (retries.includes(offset)) again.add(offset);
      else {
        retries.push(offset);
        retries.sort((a, b) => a - b);
      }
      actor.send({ type: 'work' });
    },
    stop: () => actor.stop(),
  };
}
