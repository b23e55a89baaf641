// POST /test-events: generated events appended to the caller's event log, streamed like any other.
import { randomUUID } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { LoggedEvent } from '../../events/log.js';
import { generateTestEvents } from '../../events/test-events.js';
import { route, type Route } from '../route.js';
import { executeOutcome, type HandlerDeps } from './deps.js';

const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const TestEventsBody = Type.Array(
  Type.Object(
    {
      event_name: Type.String({ minLength: 1, maxLength: 200, description: 'an event message name, e.g. PersonCreated_v1' }),
      count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'events to generate; default 1' })),
      duplicates: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, description: 'extra copies of each event with the same event_id; default 0' })),
      analytics_correlation_id: Type.Optional(Type.String({ pattern: UUID, description: 'a UUID set in analytics_metadata of events that have it' })),
    },
    { additionalProperties: false },
  ),
  { minItems: 1, maxItems: 100 },
);

const StreamedEvent = Type.Object({
  offset: Type.Integer({ description: 'the event offset in the organization event log, as the stream sends it' }),
  event: Type.Record(Type.String(), Type.Unknown(), { description: 'the event in proto3 JSON, is_test_event true' }),
});

export function eventRoutes(deps: HandlerDeps): Route[] {
  return [
    route<Static<typeof TestEventsBody>>({
      method: 'post',
      path: '/test-events',
      summary: 'Generate random, well-typed test events into the event log; each copy of an event keeps its event_id',
      tag: 'events',
      auth: 'key',
      body: TestEventsBody,
      success: { status: 201, result: Type.Array(StreamedEvent) },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const events = generateTestEvents(req.body, Math.random, randomUUID);
        const outcome = await executeOutcome<null>(deps, req, { kind: 'EmitTestEvents', events });
        // The chain links travel on the stream's frames, not in this answer.
        const result: LoggedEvent[] = outcome.events.map(({ offset, event }) => ({ offset, event }));
        return { status: 201, result };
      },
    }),
  ];
}
