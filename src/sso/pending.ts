// SSO sign-ins in flight, between the start's redirect and the provider's callback: kept in memory only, each
// taken at most once, forgotten at its expiry (the injected clock's timer). A used state is remembered as used
// until it would have expired, so that a replay is told apart from a state never issued.
import type { Clock, TimerHandle } from '../lib/clock.js';

export interface PendingFlow {
  state: string;
  org: string;
  client_id: string;
  redirect_uri: string;
  nonce: string;
  code_verifier: string;
  /** the live anonymous person whose token came with the start: the callback upgrades or discards it */
  anonymous_person_id?: string;
  /** epoch ms */
  expires: number;
}

export type Taken =
  | { kind: 'flow'; flow: PendingFlow }
  /** taken before: a replay */
  | { kind: 'used'; org: string; client_id: string }
  /** never issued here, expired, or issued before a restart */
  | { kind: 'unknown' };

export interface PendingFlows {
  /** false when the table is full (the caller answers 429) */
  add(flow: PendingFlow): boolean;
  /** The flow of this state, once: a second take answers `used`. */
  take(state: string): Taken;
  size(): number;
  /** Drops every flow and its timer (shutdown). */
  clear(): void;
}

interface Entry {
  flow: PendingFlow | undefined;
  org: string;
  client_id: string;
  timer: TimerHandle;
}

export function createPendingFlows(clock: Clock, limit = 10_000): PendingFlows {
  const entries = new Map<string, Entry>();
  return {
    add(flow) {
      if (entries.size >= limit) return false;
      const timer = clock.setTimeout(() => entries.delete(flow.state), Math.max(0, flow.expires - clock.nowMs()), { background: true });
      entries.set(flow.state, { flow, org: flow.org, client_id: flow.client_id, timer });
      return true;
    },
    take(state) {
      const entry = entries.get(state);
      if (!entry) return { kind: 'unknown' };
      const flow = entry.flow;
      if (!flow) return { kind: 'used', org: entry.org, client_id: entry.client_id };
      // The secrets go; the tombstone stays until the flow's expiry timer removes it.
      entry.flow = undefined;
      if (flow.expires <= clock.nowMs()) return { kind: 'unknown' };
      return { kind: 'flow', flow };
    },
    size: () => entries.size,
    clear() {
      for (const e of entries.values()) clock.clearTimeout(e.timer);
      entries.clear();
    },
  };
}
