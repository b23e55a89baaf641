// Event webhook metrics: deliveries by outcome, retries, dead letters stored, and the backlog of all
// organizations together. /metrics answers without credentials, so no series names an organization.
import type { Metrics } from '../lib/metrics.js';

export interface OutboxMetrics {
  delivered(): void;
  deadLettered(): void;
  retried(): void;
  /** dead letters dropped because a webhook had too many */
  dropped(count: number): void;
}

export function createOutboxMetrics(metrics: Metrics, sample: () => { backlog: Map<string, number>; deadLetters: number }): OutboxMetrics {
  const deliveries = metrics.counter('webhook_event_deliveries_total', 'Event webhook deliveries by outcome: delivered, or dead_lettered after the last attempt');
  const retries = metrics.counter('webhook_event_retries_total', 'Failed event webhook attempts that were retried after a back-off');
  const dropped = metrics.counter('webhook_event_dead_letters_dropped_total', 'Dead letters removed because their webhook had too many');
  const stored = metrics.gauge('webhook_event_dead_letters', 'Dead letters stored, waiting to be retried or discarded');
  const backlog = metrics.gauge(
    'webhook_event_queue_depth',
    'Events behind the delivery position of event webhooks (matching or not) plus dead letters queued for retry, all organizations together',
  );
  metrics.collect(() => {
    const now = sample();
    stored.set(now.deadLetters);
    let total = 0;
    for (const n of now.backlog.values()) total += n;
    backlog.set(total);
  });
  return {
    delivered: () => deliveries.inc({ outcome: 'delivered' }),
    deadLettered: () => deliveries.inc({ outcome: 'dead_lettered' }),
    retried: () => retries.inc(),
    dropped: (count) => dropped.inc({}, count),
  };
}
