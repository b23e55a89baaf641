// The hourly billing count: from the injected clock, every organization with snapshot data emits
// BillableProtectedIdentitiesCounted_v1 per region for the current and the previous UTC month (the rule is
// domain/cloud.ts's). computed_at is the clock's time truncated to microseconds.
import { formatRfc3339 } from '../lib/time-text.js';
import type { Clock, TimerHandle } from '../lib/clock.js';
import type { OrgPort } from './connections.js';

export interface BillingDeps {
  clock: Clock;
  orgs(): Iterable<OrgPort>;
  warn(message: string): void;
}

export function microsText(ns: bigint): string {
  const seconds = ns / 1_000_000_000n;
  const nanos = Number(ns % 1_000_000_000n);
  return formatRfc3339(Number(seconds), nanos, 6);
}

export function createBilling(deps: BillingDeps) {
  /** One count of every organization holding snapshot data; the number of events emitted. */
  const count = async (): Promise<number> => {
    let emitted = 0;
    for (const org of [...deps.orgs()]) {
      if (org.state.cloud_snapshots.length === 0) continue;
      try {
        const outcome = await org.execute<number>({ kind: 'CountBillableIdentities', now_ms: deps.clock.nowMs(), computed_at: microsText(deps.clock.nowNs()) });
        emitted += outcome.reply;
      } catch (error) {
        deps.warn(`billing count of ${org.id} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return emitted;
  };
  let timer: TimerHandle | undefined;
  let running: Promise<number> | undefined;
  return {
    count,
    start(intervalS: number): void {
      if (intervalS <= 0) return;
      timer = deps.clock.setInterval(
        () => {
          if (running) return;
          running = count().finally(() => (running = undefined));
        },
        intervalS * 1000,
        { background: true },
      );
    },
    async stop(): Promise<void> {
      deps.clock.clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}

export type Billing = ReturnType<typeof createBilling>;
