// Phishing (reverse-proxy) detection at the edge: the tokens' image answered to anyone, the host that embedded
// it read from Referer (else Origin), detections outside the allowed domains recorded (rate-limited per token,
// address and host, and per token whatever the host, since anyone can send a fresh Referer with every request;
// the rest counted), and the views counted for /stats/mitm.
import { hostAllowed } from '../domain/mitm.js';
import type { Clock } from '../lib/clock.js';
import type { Metrics } from '../lib/metrics.js';
import type { OrgActor } from '../org/actor.js';
import type { CommitBus } from '../org/commit-bus.js';
import type { Registry } from '../org/registry.js';
import { createRateLimit } from './rate.js';

/** A 1×1 transparent PNG: what every request of the image route gets, whether its token exists or not. */
export const TRANSPARENT_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII=', 'base64');

/** The mitm_domain of views whose request named no host (no Referer, no Origin). */
export const UNKNOWN_DOMAIN = 'unknown';

/** views kept per organization for the statistics; the oldest go first */
const MAX_VIEWS = 100_000;
/** a DNS name's longest form: what is recorded of a host, which the URL parser does not bound */
export const MAX_RECORDED_HOST = 253;
/** what is recorded of a User-Agent header */
export const MAX_RECORDED_USER_AGENT = 256;

export interface MitmView {
  token: string;
  referer: string;
  origin: string;
  ip: string;
  userAgent: string;
}

export interface MitmStatsItem {
  mitm_domain: string;
  view_count: number;
  unique_ip_count: number;
  token_tag: string;
  allowed_domains: string[];
}

export interface MitmDetector {
  /** Counts the view and records a detection when due; never throws, never tells whether the token exists. */
  view(v: MitmView): void;
  /** Views from hosts outside the allowed domains (and without a host) between start and end (ms), per host. */
  stats(orgId: string, startMs: number, endMs: number): MitmStatsItem[];
}

export interface MitmDeps {
  registry: Pick<Registry, 'all' | 'get'>;
  commits: CommitBus;
  clock: Pick<Clock, 'nowMs'>;
  /** detections recorded per (token, address, host) and window, and per token and window whatever the host */
  rate: { windowMs: number; perKey: number; perToken: number };
  metrics: Metrics;
  warn(message: string): void;
}

interface View {
  ms: number;
  domain: string;
  ip: string;
  tag: string;
  allowed: readonly string[];
}

/** The host a URL names, lower case; undefined for no URL or one that is not. */
function hostOf(url: string): string | undefined {
  if (url === '' || url === 'null') return undefined;
  try {
    const host = new URL(url).hostname.toLowerCase().slice(0, MAX_RECORDED_HOST);
    return host === '' ? undefined : host;
  } catch {
    return undefined;
  }
}

export function createMitmDetector(deps: MitmDeps): MitmDetector {
  // Image requests carry only the token: which organization holds it is kept here, as the commits say.
  const owner = new Map<string, string>();
  for (const actor of deps.registry.all()) for (const t of actor.state.mitm_tokens.keys()) owner.set(t, actor.id);
  deps.commits.subscribe((commit) => {
    for (const entry of commit.entries) {
      for (const change of entry.changes) {
        if (change.t === 'MitmTokenCreated') owner.set(change.token.token, commit.org);
        else if (change.t === 'MitmTokenDeleted') owner.delete(change.token);
      }
    }
  }, 'the MITM token index');
  const views = new Map<string, View[]>();
  const perKey = createRateLimit({ windowMs: deps.rate.windowMs, limit: deps.rate.perKey });
  const perToken = createRateLimit({ windowMs: deps.rate.windowMs, limit: deps.rate.perToken });
  const suppressed = deps.metrics.counter('mitm_detections_suppressed_total', 'Phishing detections not recorded as MitmAttackDetected because their token, address and host, or their token, reached the rate limit');

  function record(org: OrgActor, token: string, domain: string, v: MitmView, now: number): void {
    if (perKey.take(`${org.id}\n${token}\n${v.ip}\n${domain}`, now) > 0 || perToken.take(`${org.id}\n${token}`, now) > 0) return suppressed.inc();
    const detection = { token, mitm_domain: domain, client_ip_address: v.ip, user_agent: v.userAgent.slice(0, MAX_RECORDED_USER_AGENT) };
    org.execute({ kind: 'RecordMitmDetection', detection }).catch((error: unknown) => {
      deps.warn(`a MITM detection of organization ${org.id} was not recorded: ${(error as Error).message}`);
    });
  }

  return {
    view(v) {
      const orgId = owner.get(v.token);
      if (orgId === undefined) return;
      const org = deps.registry.get(orgId);
      const token = org?.state.mitm_tokens.get(v.token);
      if (!org || !token) return;
      const host = hostOf(v.referer) ?? hostOf(v.origin);
      if (host !== undefined && hostAllowed(token.allowed_domains, host)) return;
      const now = deps.clock.nowMs();
      const domain = host ?? UNKNOWN_DOMAIN;
      let list = views.get(orgId);
      if (!list) views.set(orgId, (list = []));
      list.push({ ms: now, domain, ip: v.ip, tag: token.tag, allowed: token.allowed_domains });
      if (list.length > MAX_VIEWS) list.splice(0, list.length - MAX_VIEWS);
      if (host !== undefined) record(org, token.token, host, v, now);
    },
    stats(orgId, startMs, endMs) {
      const byDomain = new Map<string, { views: number; ips: Set<string>; tag: string; allowed: readonly string[] }>();
      for (const v of views.get(orgId) ?? []) {
        if (v.ms < startMs || v.ms > endMs) continue;
        let s = byDomain.get(v.domain);
        if (!s) byDomain.set(v.domain, (s = { views: 0, ips: new Set(), tag: v.tag, allowed: v.allowed }));
        s.views++;
        s.ips.add(v.ip);
        // The latest view's token describes the host.
        s.tag = v.tag;
        s.allowed = v.allowed;
      }
      return [...byDomain].map(([mitm_domain, s]) => ({ mitm_domain, view_count: s.views, unique_ip_count: s.ips.size, token_tag: s.tag, allowed_domains: [...s.allowed] }));
    },
  };
}
