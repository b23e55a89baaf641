// Gate's three events, built complete at Gate in proto3 JSON: GateServerStarted_v1, GateRequestHandled_v1, GateHeartbeat_v1.
import { randomUUID } from 'node:crypto';
import { formatRfc3339 } from '../lib/time-text.js';
import type { RoundTrip } from './round-trip.js';

export type GateEvent = Record<string, unknown> & { event_metadata: { event_id: string; event_name: string } };

/** What the sender queues: a built event, or one that writes its own JSON when its batch is sent (encode). */
export interface QueuedEvent {
  readonly event_metadata: { readonly event_id: string; readonly event_name: string };
  encode?(): string;
}

/** A queued event as JSON text. */
export function encodeEvent(e: QueuedEvent): string {
  return e.encode !== undefined ? e.encode() : JSON.stringify(e);
}

export interface GateOrigin {
  orgId: string;
}

// The date and time part of the last second formatted: events of the same second share it.
let lastSecond = Number.NaN;
let lastBase = '';

/** Epoch milliseconds (fractional) as RFC 3339 with nanoseconds. */
export function timestampText(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6));
  if (seconds !== lastSecond) {
    lastSecond = seconds;
    lastBase = formatRfc3339(seconds, 0, 0).slice(0, -1);
  }
  return `${lastBase}.${String(nanos).padStart(9, '0')}Z`;
}

/** TimingMetadata; elapsed is in seconds (a double). */
export function timing(start: number, end: number): Record<string, unknown> {
  return { start: timestampText(start), end: timestampText(end), elapsed: Math.max(0, end - start) / 1000 };
}

const TYPES = { GateServerStarted: 9, GateRequestHandled: 10, GateHeartbeat: 36 } as const;

function metadata(origin: GateOrigin, type: keyof typeof TYPES, nowMs: number, uuid: () => string): GateEvent['event_metadata'] & Record<string, unknown> {
  return {
    is_test_event: false,
    event_id: uuid(),
    timestamp: timestampText(nowMs),
    source: 'Gate',
    event_type: type,
    event_name: `${type}_v1`,
    event_version: '1',
    organization_id: origin.orgId,
    root_organization_id: origin.orgId,
  };
}

export interface BuildInfo {
  version: string;
  variant: string;
  build_commit?: string;
  build_date?: string;
  built_by?: string;
}

export function serverStarted(origin: GateOrigin, instanceId: string, build: BuildInfo, renewal: boolean, nowMs: number, uuid = randomUUID): GateEvent {
  return {
    event_metadata: metadata(origin, 'GateServerStarted', nowMs, uuid),
    analytics_metadata: { analytics_correlation_id: instanceId, client_ip_address: '' },
    version: build,
    ...(renewal ? { comment: 'renewal' } : {}),
  };
}

export function heartbeat(origin: GateOrigin, instanceId: string, sequence: number, nowMs: number, uuid = randomUUID): GateEvent {
  return {
    event_metadata: metadata(origin, 'GateHeartbeat', nowMs, uuid),
    analytics_metadata: { analytics_correlation_id: instanceId, client_ip_address: '' },
    sequence: String(sequence),
  };
}

export interface PluginRecord {
  index: number;
  id: string;
  type: string;
  start: number;
  end: number;
  metadata: Record<string, unknown>;
  trips: RoundTrip[];
}

/** A request Gate handled: the same figures as a plugin's round trip, and who asked and what the plugins did. */
export interface RequestRecord extends RoundTrip {
  correlationId: string;
  ip: string;
  plugins: PluginRecord[];
}

function httpMetadata(method: string, url: string, status: number, requestLength: number, responseLength: number): Record<string, unknown> {
  return { method, url, status_code: status, request_length: String(requestLength), response_length: String(responseLength) };
}

export function requestHandled(origin: GateOrigin, r: RequestRecord, uuid = randomUUID): GateEvent {
  return {
    event_metadata: metadata(origin, 'GateRequestHandled', r.end, uuid),
    analytics_metadata: { analytics_correlation_id: r.correlationId, client_ip_address: r.ip },
    timing_metadata: timing(r.start, r.end),
    http_request_metadata: httpMetadata(r.method, r.url, r.status, r.requestLength, r.responseLength),
    plugins: pluginEntries(r.plugins),
  };
}

