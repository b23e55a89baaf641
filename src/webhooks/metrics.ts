// Webhook call metrics: calls by outcome, failures by reason, and call latency, per trigger.
import type { Metrics } from '../lib/metrics.js';
import type { CallFailureReason } from './caller.js';

/** ok: answered as hoped; denied: a sync hook said no (403); failed: see the reason */
export type CallOutcome = 'ok' | 'denied' | 'failed';
/** transport failures, a non-2xx status other than a denial, or a body that is not what the trigger wants */
export type FailureReason = CallFailureReason | 'status' | 'invalid_body';

export interface WebhookMetrics {
  record(trigger: string, outcome: CallOutcome, seconds: number, reason?: FailureReason): void;
}

export function createWebhookMetrics(metrics: Metrics): WebhookMetrics {
  const calls = metrics.counter('webhook_calls_total', 'Webhook calls by trigger and outcome (ok, denied, failed)');
  const failures = metrics.counter('webhook_call_failures_total', 'Failed webhook calls by trigger and reason');
  const latency = metrics.histogram('webhook_call_duration_seconds', 'Webhook call latency by trigger');
  return {
    record(trigger, outcome, seconds, reason) {
      calls.inc({ trigger, outcome });
      if (reason !== undefined) failures.inc({ trigger, reason });
      latency.observe(seconds, { trigger });
    },
  };
}
