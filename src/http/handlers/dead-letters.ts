// A webhook's dead letters: event deliveries that ran out of attempts, listed, queued for another round, or discarded.
import { Type } from '@sinclair/typebox';
import { badRequest, notFound, quote } from '../../errors.js';
import { requireWebhook } from '../../domain/webhooks.js';
import type { DeadLetter } from '../../wal/outbox-store.js';
import { PaginationMeta, PagingQuery, type PagingParams } from '../paging.js';
import { route, type Request, type Route } from '../route.js';
import type { HandlerDeps } from './deps.js';

export interface DeadLetterPort {
  deadLetterOffsets(org: string, webhook: string): number[];
  deadLetter(org: string, webhook: string, offset: number): DeadLetter | undefined;
  retry(org: string, webhook: string, offset: number): Promise<DeadLetter | undefined>;
  discard(org: string, webhook: string, offset: number): Promise<boolean>;
}

const DeadLetterRet = Type.Object({
  offset: Type.Integer({ description: "the event's offset in the organization's event log" }),
  event_name: Type.String(),
  event: Type.Record(Type.String(), Type.Unknown(), { description: 'the event in proto3 JSON, as it was delivered' }),
  attempts: Type.Integer({ description: 'attempts made, over every round' }),
  last_error: Type.String(),
  failed_at: Type.String({ description: 'when it last ran out of attempts, RFC 3339' }),
  state: Type.Union([Type.Literal('dead'), Type.Literal('retrying')], { description: 'retrying: queued for redelivery' }),
});

/** Paging keys sort as strings: fixed-width digits keep offsets in numeric order. */
const pagingKey = (offset: number) => String(offset).padStart(16, '0');

const view = (l: DeadLetter) => ({ offset: l.offset, event_name: l.event_name, event: l.event, attempts: l.attempts, last_error: l.last_error, failed_at: l.failed_at, state: l.state });

export function deadLetterRoutes(deps: HandlerDeps, outbox: DeadLetterPort): Route[] {
  /** The webhook first (404 naming it, as every webhook route does), then the offset. */
  const target = (req: Request<unknown, unknown>) => {
    const webhook = requireWebhook(req.org.state, req.params['webhook_id'] as string).id;
    const raw = req.params['offset'] ?? '';
    if (!/^[1-9]\d{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw badRequest(`offset: must be a positive integer, got ${quote(raw)}`);
    return { org: req.org.id, webhook, offset: Number(raw) };
  };
  const missing = (t: { webhook: string; offset: number }) => notFound(`webhook ${t.webhook} has no dead letter at offset ${t.offset}`);

  return [
    route<unknown, PagingParams>({
      method: 'get',
      path: '/organizations/webhooks/{webhook_id}/dead-letters',
      summary: "List a webhook's dead letters, oldest event first (offset or cursor paging)",
      tag: 'webhooks',
      auth: 'key',
      query: Type.Object(PagingQuery, { additionalProperties: false }),
      success: { status: 200, result: Type.Array(DeadLetterRet), meta: PaginationMeta },
      errors: [400, 401, 403, 404],
      handler: (req) => {
        const webhook = requireWebhook(req.org.state, req.params['webhook_id'] as string).id;
        const keys = outbox.deadLetterOffsets(req.org.id, webhook).map(pagingKey);
        const page = deps.pager.page(keys, req.query, { org: req.org.id, list: `webhooks/${webhook}/dead-letters` });
        const letters = page.keys.map((k) => outbox.deadLetter(req.org.id, webhook, Number(k))).filter((l): l is DeadLetter => l !== undefined);
        return { status: 200, result: letters.map(view), meta: page.meta };
      },
    }),
    route({
      method: 'post',
      path: '/organizations/webhooks/{webhook_id}/dead-letters/{offset}/retry',
      summary: 'Queue a dead letter for redelivery, ahead of new events; it leaves the list once delivered, or is dead again after another round of attempts',
      tag: 'webhooks',
      auth: 'key',
      success: { status: 202, result: DeadLetterRet },
      errors: [400, 401, 403, 404],
      handler: async (req) => {
        const t = target(req);
        const letter = await outbox.retry(t.org, t.webhook, t.offset);
        if (!letter) throw missing(t);
        return { status: 202, result: view(letter) };
      },
    }),
    route({
      method: 'delete',
      path: '/organizations/webhooks/{webhook_id}/dead-letters/{offset}',
      summary: 'Discard a dead letter',
      tag: 'webhooks',
      auth: 'key',
      success: { status: 204 },
      errors: [400, 401, 403, 404],
      handler: async (req) => {
        const t = target(req);
        if (!(await outbox.discard(t.org, t.webhook, t.offset))) throw missing(t);
        return { status: 204 };
      },
    }),
  ];
}
