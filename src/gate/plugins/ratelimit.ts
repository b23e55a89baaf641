// ratelimit: GCRA limits held in memory, keyed by client IP, a request header or a claim of the validated token;
// 429 with Retry-After and the RateLimit-* headers (each switchable).
import { parseDuration } from '../../domain/webhook-rules.js';
import type { PluginConfig } from '../config.js';
import { createGcra, type Gcra, type GcraResult } from './gcra.js';
import { checkParameters, param, type GateRequest, type Plugin } from './types.js';

const PARAMS = ['limits', 'headers', 'max_keys'] as const;
const HEADER_SWITCHES = ['retry_after', 'ratelimit_limit', 'ratelimit_remaining', 'ratelimit_reset'] as const;

interface Limit {
  key: string;
  keyOf(req: GateRequest): string | undefined;
  burst: number;
  gcra: Gcra;
}

export function createRatelimit(config: PluginConfig, now: () => number = Date.now): Plugin {
  checkParameters(config, PARAMS);
  const at = `gate.plugins.${config.index}.parameters`;
  const maxKeys = param<number>(config, 'max_keys', 'number') ?? 100_000;
  const switches = param<Record<string, unknown>>(config, 'headers', 'object') ?? {};
  for (const [k, v] of Object.entries(switches)) {
    if (!(HEADER_SWITCHES as readonly string[]).includes(k)) throw new Error(`${at}.headers.${k}: unknown (known: ${HEADER_SWITCHES.join(', ')})`);
    if (typeof v !== 'boolean') throw new Error(`${at}.headers.${k}: must be true or false`);
  }
  const on = (name: (typeof HEADER_SWITCHES)[number]) => switches[name] !== false;
  const raw = param<unknown[]>(config, 'limits', 'list') ?? [];
  if (raw.length === 0) throw new Error(`${at}.limits: at least one limit {key, interval, burst} is needed`);
  const limits: Limit[] = raw.map((l, i) => {
    if (typeof l !== 'object' || l === null) throw new Error(`${at}.limits.${i}: must be a mapping`);
    const o = l as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!['key', 'interval', 'burst', 'comment'].includes(k)) throw new Error(`${at}.limits.${i}.${k}: unknown (known: key, interval, burst, comment)`);
    const key = o['key'] ?? 'ip';
    if (typeof key !== 'string') throw new Error(`${at}.limits.${i}.key: must be ip, header:<name> or claim:<name>`);
    let keyOf: Limit['keyOf'];
    if (key === 'ip') keyOf = (r) => r.ip;
    else if (key.startsWith('header:') && key.length > 7) {
      const h = key.slice(7).toLowerCase();
      keyOf = (r) => {
        const v = r.headers[h];
        return Array.isArray(v) ? v[0] : v;
      };
    } else if (key.startsWith('claim:') && key.length > 6) {
      const c = key.slice(6);
      keyOf = (r) => {
        const v = r.claims?.[c];
        return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
      };
    } else throw new Error(`${at}.limits.${i}.key: "${key}" is not ip, header:<name> or claim:<name>`);
    if (typeof o['interval'] !== 'string') throw new Error(`${at}.limits.${i}.interval: a duration such as 1s is needed`);
    const intervalMs = parseDuration(o['interval'], `${at}.limits.${i}.interval`);
    const burst = o['burst'] ?? 1;
    if (typeof burst !== 'number' || !Number.isInteger(burst) || burst < 1) throw new Error(`${at}.limits.${i}.burst: must be a positive integer`);
    if (intervalMs <= 0) throw new Error(`${at}.limits.${i}.interval: must be positive`);
    return { key, keyOf, burst, gcra: createGcra({ intervalMs, burst }, maxKeys) };
  });

  return {
    config,
    async handle(req) {
      const t = now();
      let tightest: { limit: Limit; result: GcraResult } | undefined;
      for (const limit of limits) {
        const k = limit.keyOf(req);
        // A request without the key's value (no such header, no validated token) is not counted by that limit.
        if (k === undefined || k === '') continue;
        const result = limit.gcra.take(`${k}`, t);
        if (!result.allowed) {
          const retry = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
          const headers: Record<string, string> = {};
          if (on('retry_after')) headers['retry-after'] = String(retry);
          if (on('ratelimit_limit')) headers['ratelimit-limit'] = String(limit.burst);
          if (on('ratelimit_remaining')) headers['ratelimit-remaining'] = '0';
          if (on('ratelimit_reset')) headers['ratelimit-reset'] = String(retry);
          return {
            action: 'answer',
            status: 429,
            headers,
            body: JSON.stringify({ errors: [{ httpcode: 429, message: `rate limit exceeded; retry in ${retry} s` }] }),
            metadata: { decision: 'deny', limited: true, key: limit.key, remaining: 0 },
          };
        }
        if (tightest === undefined || result.remaining < tightest.result.remaining) tightest = { limit, result };
      }
      return { action: 'continue', metadata: { decision: 'allow', limited: false, ...(tightest ? { key: tightest.limit.key, remaining: tightest.result.remaining } : {}) } };
    },
  };
}
