// Event webhook metrics: deliveries by outcome, retries, dead letters stored, and the backlog per organization.
import type { Metrics } from '../lib/metrics.js';

/** Organizations named in the backlog gauge; the rest are summed under organization_id="_other". */
export const BACKLOG_TOP_ORGANIZATIONS = 20;

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
    `Events behind the delivery position of event webhooks (matching or not) plus dead letters queued for retry, by organization; the ${BACKLOG_TOP_ORGANIZATIONS} largest are named, the rest summed as _other`,
  );
  metrics.collect(() => {
    const now = sample();
    stored.set(now.deadLetters);
    // Only organizations with a backlog, and only the largest, so the label set stays small however many exist.
    backlog.reset();
    const ranked = [...now.backlog].filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
    for (const [org, n] of ranked.slice(0, BACKLOG_TOP_ORGANIZATIONS)) backlog.set(n, { organization_id: org });
    const rest = ranked.slice(BACKLOG_TOP_ORGANIZATIONS).reduce((sum, [, n]) => sum + n, 0);
    if (rest > 0) backlog.set(rest, { organization_id: '_other' });
  });
  return {
    delivered: () => deliveries.inc({ outcome: 'delivered' }),
    deadLettered: () => deliveries.inc({ outcome: 'dead_lettered' }),
    retried: () => retries.inc(),
    dropped: (count) => dropped.inc({}, count),
  };
}
