// SSO sign-ins in flight, between the start's redirect and the provider's callback: kept in LMDB beside the WAL
// (so a restart between the two loses none) and mirrored in memory, each taken at most once, forgotten at its
// expiry (the injected clock's timer; those that lapsed while the service was down are swept at start). A used
// state is remembered as used until it would have expired, so that a replay is told apart from a state never
// issued. The nonce and PKCE verifier are sealed under SERVICE_SECRETS_KEY at rest.
import type { StoredSecret } from '../domain/state.js';
import type { Clock, TimerHandle } from '../lib/clock.js';
import type { Format } from '../lib/versions.js';
import type { KeyedRecords } from '../wal/keyed-records.js';
import type { SecretSealer } from './secrets.js';

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
  /** never issued here, or expired */
  | { kind: 'unknown' };

/** Why a start was not kept: the organization's, or this address's share of it, is full. */
export type PendingFull = 'organization' | 'address';

export interface PendingFlows {
  /** Keeps the flow durably; `organization` or `address` (not kept: the caller answers 429) when that bound is reached. */
  add(flow: PendingFlow, address: string): Promise<PendingFull | undefined>;
  /** The flow of this state, once: a second take answers `used`. */
  take(state: string): Promise<Taken>;
  size(): number;
  /** Drops every timer (shutdown); the stored flows stay for the next start. */
  clear(): void;
}

/** What is stored per state: the flow's secrets sealed, or none once it was taken. */
export interface StoredFlow {
  org: string;
  client_id: string;
  redirect_uri: string;
  /** the client address that started it, which its bound counts against */
  address: string;
  expires: number;
  anonymous_person_id?: string;
  /** {nonce, code_verifier} as JSON, sealed; absent once taken */
  secrets?: StoredSecret;
}

export const PENDING_FLOW_FORMAT: Format = { name: 'pending SSO sign-in', steps: [(r) => r] };

export interface PendingLimits {
  /** flows (and used states not yet expired) per organization */
  perOrg: number;
  /** the same, per organization and client address */
  perAddress: number;
}

interface Entry {
  stored: StoredFlow;
  timer: TimerHandle;
}

const SEALED_AS = 'pending_flow';

export function createPendingFlows(deps: { clock: Clock; records: KeyedRecords<StoredFlow>; sealer: SecretSealer; limits: PendingLimits }): PendingFlows {
  const { clock, records, sealer, limits } = deps;
  const entries = new Map<string, Entry>();
  const perOrg = new Map<string, number>();
  const perAddress = new Map<string, number>();
  const addressKey = (s: StoredFlow) => `${s.org}\n${s.address}`;
  const count = (m: Map<string, number>, key: string, by: number) => {
    const n = (m.get(key) ?? 0) + by;
    if (n <= 0) m.delete(key);
    else m.set(key, n);
  };

  function forget(state: string): void {
    const entry = entries.get(state);
    if (!entry) return;
    entries.delete(state);
    count(perOrg, entry.stored.org, -1);
    count(perAddress, addressKey(entry.stored), -1);
    // A failed removal leaves an expired record that the next start sweeps.
    records.remove(state).catch(() => {});
  }

  function hold(state: string, stored: StoredFlow): void {
    const timer = clock.setTimeout(() => forget(state), Math.max(0, stored.expires - clock.nowMs()), { background: true });
    entries.set(state, { stored, timer });
    count(perOrg, stored.org, 1);
    count(perAddress, addressKey(stored), 1);
  }

  for (const { key, value } of records.all()) {
    if (value.expires <= clock.nowMs()) records.remove(key).catch(() => {});
    else hold(key, value);
  }

  return {
    async add(flow, address) {
      if ((perOrg.get(flow.org) ?? 0) >= limits.perOrg) return 'organization';
      if ((perAddress.get(`${flow.org}\n${address}`) ?? 0) >= limits.perAddress) return 'address';
      const stored: StoredFlow = {
        org: flow.org,
        client_id: flow.client_id,
        redirect_uri: flow.redirect_uri,
        address,
        expires: flow.expires,
        ...(flow.anonymous_person_id !== undefined && { anonymous_person_id: flow.anonymous_person_id }),
        secrets: sealer.seal(flow.org, flow.state, SEALED_AS, JSON.stringify({ nonce: flow.nonce, code_verifier: flow.code_verifier })),
      };
      // Counted before the write, so that concurrent starts cannot overshoot the bounds.
      hold(flow.state, stored);
      try {
        await records.put(flow.state, stored);
      } catch (error) {
        clock.clearTimeout((entries.get(flow.state) as Entry).timer);
        forget(flow.state);
        throw error;
      }
      return undefined;
    },
    async take(state) {
      const entry = entries.get(state);
      if (!entry) return { kind: 'unknown' };
      const { secrets, ...rest } = entry.stored;
      if (!secrets) return { kind: 'used', org: rest.org, client_id: rest.client_id };
      // Used from now on, in memory at once (a second take in the same tick sees it), then on disk before the
      // flow goes on; the tombstone stays until the flow's expiry removes it.
      entry.stored = rest;
      await records.put(state, rest);
      if (rest.expires <= clock.nowMs()) return { kind: 'unknown' };
      const opened = JSON.parse(sealer.open(rest.org, state, SEALED_AS, secrets)) as { nonce: string; code_verifier: string };
      return {
        kind: 'flow',
        flow: {
          state,
          org: rest.org,
          client_id: rest.client_id,
          redirect_uri: rest.redirect_uri,
          nonce: opened.nonce,
          code_verifier: opened.code_verifier,
          ...(rest.anonymous_person_id !== undefined && { anonymous_person_id: rest.anonymous_person_id }),
          expires: rest.expires,
        },
      };
    },
    size: () => entries.size,
    clear() {
      for (const e of entries.values()) clock.clearTimeout(e.timer);
      entries.clear();
      perOrg.clear();
      perAddress.clear();
    },
  };
}
