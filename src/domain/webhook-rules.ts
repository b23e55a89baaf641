// Validation of webhook settings and triggers: target URLs, duration strings, custom headers, trigger names.
import { isIP } from 'node:net';
import { badRequest } from '../errors.js';
import { isReservedKey } from './reserved-keys.js';
import type { TriggerType, Webhook, WebhookTrigger } from './state.js';

export const MAX_WEBHOOKS = 100;
export const MAX_TRIGGERS = 100;
export const TIMEOUT_MAX_MS = 20_000;
/** what a timeout of "0s" (unset) means */
export const DEFAULT_TIMEOUT_MS: Record<TriggerType, number> = { sync_hook: 2_000, event: 10_000 };
export const SYNC_HOOK_NAMES = ['token_minted'] as const;

const MAX_HEADERS = 32;
const MAX_HEADER_VALUES = 16;
const MAX_HEADER_VALUE_LENGTH = 4096;
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}$/;
// Printable ASCII and tab: no CR, LF or NUL can reach the request line.
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
/** hop-by-hop headers, and those the call itself sets */
const REFUSED_HEADERS = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authenticate', 'proxy-authorization',
  'content-type', 'content-length', 'host', 'expect',
]);

/**
 * A target URL the deployment accepts, in its canonical form (which is what uniqueness compares).
 * Without allowInsecure: https, a host name that is neither localhost nor an IP address. Always: no query,
 * no fragment, no credentials.
 */
export function checkTargetUrl(raw: string, allowInsecure: boolean, field = 'target_url'): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest(`${field}: "${raw.slice(0, 100)}" is not an absolute URL`);
  }
  const schemes = allowInsecure ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw badRequest(`${field}: the scheme must be ${schemes.map((s) => s.slice(0, -1)).join(' or ')}`);
  if (url.hostname === '') throw badRequest(`${field}: a host is required`);
  if (url.search !== '' || raw.includes('?')) throw badRequest(`${field}: a query string is not allowed`);
  if (url.hash !== '' || raw.includes('#')) throw badRequest(`${field}: a fragment is not allowed`);
  // Credentials in the URL would travel in every delivery token's target_url claim.
  if (url.username !== '' || url.password !== '') throw badRequest(`${field}: credentials in the URL are not allowed; use custom_headers`);
  if (!allowInsecure) {
    const host = url.hostname.replace(/\.$/, '').toLowerCase();
    if (host === 'localhost' || host.endsWith('.localhost')) throw badRequest(`${field}: localhost is not allowed`);
    // The URL parser turns every numeric form (0x7f.1, 2130706433) into dotted IPv4; IPv6 keeps its brackets.
    if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) throw badRequest(`${field}: an IP address is not allowed; use a host name`);
  }
  return url.href;
}

export const DURATION = /^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** A Go-style duration string ("500ms", "2s", "1m30s", "0") in milliseconds. */
export function parseDuration(raw: string, field = 'timeout'): number {
  if (raw === '0') return 0;
  if (!DURATION.test(raw)) throw badRequest(`${field}: "${raw.slice(0, 40)}" is not a duration such as 500ms, 2s or 1m`);
  let ms = 0;
  for (const m of raw.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) ms += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  return ms;
}

export function checkTimeout(raw: string, field = 'timeout'): void {
  const ms = parseDuration(raw, field);
  if (ms > TIMEOUT_MAX_MS) throw badRequest(`${field}: at most ${TIMEOUT_MAX_MS / 1000}s is allowed, got "${raw}"`);
  if (ms > 0 && ms < 1) throw badRequest(`${field}: must be 0s or at least 1ms, got "${raw}"`);
}

/** The time a call may take: the webhook's timeout, or the trigger type's default when it is "0s". */
export function callTimeoutMs(webhook: Pick<Webhook, 'timeout'>, type: TriggerType): number {
  return Math.round(parseDuration(webhook.timeout)) || DEFAULT_TIMEOUT_MS[type];
}

export function checkCustomHeaders(headers: Record<string, string[]>, field = 'custom_headers'): Record<string, string[]> {
  const names = Object.keys(headers);
  if (names.length > MAX_HEADERS) throw badRequest(`${field}: at most ${MAX_HEADERS} headers are allowed`);
  const seen = new Set<string>();
  const out: Record<string, string[]> = {};
  for (const name of names) {
    const lower = name.toLowerCase();
    if (isReservedKey(name)) throw badRequest(`${field}: "${name}" is a reserved name and cannot be a header name`);
    if (!HEADER_NAME.test(name)) throw badRequest(`${field}: "${name.slice(0, 40)}" is not a valid header name`);
    if (REFUSED_HEADERS.has(lower)) throw badRequest(`${field}: the header ${name} cannot be set on webhook calls`);
    if (seen.has(lower)) throw badRequest(`${field}: the header ${name} is given twice (header names are case-insensitive)`);
    seen.add(lower);
    const values = headers[name] as string[];
    if (values.length === 0 || values.length > MAX_HEADER_VALUES) throw badRequest(`${field}.${name}: must have 1 to ${MAX_HEADER_VALUES} values`);
    values.forEach((v, i) => {
      if (v.length > MAX_HEADER_VALUE_LENGTH) throw badRequest(`${field}.${name}[${i}]: at most ${MAX_HEADER_VALUE_LENGTH} characters are allowed`);
      if (!HEADER_VALUE.test(v)) throw badRequest(`${field}.${name}[${i}]: only printable ASCII characters and tabs are allowed`);
    });
    out[name] = [...values];
  }
  return out;
}

/** An event trigger names an event message of the catalog, which events/ owns: the context says which names are. */
export function checkTrigger(trigger: WebhookTrigger, isEventMessageName: (name: string) => boolean): void {
  if (trigger.trigger_type === 'sync_hook') {
    if (!(SYNC_HOOK_NAMES as readonly string[]).includes(trigger.trigger_name)) {
      throw badRequest(`trigger_name: a sync_hook trigger must be one of ${SYNC_HOOK_NAMES.join(', ')}, got "${trigger.trigger_name.slice(0, 100)}"`);
    }
  } else if (!isEventMessageName(trigger.trigger_name)) {
    throw badRequest(`trigger_name: an event trigger names an event message such as PersonCreated_v1, got "${trigger.trigger_name.slice(0, 100)}"`);
  }
}
