// Decisions about cloud connections, the events of changes made at a provider on the organization's behalf,
// the snapshot summaries taken through connections, and the billing counts the seed's rule derives from them.
// Provider calls happen before these run (src/cloud/): what is decided here is existence, limits and the rule.
import { badRequest, conflict, notFound, quote } from '../errors.js';
import { formatRfc3339 } from '../lib/time-text.js';
import type { Change } from './changes.js';
import { decision, type DecideContext, type Decision, type EventDraft } from './decision.js';
import type { OrgState, StoredSecret } from './state.js';

export const CLOUD_TYPES = ['aws', 'gcp', 'active_directory'] as const;
export type CloudType = (typeof CLOUD_TYPES)[number];
export const MAX_CLOUD_CONNECTIONS = 100;

export interface CloudConnection {
  connection_id: string;
  name: string;
  type: CloudType;
  region: string;
  /** the provider's settings (account_id, endpoint, ...); never a secret */
  config: Record<string, string>;
  /** the credentials as JSON text, sealed under SERVICE_SECRETS_KEY when set; never returned */
  credentials: StoredSecret;
  created: string;
}

/** One inventory of a connection: the distinct identities of each class it found. */
export interface CloudSnapshot {
  connection_id: string;
  region: string;
  /** milliseconds since the epoch */
  at_ms: number;
  user_identities: number;
  non_human_identities: number;
  credentials: number;
}

/** The latest BillableProtectedIdentitiesCounted row of one (region, window), as the reader keeps it. */
export interface BillingRow {
  region: string;
  window_start: string;
  window_end: string;
  user_identities_count: number;
  non_human_identities_count: number;
  credentials_count: number;
  computed_at: string;
}

export type CloudConnectionView = Omit<CloudConnection, 'credentials'>;

export function cloudConnectionView(c: CloudConnection): CloudConnectionView {
  const { credentials: _sealed, ...rest } = c;
  return { ...rest, config: { ...c.config } };
}

export function requireCloudConnection(state: OrgState, id: string): CloudConnection {
  const c = state.cloud_connections.get(id);
  if (!c) throw notFound(`cloud connection ${quote(id)} not found`);
  return c;
}

export function createCloudConnection(state: OrgState, input: Omit<CloudConnection, 'created'>, ctx: DecideContext): Decision<CloudConnectionView> {
  if (state.cloud_connections.has(input.connection_id)) throw conflict(`cloud connection ${quote(input.connection_id)} already exists`);
  if (state.cloud_connections.size >= MAX_CLOUD_CONNECTIONS) throw badRequest(`an organization may have at most ${MAX_CLOUD_CONNECTIONS} cloud connections`);
  const connection: CloudConnection = { ...input, created: new Date(ctx.nowMs).toISOString() };
  return decision(cloudConnectionView(connection), [{ t: 'CloudConnectionSet', connection }]);
}

/** The whole connection after a PATCH; its id, type and creation time never change. */
export function updateCloudConnection(state: OrgState, next: CloudConnection): Decision<CloudConnectionView> {
  const current = requireCloudConnection(state, next.connection_id);
  if (current.type !== next.type) throw conflict(`cloud connection ${quote(next.connection_id)} changed while the request ran; retry`);
  const connection = { ...next, created: current.created };
  return decision(cloudConnectionView(connection), [{ t: 'CloudConnectionSet', connection }]);
}

export function deleteCloudConnection(state: OrgState, id: string): Decision<null> {
  requireCloudConnection(state, id);
  return decision(null, [{ t: 'CloudConnectionDeleted', connection_id: id }]);
}

/** A change the provider confirmed: its event, as long as the connection still exists. */
export function recordCloudChange(state: OrgState, connectionId: string, event: EventDraft): Decision<null> {
  requireCloudConnection(state, connectionId);
  return decision(null, [], [event]);
}

export function recordCloudSnapshot(state: OrgState, snapshot: CloudSnapshot): Decision<CloudSnapshot> {
  requireCloudConnection(state, snapshot.connection_id);
  return decision(snapshot, [{ t: 'CloudSnapshotRecorded', snapshot }]);
}

/** Start of the UTC month `offset` months from the one holding `ms`, in ms. */
export function monthStart(ms: number, offset = 0): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + offset, 1);
}

export const monthText = (ms: number): string => formatRfc3339(Math.floor(ms / 1000), (ms % 1000) * 1_000_000, 9);

/** The window of one UTC calendar month: its first instant to the next month's first instant. */
export function monthWindow(startMs: number): { start_ms: number; end_ms: number; window_start: string; window_end: string } {
  const end = monthStart(startMs, 1);
  return { start_ms: startMs, end_ms: end, window_start: monthText(startMs), window_end: monthText(end) };
}

/**
 * The seed's rule to the letter: each count is the number of distinct connection_id among the snapshot rows
 * of that identity class with snapshot_timestamp strictly after window_start and strictly before window_end.
 * A snapshot holds a row of a class when it found at least one identity of it.
 */
export function billableCounts(snapshots: readonly CloudSnapshot[], region: string, startMs: number, endMs: number) {
  const users = new Set<string>();
  const nonHuman = new Set<string>();
  const creds = new Set<string>();
  for (const s of snapshots) {
    if (s.region !== region || !(s.at_ms > startMs && s.at_ms < endMs)) continue;
    if (s.user_identities > 0) users.add(s.connection_id);
    if (s.non_human_identities > 0) nonHuman.add(s.connection_id);
    if (s.credentials > 0) creds.add(s.connection_id);
  }
  return { user_identities_count: users.size, non_human_identities_count: nonHuman.size, credentials_count: creds.size };
}

/**
 * The hourly count: for each region holding snapshot data of the organization, one event for the previous and
 * one for the current UTC month. computed_at: RFC 3339 truncated to microseconds.
 */
export function countBillableIdentities(state: OrgState, nowMs: number, computedAt: string): Decision<number> {
  const regions = [...new Set(state.cloud_snapshots.map((s) => s.region))].sort();
  const changes: Change[] = [];
  const events: EventDraft[] = [];
  for (const region of regions) {
    for (const start of [monthStart(nowMs, -1), monthStart(nowMs)]) {
      const w = monthWindow(start);
      const counts = billableCounts(state.cloud_snapshots, region, w.start_ms, w.end_ms);
      const row: BillingRow = { region, window_start: w.window_start, window_end: w.window_end, ...counts, computed_at: computedAt };
      changes.push({ t: 'BillingCounted', row, now_ms: nowMs });
      // The counts are int64 in the event: proto3 JSON writes them as decimal strings.
      const counted = {
        user_identities_count: String(counts.user_identities_count),
        non_human_identities_count: String(counts.non_human_identities_count),
        credentials_count: String(counts.credentials_count),
      };
      events.push({ name: 'BillableProtectedIdentitiesCounted_v1', body: { org_id: state.id, ...row, ...counted } });
    }
  }
  return decision(events.length, changes, events);
}

export const billingKey = (r: Pick<BillingRow, 'region' | 'window_start' | 'window_end'>) => `${r.region}|${r.window_start}|${r.window_end}`;
