// The token_minted sync hook: before a sign-in's token is signed, every webhook of the organization with
// that trigger is called concurrently; their answers add claims, deny the sign-in, or fail it.
import { callTimeoutMs } from '../domain/webhook-rules.js';
import { webhooksTriggeredBy } from '../domain/webhooks.js';
import type { Handle, OrgState, Webhook } from '../domain/state.js';
import { WebhookCallError, type WebhookCaller } from './caller.js';
import type { DeliverySigner } from './delivery-token.js';
import type { FailureReason, WebhookMetrics } from './metrics.js';

/** The seed's trigger_content for token_minted: the claims of the token about to be minted. */
export interface TokenMintedContent {
  aud: string;
  sub: string;
  iss: string;
  authentications: Array<{ handle: Handle; method: string; timestamp: string }>;
  first_token: boolean;
  groups_claim_name: string;
  region: string;
  request_metadata: { client_ip_address: string; origin: string; user_agent: string };
}

export type HookOutcome =
  /** claims to merge into the token, reserved names already dropped */
  | { kind: 'ok'; claims: Record<string, unknown> }
  | { kind: 'denied'; webhook: Webhook; detail: string }
  | { kind: 'failed'; webhook: Webhook; detail: string };

type CallResult = { kind: 'claims'; claims: Record<string, unknown> } | { kind: 'denied'; detail: string } | { kind: 'failed'; reason: FailureReason; detail: string };

export interface SyncHooks {
  tokenMinted(org: OrgState, content: TokenMintedContent): Promise<HookOutcome>;
}

const TRIGGER = { trigger_type: 'sync_hook', trigger_name: 'token_minted' } as const;

function parseClaims(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function createSyncHooks(deps: { caller: WebhookCaller; signer: DeliverySigner; metrics: WebhookMetrics }): SyncHooks {
  async function call(org: OrgState, webhook: Webhook, content: TokenMintedContent): Promise<CallResult> {
    const body = deps.signer.sign({ org: org.id, sub: content.sub, webhook, ...TRIGGER, trigger_content: content });
    try {
      const res = await deps.caller.post({ url: webhook.target_url, headers: webhook.custom_headers, body, timeoutMs: callTimeoutMs(webhook, 'sync_hook') });
      if (res.status === 403) return { kind: 'denied', detail: 'the receiver answered 403' };
      if (res.status < 200 || res.status > 299) return { kind: 'failed', reason: 'status', detail: `the receiver answered ${res.status}` };
      // 204 No Content is an explicit "nothing to add".
      if (res.status === 204) return { kind: 'claims', claims: {} };
      const claims = parseClaims(res.body);
      if (!claims) return { kind: 'failed', reason: 'invalid_body', detail: 'the response body is not a JSON object' };
      return { kind: 'claims', claims };
    } catch (error) {
      if (error instanceof WebhookCallError) return { kind: 'failed', reason: error.reason, detail: error.message };
      throw error;
    }
  }

  async function timed(org: OrgState, webhook: Webhook, content: TokenMintedContent): Promise<CallResult> {
    const started = performance.now();
    const result = await call(org, webhook, content);
    const seconds = (performance.now() - started) / 1000;
    if (result.kind === 'failed') deps.metrics.record(TRIGGER.trigger_name, 'failed', seconds, result.reason);
    else deps.metrics.record(TRIGGER.trigger_name, result.kind === 'denied' ? 'denied' : 'ok', seconds);
    return result;
  }

  return {
    async tokenMinted(org, content) {
      const hooks = webhooksTriggeredBy(org, TRIGGER);
      if (hooks.length === 0) return { kind: 'ok', claims: {} };
      // Concurrent, each bounded by its own timeout: the whole wait is the longest timeout at most.
      const results = await Promise.all(hooks.map((w) => timed(org, w, content)));
      const named = (w: Webhook, detail: string) => `webhook ${w.id} ("${w.name}"): ${detail}`;
      for (const [i, r] of results.entries()) {
        if (r.kind === 'denied') return { kind: 'denied', webhook: hooks[i] as Webhook, detail: named(hooks[i] as Webhook, r.detail) };
      }
      for (const [i, r] of results.entries()) {
        const w = hooks[i] as Webhook;
        if (r.kind === 'failed' && w.on_failure === 'block') return { kind: 'failed', webhook: w, detail: named(w, r.detail) };
      }
      // Later webhooks win a claim both set; Object.fromEntries defines properties, so "__proto__" stays a plain
      // key. Reserved names are dropped where every source of custom claims is admitted (admitCustomClaims).
      const merged = new Map<string, unknown>();
      for (const r of results) {
        if (r.kind !== 'claims') continue;
        for (const [k, v] of Object.entries(r.claims)) merged.set(k, v);
      }
      return { kind: 'ok', claims: Object.fromEntries(merged) };
    },
  };
}
