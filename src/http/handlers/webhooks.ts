// Webhooks and their triggers, and the key set that verifies webhook calls.
import { Type, type Static } from '@sinclair/typebox';
import type { WebhookInput } from '../../domain/commands.js';
import type { WebhookTrigger } from '../../domain/state.js';
import { webhookView, type WebhookRet as WebhookView } from '../../domain/views.js';
import { requireWebhook } from '../../domain/webhooks.js';
import { route, type Route } from '../route.js';
import { execute, type HandlerDeps } from './deps.js';

const Settings = {
  name: Type.String({ minLength: 1, maxLength: 256 }),
  target_url: Type.String({ minLength: 1, maxLength: 2048, description: 'https URL with a host name, no query or fragment' }),
  description: Type.String({ maxLength: 1024 }),
  custom_headers: Type.Record(Type.String(), Type.Array(Type.String()), { description: 'header name → values, added to every call' }),
  timeout: Type.String({ maxLength: 64, description: 'duration such as 500ms, 2s, 1m; at most 20s; 0s means 2s for sync hooks, 10s for events' }),
  on_failure: Type.Union([Type.Literal('block'), Type.Literal('continue')], { description: 'what a failed sync hook call does to the sign-in; default block' }),
};
const CreateBody = Type.Object(
  {
    name: Settings.name,
    target_url: Settings.target_url,
    description: Type.Optional(Settings.description),
    custom_headers: Type.Optional(Settings.custom_headers),
    timeout: Type.Optional(Settings.timeout),
    on_failure: Type.Optional(Settings.on_failure),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Partial(Type.Object(Settings), { additionalProperties: false });
const WebhookRet = Type.Object({ id: Type.String(), ...Settings });

const Trigger = Type.Object(
  {
    trigger_type: Type.Union([Type.Literal('event'), Type.Literal('sync_hook')]),
    trigger_name: Type.String({ minLength: 1, maxLength: 128, description: 'token_minted for sync_hook; an event message such as PersonCreated_v1 for event' }),
  },
  { additionalProperties: false },
);
const Jwks = Type.Object({ keys: Type.Array(Type.Object({ kid: Type.String(), alg: Type.String(), use: Type.String() }, { additionalProperties: true })) });

export interface WebhookRouteDeps {
  allowInsecure: boolean;
  verificationJwks(): unknown;
}

export function webhookRoutes(deps: HandlerDeps, hooks: WebhookRouteDeps): Route[] {
  const id = (req: { params: Record<string, string> }) => req.params['webhook_id'] as string;
  return [
    route<Static<typeof CreateBody>>({
      method: 'post',
      path: '/organizations/webhooks',
      summary: 'Register a webhook',
      tag: 'webhooks',
      auth: 'key',
      body: CreateBody,
      success: { status: 201, result: WebhookRet },
      errors: [400, 401, 403, 404, 408, 409],
      handler: async (req) => ({
        status: 201,
        result: await execute<WebhookView>(deps, req, { kind: 'CreateWebhook', input: req.body as WebhookInput, allow_insecure: hooks.allowInsecure }),
      }),
    }),
    route({
      method: 'get',
      path: '/organizations/webhooks',
      summary: "List the organization's webhooks",
      tag: 'webhooks',
      auth: 'key',
      success: { status: 200, result: Type.Array(WebhookRet) },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: [...req.org.state.webhooks.values()].map(webhookView) }),
    }),
    route({
      method: 'get',
      path: '/organizations/webhooks/verification-jwks',
      summary: 'The key set that verifies the signed JWT body of webhook calls (chosen by kid)',
      tag: 'webhooks',
      auth: 'org',
      success: { status: 200, document: Jwks },
      errors: [400, 404],
      handler: () => ({ status: 200, document: hooks.verificationJwks() }),
    }),
    route({
      method: 'get',
      path: '/organizations/webhooks/{webhook_id}',
      summary: 'Get a webhook',
      tag: 'webhooks',
      auth: 'key',
      success: { status: 200, result: WebhookRet },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: webhookView(requireWebhook(req.org.state, id(req))) }),
    }),
    route<Static<typeof PatchBody>>({
      method: 'patch',
      path: '/organizations/webhooks/{webhook_id}',
      summary: 'Change a webhook (custom_headers are replaced whole)',
      tag: 'webhooks',
      auth: 'key',
      body: PatchBody,
      success: { status: 200, result: WebhookRet },
      errors: [400, 401, 403, 404, 408, 409],
      handler: async (req) => ({
        status: 200,
        result: await execute<WebhookView>(deps, req, { kind: 'UpdateWebhook', webhook_id: id(req), input: req.body as Partial<WebhookInput>, allow_insecure: hooks.allowInsecure }),
      }),
    }),
    route({
      method: 'delete',
      path: '/organizations/webhooks/{webhook_id}',
      summary: 'Delete a webhook and its triggers',
      tag: 'webhooks',
      auth: 'key',
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps, req, { kind: 'DeleteWebhook', webhook_id: id(req) });
        return { status: 204 };
      },
    }),
    route<WebhookTrigger>({
      method: 'post',
      path: '/organizations/webhooks/{webhook_id}/triggers',
      summary: 'Attach a trigger: sync_hook token_minted, or event with an event message name',
      tag: 'webhooks',
      auth: 'key',
      body: Trigger,
      success: { status: 201 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps, req, { kind: 'AddWebhookTrigger', webhook_id: id(req), trigger: req.body });
        return { status: 201 };
      },
    }),
    route({
      method: 'get',
      path: '/organizations/webhooks/{webhook_id}/triggers',
      summary: "List a webhook's triggers",
      tag: 'webhooks',
      auth: 'key',
      success: { status: 200, result: Type.Array(Trigger) },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: requireWebhook(req.org.state, id(req)).triggers.map((t) => ({ trigger_type: t.trigger_type, trigger_name: t.trigger_name })) }),
    }),
    route<unknown, WebhookTrigger>({
      method: 'delete',
      path: '/organizations/webhooks/{webhook_id}/triggers',
      summary: 'Detach a trigger (?trigger_type=&trigger_name=)',
      tag: 'webhooks',
      auth: 'key',
      query: Trigger,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps, req, { kind: 'RemoveWebhookTrigger', webhook_id: id(req), trigger: req.query });
        return { status: 204 };
      },
    }),
  ];
}