function pluginEntries(plugins: readonly PluginRecord[]): Array<Record<string, unknown>> {
  return plugins.map((p) => ({
    timing_metadata: timing(p.start, p.end),
    plugin_index: p.index,
    plugin_id: p.id,
    plugin_type: p.type,
    plugin_metadata: p.metadata,
    round_trips: p.trips.map((t) => ({ timing_metadata: timing(t.start, t.end), http_request_metadata: httpMetadata(t.method, t.url, t.status, t.requestLength, t.responseLength) })),
  }));
}

/**
 * A GateRequestHandled_v1 kept as its record until its batch is sent: only the event_id is made per request;
 * the URL, times and JSON are written by encode, the same text JSON.stringify(requestHandled(…)) gives.
 */
export class RequestHandledLater implements QueuedEvent {
  readonly event_metadata: { readonly event_id: string; readonly event_name: string };
  constructor(
    readonly origin: GateOrigin,
    readonly r: Omit<RequestRecord, 'url'>,
    /** the URL as received, written when encoded (redaction included) */
    readonly url: () => string,
    uuid = randomUUID,
  ) {
    this.event_metadata = { event_id: uuid(), event_name: 'GateRequestHandled_v1' };
  }

  encode(): string {
    const r = this.r;
    const org = JSON.stringify(this.origin.orgId);
    const plugins = r.plugins.length === 0 ? '[]' : JSON.stringify(pluginEntries(r.plugins));
    return (
      `{"event_metadata":{"is_test_event":false,"event_id":"${this.event_metadata.event_id}","timestamp":"${timestampText(r.end)}","source":"Gate","event_type":"GateRequestHandled","event_name":"GateRequestHandled_v1","event_version":"1","organization_id":${org},"root_organization_id":${org}},` +
      `"analytics_metadata":{"analytics_correlation_id":${JSON.stringify(r.correlationId)},"client_ip_address":${JSON.stringify(r.ip)}},` +
      `"timing_metadata":{"start":"${timestampText(r.start)}","end":"${timestampText(r.end)}","elapsed":${JSON.stringify(Math.max(0, r.end - r.start) / 1000)}},` +
      `"http_request_metadata":{"method":${JSON.stringify(r.method)},"url":${JSON.stringify(this.url())},"status_code":${r.status},"request_length":"${r.requestLength}","response_length":"${r.responseLength}"},` +
      `"plugins":${plugins}}`
    );
  }
}

// What the WHATWG parser leaves as written: a lower-case DNS name (last label not numeric) or a dotted quad
// without leading zeros, a port that is not the default, a path without dot segments (%2e included) and only
// characters it does not percent-encode or rewrite.
export const PLAIN_HOST = /^(?:(?:[a-z0-9-]+\.)*[a-z][a-z0-9-]*|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))(?::([1-9]\d{0,4}))?$/;
export const PLAIN_TARGET = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@/%?]*$/;
const DOT_SEGMENT = /\/(?:\.|%2e)/i;

/** `new URL(proto://host rawUrl).href` without parsing when the text is already in that form; undefined otherwise. */
export function plainHref(proto: string, host: string, rawUrl: string): string | undefined {
  if (proto !== 'http' && proto !== 'https') return undefined;
  const h = PLAIN_HOST.exec(host);
  if (h === null) return undefined;
  if (h[1] !== undefined) {
    const port = Number(h[1]);
    if (port > 65535 || port === (proto === 'http' ? 80 : 443)) return undefined;
  }
  if (!PLAIN_TARGET.test(rawUrl)) return undefined;
  const q = rawUrl.indexOf('?');
  if (DOT_SEGMENT.test(q < 0 ? rawUrl : rawUrl.slice(0, q))) return undefined;
  return `${proto}://${host}${rawUrl}`;
}

/** The URL as received, with the values of the named query parameters replaced by REDACTED. */
export function redactUrl(url: URL, names: readonly string[]): string {
  if (names.length === 0 || url.search === '') return url.href;
  const copy = new URL(url.href);
  for (const name of names) if (copy.searchParams.has(name)) copy.searchParams.set(name, 'REDACTED');
  return copy.href;
}
