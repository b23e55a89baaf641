// Checks that a JSON object is a well-formed event of the named message, for events about to be emitted.
import { eventByMessageName } from './catalog.js';
import { EventShapeError, jsonToWire } from './json-to-wire.js';

/** null when `json` is a valid JSON form of the event message; otherwise a message naming the offending field. */
export function validateEvent(messageName: string, json: unknown): string | null {
  if (eventByMessageName(messageName) === undefined) return `${messageName}: not an event message`;
  try {
    jsonToWire(messageName, json);
  } catch (error) {
    if (error instanceof EventShapeError) return error.message;
    throw error;
  }
  // jsonToWire has established that json and any event_metadata in it are objects.
  const metadata = (json as Record<string, unknown>)['event_metadata'] as Record<string, unknown> | null | undefined;
  if (metadata == null) return `${messageName}.event_metadata: missing`;
  const eventName = metadata['event_name'];
  if (eventName != null && eventName !== messageName) {
    return `${messageName}.event_metadata.event_name: ${JSON.stringify(eventName)} does not name this message`;
  }
  return null;
}
