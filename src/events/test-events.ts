// Generated test events: random but well-typed content of any event message, with copies that share an event_id.
import type { TestEventInput } from '../domain/test-events.js';
import { badRequest } from '../errors.js';
import { eventByMessageName } from './catalog.js';
import { randomEvent, type Rng } from './random.js';

export interface TestEventRequest {
  event_name: string;
  /** events to generate; default 1 */
  count?: number;
  /** extra copies of each generated event, with the same event_id; default 0 */
  duplicates?: number;
  /** set in analytics_metadata of events that have it */
  analytics_correlation_id?: string;
}

/** One request generates at most this many events, copies included. */
export const MAX_TEST_EVENTS = 10_000;

/** The events to append, originals each followed by their copies; a 400 naming the item for an unknown event. */
export function generateTestEvents(items: readonly TestEventRequest[], rng: Rng, uuid: () => string): TestEventInput[] {
  let total = 0;
  items.forEach((item, i) => {
    if (eventByMessageName(item.event_name) === undefined) {
      throw badRequest(`body[${i}].event_name: unknown event "${item.event_name.slice(0, 100)}"`);
    }
    total += (item.count ?? 1) * (1 + (item.duplicates ?? 0));
  });
  if (total > MAX_TEST_EVENTS) throw badRequest(`body: asks for ${total} events, copies included; at most ${MAX_TEST_EVENTS} per request`);

  const out: TestEventInput[] = [];
  for (const item of items) {
    for (let n = 0; n < (item.count ?? 1); n++) {
      // randomEvent fills event_metadata with what it is given; the actor stamps the real one at commit.
      const { event_metadata: _, ...body } = randomEvent(item.event_name, {}, rng);
      const analytics = body['analytics_metadata'];
      if (item.analytics_correlation_id !== undefined && analytics !== undefined && typeof analytics === 'object' && !Array.isArray(analytics)) {
        body['analytics_metadata'] = { ...analytics, analytics_correlation_id: item.analytics_correlation_id };
      }
      const event: TestEventInput = { name: item.event_name, body, event_id: uuid() };
      for (let copy = 0; copy <= (item.duplicates ?? 0); copy++) out.push(event);
    }
  }
  return out;
}
