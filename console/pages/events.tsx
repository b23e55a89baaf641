// The live event stream: the /events WebSocket with the administrator's token, filtered by type and person.
import { useEffect, useRef, useState } from 'preact/hooks';
import { session } from '../api.js';
import { ActionForm, Field, Section, text } from '../ui.js';

interface Frame {
  offset: number;
  event: Record<string, unknown>;
}

const KEEP = 200;

/** The event's message name, from the metadata every event carries. */
function nameOf(event: Record<string, unknown>): string {
  return String((event['event_metadata'] as { event_name?: string } | undefined)?.event_name ?? 'event');
}

export function EventsPage() {
  const [filter, setFilter] = useState<{ types: string; person: string } | undefined>(undefined);
  const [frames, setFrames] = useState<Frame[]>([]);
  const [state, setState] = useState('not connected');
  const socket = useRef<WebSocket | undefined>(undefined);
  useEffect(() => {
    const s = session();
    if (!filter || !s) return;
    const q = new URLSearchParams({ org_id: s.org, access_token: s.token });
    if (filter.types !== '') q.set('types', filter.types);
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/events?${q}`);
    socket.current = ws;
    setState('connecting');
    ws.onopen = () => setState('connected: new events appear below');
    ws.onclose = (e) => setState(`closed (${e.code}${e.reason ? `: ${e.reason}` : ''})`);
    ws.onmessage = (m) => {
      const frame = JSON.parse(String(m.data)) as Frame;
      if (filter.person !== '' && !JSON.stringify(frame.event).includes(filter.person)) return;
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
