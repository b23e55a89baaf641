// Delivery of Gate's events to POST /gate/events: a bounded queue sent in batches, never in the way of traffic.
import { Agent, request } from 'undici';
import type { Metrics } from '../lib/metrics.js';
import { encodeEvent, type GateEvent, type QueuedEvent } from './events.js';

export interface SenderOptions {
  baseUrl: string;
  orgId: string;
  apiKey: string;
  maxEvents: number;
  maxDelayMs: number;
  bufferLimit: number;
  metrics: Metrics;
  warn(message: string): void;
}

export interface EventSender {
  /** queues an event; a full queue drops the oldest GateRequestHandled first (ServerStarted is never dropped) */
  enqueue(event: QueuedEvent): void;
  /** sends one event alone, once: resolves true when the service took it (heartbeats: never retried) */
  sendOnce(event: GateEvent): Promise<boolean>;
  queued(): number;
  /** waits (up to timeoutMs) until the queue is empty */
  drain(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

const BACKOFF_MAX_MS = 2000;

export function createEventSender(o: SenderOptions): EventSender {
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 4 });
  const queue: QueuedEvent[] = [];
  const queuedGauge = o.metrics.gauge('gate_events_queued', 'Events waiting to be sent to the service');
  const sent = o.metrics.counter('gate_events_sent_total', 'Events the service accepted (duplicates included)');
  const dropped = o.metrics.counter('gate_events_dropped_total', 'Events dropped: the queue was full, or the service refused the batch');
  const failures = o.metrics.counter('gate_event_batches_failed_total', 'Batches that did not reach the service (retried)');
  o.metrics.collect(() => queuedGauge.set(queue.length));
  let timer: NodeJS.Timeout | undefined;
  let sending = false;
  /** the head of the queue being sent: drops never touch it, and success removes exactly it */
  let inFlight = 0;
  let closed = false;
  let backoff = 0;
  let idle: Array<() => void> = [];

  const post = async (events: readonly QueuedEvent[]): Promise<number> => {
    const res = await request(`${o.baseUrl}/gate/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'service-orgid': o.orgId, 'service-api-key': o.apiKey },
      // Events that write their own JSON do it here, once per send, not once per request.
      body: `[${events.map(encodeEvent).join(',')}]`,
      dispatcher: agent,
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    const text = await res.body.text();
    if (res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 408 && res.statusCode !== 429) o.warn(`gate: the service refused ${events.length} events: ${res.statusCode} ${text.slice(0, 300)}`);
    return res.statusCode;
  };

  const schedule = (delay: number) => {
    if (closed || sending || timer !== undefined || queue.length === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, delay);
    timer.unref();
  };

  const flush = async () => {
    if (sending || queue.length === 0) return;
    sending = true;
    const batch = queue.slice(0, o.maxEvents);
    inFlight = batch.length;
    let retry = false;
    try {
      const status = await post(batch);
      if (status === 202) sent.inc({}, batch.length);
      else if (status >= 500 || status === 408 || status === 429) retry = true;
      else dropped.inc({ reason: 'refused' }, batch.length);
    } catch {
      retry = true;
    }
    sending = false;
    const done = inFlight;
    inFlight = 0;
    if (retry) {
      failures.inc();
      backoff = Math.min(BACKOFF_MAX_MS, backoff === 0 ? 100 : backoff * 2);
    } else {
      backoff = 0;
      queue.splice(0, done);
    }
    if (queue.length === 0) {
      for (const w of idle) w();
      idle = [];
    } else {
      schedule(retry ? backoff : queue.length >= o.maxEvents ? 0 : o.maxDelayMs);
    }
  };

  return {
    enqueue(event) {
      if (closed) return;
      if (queue.length >= o.bufferLimit) {
        // Drop the oldest request event that is not in flight.
        let at = -1;
        for (let i = inFlight; i < queue.length; i++) {
          if (queue[i]!.event_metadata.event_name === 'GateRequestHandled_v1') {
            at = i;
            break;
          }
        }
        if (at < 0) {
          dropped.inc({ reason: 'queue_full' });
          if (event.event_metadata.event_name === 'GateRequestHandled_v1') return;
        } else {
          queue.splice(at, 1);
          dropped.inc({ reason: 'queue_full' });
        }
      }
      queue.push(event);
      schedule(queue.length >= o.maxEvents ? 0 : o.maxDelayMs);
    },
    async sendOnce(event) {
      try {
        const ok = (await post([event])) === 202;
        if (ok) sent.inc();
        return ok;
      } catch {
        return false;
      }
    },
    queued: () => queue.length,
    drain(timeoutMs) {
      if (queue.length === 0) return Promise.resolve();
      if (timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
        void flush();
      }
      return new Promise((resolve) => {
        const t = setTimeout(resolve, timeoutMs);
        idle.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    },
    async close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      await agent.close();
    },
  };
}
