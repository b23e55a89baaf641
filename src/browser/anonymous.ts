// Anonymous persons: created with their first token through the issuing pipeline, recognised when their token
// comes back with a sign-in or registration, and deleted once their fixed lifetime is over.
import { badRequest, ServiceError } from '../errors.js';
import type { IssuePipeline, IssuingOrg, Consistency } from '../auth/issue.js';
import { expired } from '../domain/anonymous.js';
import type { Person } from '../domain/state.js';
import type { Clock, TimerHandle } from '../lib/clock.js';
import { rfc3339Nanos } from '../lib/time-text.js';
import type { TokenValidator } from '../tokens/validate.js';
import { createRateLimit, retryAfter } from './rate.js';

export interface AnonymousDeps {
  pipeline: Pick<IssuePipeline, 'issue'>;
  validator: Pick<TokenValidator, 'identify'>;
  clock: Pick<Clock, 'nowMs' | 'nowNs'>;
  newId(): string;
  /** configured regions, the local one first */
  regions: readonly string[];
  /** SERVICE_ANONYMOUS_TTL, seconds */
  ttlS: number;
  rate: { windowMs: number; perIp: number };
}

export interface AnonymousCreate {
  org: IssuingOrg;
  region?: string | undefined;
  ip: string;
  /** Service-Analytics-Correlation-ID when the SDK sent one; a fresh one otherwise */
  correlation_id?: string | undefined;
  consistency: Consistency;
}

export interface AnonymousPersons {
  /** POST /persons/anonymous: the new person's token; 429 past the per-address rate */
  create(c: AnonymousCreate): Promise<string>;
  /**
   * The anonymous person an `Authorization` header of a sign-in or registration names: undefined without
   * one, or for a token that expired (an ordinary sign-in then); 400 for anything but a live anonymous token
   * of this organization.
   */
  held(org: IssuingOrg, authorization: string | undefined): Promise<string | undefined>;
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function createAnonymousPersons(deps: AnonymousDeps): AnonymousPersons {
  const perIp = createRateLimit({ windowMs: deps.rate.windowMs, limit: deps.rate.perIp });
  return {
    async create(c) {
      const now = deps.clock.nowMs();
      const wait = perIp.take(`${c.org.id}\n${c.ip}`, now);
      if (wait > 0) throw new ServiceError('ERR_TOO_MANY_REQUESTS', 'too many anonymous persons created from this address; retry later', { headers: retryAfter(wait) });
      const region = c.region ?? (deps.regions[0] as string);
      if (!deps.regions.includes(region)) throw badRequest(`region: must be one of the configured regions: ${deps.regions.join(', ')}`);
      if (c.correlation_id !== undefined && !UUID.test(c.correlation_id)) throw badRequest('Service-Analytics-Correlation-ID: must be a UUID');
      const person: Person = {
        person_id: deps.newId(),
        active: true,
        person_type: 'anonymous',
        anonymous_expires_ms: now + deps.ttlS * 1000,
        region,
        handles: [],
        verified_handles: {},
        groups: [],
        attributes: {},
        gdpr_consents: [],
        created: new Date(now).toISOString(),
      };
      const issued = await deps.pipeline.issue(c.org, {
        method: 'anonymous',
        person,
        analytics_metadata: { analytics_correlation_id: c.correlation_id ?? deps.newId(), client_ip_address: c.ip },
        timestamp: rfc3339Nanos(deps.clock.nowNs()),
        consistency: c.consistency,
      });
      return issued.token;
    },

    async held(org, authorization) {
      if (authorization === undefined) return undefined;
      const match = /^Bearer\s+(\S+)$/i.exec(authorization);
      if (!match) throw badRequest('Authorization: must be Bearer and an anonymous person\'s token');
      const identified = await deps.validator.identify(match[1] as string);
      if (!('org' in identified)) {
        if (identified.invalidity_reason === 'expired') return undefined;
        throw badRequest(`Authorization: not a valid token (${identified.invalidity_reason ?? 'invalid'})`);
      }
      const person = org.state.persons.get(identified.person_id);
      if (identified.org !== org.id || identified.claims['person_type'] !== 'anonymous' || !person || person.person_type !== 'anonymous') {
        throw badRequest("Authorization: not an anonymous person's token of this organization");
      }
      // Past its life but not swept yet: as good as expired.
      return expired(person, deps.clock.nowMs()) ? undefined : person.person_id;
    },
  };
}

export interface ExpiryDeps {
  orgs(): Iterable<{ readonly state: { readonly persons: ReadonlyMap<string, Person> }; execute(command: { kind: 'ExpireAnonymousPersons'; now_ms: number }): Promise<unknown> }>;
  clock: Pick<Clock, 'nowMs' | 'setInterval' | 'clearTimeout'>;
  intervalMs: number;
  warn(message: string): void;
}

/**
 * Deletes anonymous persons past their life, at start and every interval. The end of life is in each person's
 * state (the WAL), not in a timer, so a restart loses nothing: the first sweep after it catches up.
 */
export function startAnonymousExpiry(deps: ExpiryDeps): { sweep(): Promise<void>; stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  async function sweepOnce(): Promise<void> {
    const now = deps.clock.nowMs();
    for (const org of deps.orgs()) {
      let due = false;
      for (const p of org.state.persons.values()) {
        if (expired(p, now)) {
          due = true;
          break;
        }
      }
      if (!due) continue;
      try {
        await org.execute({ kind: 'ExpireAnonymousPersons', now_ms: now });
      } catch (error) {
        deps.warn(`expiring anonymous persons failed: ${(error as Error).message}`);
      }
    }
  }
  const sweep = () => (running ??= sweepOnce().finally(() => (running = undefined)));
  const timer: TimerHandle = deps.clock.setInterval(() => void sweep(), deps.intervalMs, { background: true });
  void sweep();
  return {
    sweep,
    async stop() {
      deps.clock.clearTimeout(timer);
      await running;
    },
  };
}
