// Back-channel logout (OpenID Back-Channel Logout 1.0): when a session ends, each client that received tokens
// in it and registered a backchannel_logout_uri gets a signed logout token POSTed there. Deliveries run on the
// webhook delivery machine (one in flight per client, retried with the webhooks' back-off and limit) through
// the webhook caller, so its SSRF guard decides where they may connect. What is owed is organization state
// (SessionEnded records it, BackchannelLogoutsDone clears it), so a restart resumes the deliveries not done.
import type { Change } from '../domain/changes.js';
import type { LogoutNotice } from '../domain/sessions.js';
import type { OAuthClient } from '../domain/state.js';
import type { Clock } from '../lib/clock.js';
import type { PendingToken } from '../tokens/sign.js';
import { retryDelayMs, type Backoff } from '../webhooks/backoff.js';
import { WebhookCallError, type WebhookCaller } from '../webhooks/caller.js';
import { startDelivery, type DeliveryActor, type DeliveryDriver, type DeliveryItem } from '../webhooks/delivery-machine.js';

/** §2.4: the event that makes a JWT a logout token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** §2.4: a logout token is short-lived; it is signed anew for each attempt. */
export const LOGOUT_TOKEN_TTL_S = 120;
/** A receiver that does not answer within this is retried later (the webhooks' event default). */
const CALL_TIMEOUT_MS = 5000;
/** Logout notices queued per client at most; past it new ones stay owed (state) and are queued after a restart. */
const MAX_QUEUED = 10_000;

export interface BackchannelCommit {
  readonly org: string;
  readonly entries: ReadonlyArray<{ readonly changes: readonly Change[] }>;
}

export interface BackchannelLogoutDeps {
  /** the organization's client as its state has it now */
  client(org: string, clientId: string): OAuthClient | undefined;
  /** every organization's logouts owed, as their states have them now (at start) */
  owed(): Iterable<{ org: string; notices: Iterable<LogoutNotice> }>;
  /** records, through the organization, that a logout was delivered or given up */
  done(org: string, sid: string): Promise<void>;
  /** signs logout-token claims (typ logout+jwt), setting iss, iat, exp and jti */
  sign(claims: Record<string, unknown>, ttl: number): PendingToken;
  caller: WebhookCaller;
  retry: Backoff & { limit: number };
  random: () => number;
  clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>;
  warn(message: string): void;
}

export interface BackchannelLogout {
  /** Queues the logouts owed: those of sessions that ended before a restart, not yet delivered. */
  start(): void;
  /** The commit bus's subscriber: queues a delivery per notice of each SessionEnded. */
  committed(commit: BackchannelCommit): void;
  stop(): void;
}

/** §2.4: iss, aud, iat, exp, jti from the signer; sub and sid; the event; never a nonce. */
export function logoutClaims(notice: LogoutNotice): Record<string, unknown> {
  return { aud: notice.client_id, sub: notice.person_id, sid: notice.sid, events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } };
}

export function createBackchannelLogout(deps: BackchannelLogoutDeps): BackchannelLogout {
  const queues = new Map<string, { actor: DeliveryActor; items: LogoutNotice[]; queued: Set<string> }>();
  let seq = 0;
  let stopped = false;

  function queueFor(org: string, clientId: string) {
    const key = `${org}\u0000${clientId}`;
    let q = queues.get(key);
    if (q) return q;
    const items: LogoutNotice[] = [];
    const queued = new Set<string>();
    /** Off the queue, and no longer owed: a failure to record it means it is sent again after a restart. */
    const finish = (): LogoutNotice | undefined => {
      const notice = items.shift();
      if (notice) {
        queued.delete(notice.sid);
        deps.done(org, notice.sid).catch((error: unknown) => deps.warn(`recording the back-channel logout of sid ${notice.sid} of ${org}: ${String(error)}`));
      }
      return notice;
    };
    const driver: DeliveryDriver = {
      limit: deps.retry.limit,
      pauseMs: deps.retry.maxMs,
      hasWork: () => items.length > 0,
      next: (): DeliveryItem | undefined => {
        const notice = items[0];
        return notice && { offset: ++seq, event_name: 'backchannel_logout', event: { ...notice }, source: 'log' };
      },
      async attempt(_item, _attempt, signal) {
        const notice = items[0];
        const client = deps.client(org, clientId);
        // A client deleted or no longer listening is not told; the delivery ends.
        if (!notice || client?.backchannel_logout_uri === undefined) return { ok: true };
        const token = await deps.sign(logoutClaims(notice), LOGOUT_TOKEN_TTL_S).token;
        try {
          const res = await deps.caller.post({
            url: client.backchannel_logout_uri,
            headers: {},
            contentType: 'application/x-www-form-urlencoded',
            body: new URLSearchParams({ logout_token: token }).toString(),
            timeoutMs: CALL_TIMEOUT_MS,
            signal,
          });
          // §2.8: 200 (or 204) is success; 400 or anything else is retried, like a webhook delivery.
          return res.status >= 200 && res.status <= 299 ? { ok: true } : { ok: false, error: `the receiver answered ${res.status}` };
        } catch (error) {
          if (!(error instanceof WebhookCallError)) throw error;
          return { ok: false, error: `${error.reason}: ${error.message}` };
        }
      },
      delivered: () => void finish(),
      async bury(_item, attempts, lastError) {
        const notice = finish();
        deps.warn(`back-channel logout of sid ${notice?.sid} to client ${clientId} of ${org} given up after ${attempts} attempts: ${lastError}`);
      },
      retryDelayMs: (failures) => retryDelayMs(failures, deps.retry, deps.random),
      failed: (error) => deps.warn(`back-channel logout deliveries of client ${clientId} of ${org}: ${String(error)}`),
    };
    q = { actor: startDelivery(driver, deps.clock), items, queued };
    queues.set(key, q);
    return q;
  }

  function enqueue(org: string, notice: LogoutNotice): void {
    if (stopped) return;
    const q = queueFor(org, notice.client_id);
    if (q.queued.has(notice.sid)) return;
    if (q.items.length >= MAX_QUEUED) {
      deps.warn(`back-channel logout of sid ${notice.sid} to client ${notice.client_id} of ${org} waits for a restart: ${MAX_QUEUED} are queued`);
      return;
    }
    q.items.push(notice);
    q.queued.add(notice.sid);
    q.actor.send({ type: 'work' });
  }

  return {
    start() {
      for (const { org, notices } of deps.owed()) for (const notice of notices) enqueue(org, notice);
    },
    committed(commit) {
      for (const entry of commit.entries) {
        for (const change of entry.changes) if (change.t === 'SessionEnded') for (const notice of change.logouts) enqueue(commit.org, notice);
      }
    },
    stop() {
      stopped = true;
      for (const q of queues.values()) q.actor.stop();
      queues.clear();
    },
  };
}
