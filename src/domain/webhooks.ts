// Decisions about webhooks and their triggers.
import { badRequest, conflict, notFound, quote } from '../errors.js';
import type { WebhookInput } from './commands.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import type { OrgState, Webhook, WebhookSettings, WebhookTrigger } from './state.js';
import { webhookView, type WebhookRet } from './views.js';
import { MAX_TRIGGERS, MAX_WEBHOOKS, checkCustomHeaders, checkTargetUrl, checkTimeout, checkTrigger } from './webhook-rules.js';

export function requireWebhook(state: OrgState, id: string): Webhook {
  const w = state.webhooks.get(id);
  if (!w) throw notFound(`webhook ${quote(id)} not found`);
  return w;
}

/** Settings after applying input to base, each checked; target_url must not be another webhook's. */
function settings(state: OrgState, base: WebhookSettings, input: Partial<WebhookInput>, allowInsecure: boolean, selfId?: string): WebhookSettings {
  const next: WebhookSettings = { ...base };
  if (input.target_url !== undefined) {
    const canonical = checkTargetUrl(input.target_url, allowInsecure);
    for (const other of state.webhooks.values()) {
      if (other.id !== selfId && new URL(other.target_url).href === canonical) {
        throw conflict(`target_url: webhook ${other.id} already has the target URL ${quote(input.target_url, 200)}`);
      }
    }
    next.target_url = input.target_url;
  }
  if (input.name !== undefined) next.name = input.name;
  if (input.description !== undefined) next.description = input.description;
  if (input.custom_headers !== undefined) next.custom_headers = checkCustomHeaders(input.custom_headers);
  if (input.timeout !== undefined) {
    checkTimeout(input.timeout);
    next.timeout = input.timeout;
  }
  if (input.on_failure !== undefined) next.on_failure = input.on_failure;
  return next;
}

export function createWebhook(state: OrgState, input: WebhookInput, allowInsecure: boolean, ctx: DecideContext): Decision<WebhookRet> {
  if (state.webhooks.size >= MAX_WEBHOOKS) throw badRequest(`an organization may have at most ${MAX_WEBHOOKS} webhooks`);
  const blank: WebhookSettings = { name: '', description: '', target_url: '', custom_headers: {}, timeout: '0s', on_failure: 'block' };
  const webhook: Webhook = { id: ctx.uuid(), created: new Date(ctx.nowMs).toISOString(), triggers: [], ...settings(state, blank, input, allowInsecure) };
  return decision(webhookView(webhook), [{ t: 'WebhookCreated', webhook }]);
}

export function updateWebhook(state: OrgState, id: string, input: Partial<WebhookInput>, allowInsecure: boolean): Decision<WebhookRet> {
  const current = requireWebhook(state, id);
  const { id: _id, created: _created, triggers, ...base } = current;
  const next = settings(state, base, input, allowInsecure, id);
  const view = webhookView({ ...current, ...next });
  if (JSON.stringify(next) === JSON.stringify(base)) return decision(view);
  return decision(view, [{ t: 'WebhookUpdated', id, settings: next }]);
}

export function deleteWebhook(state: OrgState, id: string): Decision<null> {
  requireWebhook(state, id);
  return decision(null, [{ t: 'WebhookDeleted', id }]);
}

const sameTrigger = (a: WebhookTrigger, b: WebhookTrigger) => a.trigger_type === b.trigger_type && a.trigger_name === b.trigger_name;

/** Attaching a trigger the webhook already has changes nothing. */
export function addTrigger(state: OrgState, id: string, trigger: WebhookTrigger, ctx: Pick<DecideContext, 'isEventMessageName'>): Decision<null> {
  const webhook = requireWebhook(state, id);
  checkTrigger(trigger, ctx.isEventMessageName);
  if (webhook.triggers.some((t) => sameTrigger(t, trigger))) return decision(null);
  if (webhook.triggers.length >= MAX_TRIGGERS) throw badRequest(`a webhook may have at most ${MAX_TRIGGERS} triggers`);
  const added = { trigger_type: trigger.trigger_type, trigger_name: trigger.trigger_name };
  // state.event_offset already counts the events of commands decided before this one in the same batch.
  if (added.trigger_type === 'event') return decision(null, [{ t: 'WebhookTriggerAdded', id, trigger: added, from_event: state.event_offset + 1 }]);
  return decision(null, [{ t: 'WebhookTriggerAdded', id, trigger: added }]);
}

export function removeTrigger(state: OrgState, id: string, trigger: WebhookTrigger): Decision<null> {
  const webhook = requireWebhook(state, id);
  if (!webhook.triggers.some((t) => sameTrigger(t, trigger))) {
    throw notFound(`webhook ${id} has no ${trigger.trigger_type} trigger ${trigger.trigger_name}`);
  }
  return decision(null, [{ t: 'WebhookTriggerRemoved', id, trigger }]);
}

/** The webhooks with a given trigger, in creation order. */
export function webhooksTriggeredBy(state: OrgState, trigger: WebhookTrigger): Webhook[] {
  const out: Webhook[] = [];
  for (const w of state.webhooks.values()) if (w.triggers.some((t) => sameTrigger(t, trigger))) out.push(w);
  return out;
}
