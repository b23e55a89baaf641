// The live event stream: the /events WebSocket with the administrator's token, filtered by type and person.
import { useEffect, useRef, useState } from 'preact/hooks';
import { session } from '../api.js';
import { ActionForm, Field, Section, text } from '../ui.js';

export interface Frame {
  offset: number;
  event: Record<string, unknown>;
}

const KEEP = 200;

/** The event's message name, from the metadata every event carries. */
export function nameOf(event: Record<string, unknown>): string {
  return String((event['event_metadata'] as { event_name?: string } | undefined)?.event_name ?? 'event');
}

/** The /events WebSocket with the administrator's token; `query`: types, from. */
export function openEvents(query: Record<string, string>): WebSocket | undefined {
  const s = session();
  if (!s) return undefined;
  const q = new URLSearchParams({ org_id: s.org, access_token: s.token, ...query });
  return new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/events?${q}`);
}

/** Whether the event names the person: the stream has no person filter, so the page looks through it. */
export const mentions = (frame: Frame, personId: string) => JSON.stringify(frame.event).includes(personId);

export function EventsPage() {
  const [filter, setFilter] = useState<{ types: string; person: string } | undefined>(undefined);
  const [frames, setFrames] = useState<Frame[]>([]);
  const [state, setState] = useState('not connected');
  const socket = useRef<WebSocket | undefined>(undefined);
  useEffect(() => {
    if (!filter) return;
    const ws = openEvents(filter.types === '' ? {} : { types: filter.types });
    if (!ws) return;
    socket.current = ws;
    setState('connecting');
    ws.onopen = () => setState('connected: new events appear below');
    ws.onclose = (e) => setState(`closed (${e.code}${e.reason ? `: ${e.reason}` : ''})`);
    ws.onmessage = (m) => {
      const frame = JSON.parse(String(m.data)) as Frame;
      if (filter.person !== '' && !mentions(frame, filter.person)) return;
      setFrames((f) => [frame, ...f].slice(0, KEEP));
    };
    return () => ws.close();
  }, [filter]);
  return (
    <>
      <Section title="Filter">
        <ActionForm label={filter ? 'Reconnect' : 'Connect'} class="inline" onSubmit={async (d) => {
          setFrames([]);
          setFilter({ types: text(d, 'types').replace(/\s+/g, ''), person: text(d, 'person') });
        }}>
          <Field label="Event types (comma-separated, empty: all)" name="types" placeholder="PersonCreated_v1" />
          <Field label="Person ID" name="person" />
        </ActionForm>
        <p role="status">Stream: {state}</p>
        {filter && (
          <button type="button" onClick={() => { socket.current?.close(); setFilter(undefined); }}>
            Disconnect
          </button>
        )}
      </Section>
      <Section title="Events">
        <ol class="events" aria-live="polite" data-testid="events">
          {frames.map((f) => (
            <li key={f.offset}>
              <strong>{nameOf(f.event)}</strong> <span>#{f.offset}</span>
              <pre>{JSON.stringify(f.event, null, 1)}</pre>
            </li>
          ))}
        </ol>
      </Section>
    </>
  );
}
