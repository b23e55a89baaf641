// POST /gate/events: batches of the three Gate events, as a Gate built them, appended to the caller's event
// log (WAL, log, stream, webhooks) with event_id deduplicated over a bounded window, since a Gate resends
// a batch whose answer it did not get.
import { Type, type Static } from '@sinclair/typebox';
import type { GateEventInput } from '../../domain/gate-events.js';
import { badRequest } from '../../errors.js';
import { validateEvent } from '../../events/validate.js';
import { parseRfc3339 } from '../../lib/time-text.js';
import { route, type Route } from '../route.js';
import { executeOutcome, type HandlerDeps } from './deps.js';

export const GATE_EVENT_NAMES: readonly string[] = ['GateServerStarted_v1', 'GateRequestHandled_v1', 'GateHeartbeat_v1'];
export const MAX_GATE_BATCH = 1000;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

const GateEventsBody = Type.Array(Type.Record(Type.String(), Type.Unknown(), { description: 'a Gate event in proto3 JSON, event_metadata included' }), {
  minItems: 1,
  maxItems: MAX_GATE_BATCH,
});

const Accepted = Type.Object({
  accepted: Type.Integer({ description: 'events appended to the event log' }),
  duplicates: Type.Integer({ description: 'events whose event_id was already seen (or repeated in the batch), not appended again' }),
});

/** event_ids seen lately, across organizations, first in first out. */
export interface DedupWindow {
  /** true when the id was not in the window; it is then held */
  claim(org: string, eventId: string): boolean;
  release(org: string, eventId: string): void;
}

export function createDedupWindow(limit = 200_000): DedupWindow {
  const seen = new Set<string>();
  return {
    claim(org, eventId) {
      const key = `${org}\n${eventId.toLowerCase()}`;
      if (seen.has(key)) return false;
      seen.add(key);
      if (seen.size > limit) seen.delete(seen.values().next().value as string);
      return true;
    },
    release(org, eventId) {
      seen.delete(`${org}\n${eventId.toLowerCase()}`);
    },
  };
}

/** The event as an input for the actor, or a 400 naming the item and the problem. */
function gateEvent(event: Record<string, unknown>, i: number): GateEventInput {
  const meta = event['event_metadata'];
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) throw badRequest(`body[${i}].event_metadata: missing`);
  const m = meta as Record<string, unknown>;
  const name = m['event_name'];
  if (typeof name !== 'string' || !GATE_EVENT_NAMES.includes(name)) {
    throw badRequest(`body[${i}].event_metadata.event_name: ${JSON.stringify(name)} is not a Gate event (${GATE_EVENT_NAMES.join(', ')})`);
  }
  if (m['source'] !== 'Gate') throw badRequest(`body[${i}].event_metadata.source: must be Gate`);
  if (m['is_test_event'] === true) throw badRequest(`body[${i}].event_metadata.is_test_event: Gate events are not test events (use POST /test-events)`);
  const eventId = m['event_id'];
  if (typeof eventId !== 'string' || !UUID.test(eventId)) throw badRequest(`body[${i}].event_metadata.event_id: must be a UUID`);
  const timestamp = m['timestamp'];
  if (typeof timestamp !== 'string' || parseRfc3339(timestamp) === undefined) throw badRequest(`body[${i}].event_metadata.timestamp: must be an RFC 3339 time`);
  const problem = validateEvent(name, event);
  if (problem !== null) throw badRequest(`body[${i}]: ${problem}`);
  const { event_metadata: _, ...body } = event;
  return { name, body, event_id: eventId, timestamp };
}

export function gateEventRoutes(deps: HandlerDeps, window: DedupWindow = createDedupWindow()): Route[] {
  return [
    route<Static<typeof GateEventsBody>>({
      method: 'post',
      path: '/gate/events',
      summary: 'Events a Gate reports (GateServerStarted_v1, GateRequestHandled_v1, GateHeartbeat_v1), appended to the event log once per event_id',
      tag: 'events',
      auth: 'key',
      body: GateEventsBody,
      success: { status: 202, result: Accepted },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        // Every item is checked before any is claimed: a bad batch changes nothing.
        const events = req.body.map(gateEvent);
        const org = req.org.id;
        const fresh = events.filter((e) => window.claim(org, e.event_id));
        const duplicates = events.length - fresh.length;
        if (fresh.length > 0) {
          try {
            await executeOutcome<null>(deps, req, { kind: 'EmitGateEvents', events: fresh });
          } catch (error) {
            // Not appended: a resend must be taken. A 408 came after the commit, so those ids stay claimed.
            if ((error as { status?: number }).status !== 408) for (const e of fresh) window.release(org, e.event_id);
            throw error;
          }
        }
        return { status: 202, result: { accepted: fresh.length, duplicates } };
      },
    }),
  ];
}
