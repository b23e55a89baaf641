// Persons: search by handle, cursor paging, creation; one person's handles, groups, roles, attributes,
// credentials, sessions (ended by a click), recent events, and the revocation of a token they hold.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ActionForm, Field, Problem, Section, text, useLoad } from '../ui.js';
import { mentions, nameOf, openEvents, type Frame } from './events.js';

interface Handle {
  type: string;
  value: string;
}
interface PersonItem {
  person_id: string;
  handles?: Handle[];
}
interface Person {
  person_id: string;
  active: boolean;
  region: string;
  handles: Handle[];
  groups: string[];
}

interface Session {
  session_id: string;
  methods: string[];
  clients: string[];
  created_at: string;
  last_used_at: string;
  ip_address: string;
  user_agent: string;
}

const RECENT = 20;
const HANDLE_TYPES = ['email_address', 'phone_number', 'username'];
const handleText = (h: Handle) => `${h.type}: ${h.value}`;

function HandleType({ name }: { name: string }) {
  return (
    <div class="field">
      <label for={`f-${name}`}>Handle type</label>
      <select id={`f-${name}`} name={name}>
        {HANDLE_TYPES.map((t) => (
          <option value={t}>{t}</option>
        ))}
      </select>
    </div>
  );
}

export function PersonsPage({ go }: { go: (hash: string) => void }) {
  // The cursors walked so far: the last one is the page shown; going back drops it.
  const [cursors, setCursors] = useState<string[]>([]);
  const [search, setSearch] = useState<string | undefined>(undefined);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => {
    const q = new URLSearchParams({ paging: 'cursor', limit: '20', fields: 'handles' });
    if (cursor !== undefined) q.set('cursor', cursor);
    if (search !== undefined) q.set('handle', search);
    return api<PersonItem[]>('GET', `/persons?${q}`);
  }, [cursor, search]);
  const next = page.data?.meta?.cursor_pagination?.next_cursor;
  return (
    <>
      <Section title="Find a person">
        <ActionForm
          label="Search"
          class="inline"
          onSubmit={async (d) => {
            const value = text(d, 'search_value');
            setCursors([]);
            setSearch(value === '' ? undefined : `${text(d, 'search_type')}:${value}`);
          }}
        >
          <HandleType name="search_type" />
          <Field label="Handle" name="search_value" placeholder="ada@example.com" />
        </ActionForm>
        {search !== undefined && (
          <p>
            Showing the person with {search}.{' '}
            <button type="button" class="link" onClick={() => setSearch(undefined)}>
              Show everyone
            </button>
          </p>
        )}
      </Section>
      <Section title="Persons">
        <Problem message={page.error} />
        <table>
          <thead>
            <tr>
              <th scope="col">Person</th>
              <th scope="col">Handles</th>
            </tr>
          </thead>
          <tbody>
            {(page.data?.result ?? []).map((p) => (
              <tr key={p.person_id}>
                <td>
                  <a href={`#/persons/${encodeURIComponent(p.person_id)}`}>{p.person_id}</a>
                </td>
                <td>{(p.handles ?? []).map(handleText).join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {page.data && page.data.result.length === 0 && <p>No persons.</p>}
        <div class="pager">
          <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
            Previous page
          </button>
          <button type="button" disabled={next === undefined} onClick={() => next && setCursors([...cursors, next])}>
            Next page
          </button>
        </div>
      </Section>
      <Section title="Create a person">
        <ActionForm
          label="Create person"
          onSubmit={async (d) => {
            const { result } = await api<Person>('POST', '/persons', { handles: [{ type: text(d, 'new_type'), value: text(d, 'new_value') }] });
            go(`#/persons/${encodeURIComponent(result.person_id)}`);
          }}
        >
          <HandleType name="new_type" />
          <Field label="Handle" name="new_value" required placeholder="grace@example.com" />
        </ActionForm>
      </Section>
    </>
  );
}

export function PersonPage({ id }: { id: string }) {
  const path = `/persons/${encodeURIComponent(id)}`;
  const person = useLoad(() => api<Person>('GET', path), [id]);
  const roles = useLoad(() => api<string[]>('GET', `${path}/roles`), [id]);
  const permissions = useLoad(() => api<string[]>('GET', `${path}/permissions`), [id]);
  const attributes = useLoad(() => api<Record<string, unknown>>('GET', `${path}/attributes`), [id]);
  const credentials = useLoad(() => api<Array<Record<string, unknown>>>('GET', `${path}/credentials`), [id]);
  const consents = useLoad(() => api<{ consents: Array<{ consent_level: string; created_at: string }> }>('GET', `${path}/consent/gdpr`), [id]);
  const sessions = useLoad(() => api<Session[]>('GET', `${path}/sessions`), [id]);
  const groups = useLoad(() => api<string[]>('GET', '/groups'), []);
  const allRoles = useLoad(() => api<string[]>('GET', '/rbac/roles'), []);
  const p = person.data?.result;
  const reload = () => {
    person.reload();
    roles.reload();
    permissions.reload();
  };
  return (
    <>
      <Problem message={person.error} />
      {p && (
        <dl class="facts">
          <dt>ID</dt>
          <dd>{p.person_id}</dd>
          <dt>Active</dt>
          <dd>{p.active ? 'yes' : 'no'}</dd>
          <dt>Region</dt>
          <dd>{p.region}</dd>
        </dl>
      )}
      {p && (
        <ActionForm label={p.active ? 'Deactivate' : 'Activate'} confirm={p.active ? 'Deactivate this person? Their tokens stop working.' : undefined} onSubmit={async () => {
          await api('PATCH', path, { active: !p.active });
          reload();
        }} />
      )}
      <Section title="Handles">
        <ul>{(p?.handles ?? []).map((h) => <li>{handleText(h)}</li>)}</ul>
      </Section>
      <Section title="Groups">
        <ul data-testid="person-groups">{(p?.groups ?? []).map((g) => <li>{g}</li>)}</ul>
        {p?.groups.length === 0 && <p>In no group.</p>}
        <ActionForm label="Add to group" class="inline" onSubmit={async (d) => {
          await api('PUT', `${path}/groups`, { groups: [...(p?.groups ?? []), text(d, 'group')] });
          reload();
        }}>
          <div class="field">
            <label for="f-group">Group</label>
            <select id="f-group" name="group" required>
              {(groups.data?.result ?? []).filter((g) => !p?.groups.includes(g)).map((g) => <option value={g}>{g}</option>)}
            </select>
          </div>
        </ActionForm>
      </Section>
      <Section title="Roles and permissions">
        <p>Roles: {(roles.data?.result ?? []).join(', ') || 'none'}</p>
        <p>Permissions: {(permissions.data?.result ?? []).join(', ') || 'none'}</p>
        <ActionForm label="Give role" class="inline" onSubmit={async (d) => {
          await api('PUT', `${path}/roles`, { roles: [...(roles.data?.result ?? []), text(d, 'role')] });
          reload();
        }}>
          <div class="field">
            <label for="f-role">Role</label>
            <select id="f-role" name="role" required>
              {(allRoles.data?.result ?? []).filter((r) => !roles.data?.result.includes(r)).map((r) => <option value={r}>{r}</option>)}
            </select>
          </div>
        </ActionForm>
        <ActionForm label="Make administrator" onSubmit={async () => {
          await api('POST', '/console/administrators', { person_id: id });
          reload();
        }} />
      </Section>
      <Section title="Attributes">
        <Problem message={attributes.error} />
        <pre>{JSON.stringify(attributes.data?.result ?? {}, null, 2)}</pre>
      </Section>
      <Section title="Consents">
        <Problem message={consents.error} />
        <ul>{(consents.data?.result.consents ?? []).map((c) => <li>{c.consent_level} (since {c.created_at})</li>)}</ul>
        {consents.data?.result.consents.length === 0 && <p>No consents.</p>}
      </Section>
      <Section title="Credentials">
        <Problem message={credentials.error} />
        <ul>{(credentials.data?.result ?? []).map((c) => <li>{String(c['type'] ?? 'credential')} {String(c['created'] ?? '')}</li>)}</ul>
        {credentials.data?.result.length === 0 && <p>No credentials.</p>}
      </Section>
      <Section title="Sessions">
        <Problem message={sessions.error} />
        <table data-testid="sessions">
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Methods</th>
              <th scope="col">Clients</th>
              <th scope="col">Last used</th>
              <th scope="col">From</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(sessions.data?.result ?? []).map((s) => (
              <tr key={s.session_id}>
                <td>{s.session_id}</td>
                <td>{s.methods.join(', ')}</td>
                <td>{s.clients.join(', ')}</td>
                <td>{s.last_used_at}</td>
                <td>{s.ip_address} {s.user_agent}</td>
                <td>
                  <ActionForm label={`End session ${s.session_id}`} confirm="End this session? Its tokens stop working." onSubmit={async () => {
                    await api('DELETE', `${path}/sessions/${encodeURIComponent(s.session_id)}`);
                    sessions.reload();
                  }} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {sessions.data?.result.length === 0 && <p>No open sessions.</p>}
      </Section>
      <RecentEvents id={id} />
      <Section title="Revoke a token">
        <p>An identity token of this person (from a sign-in or POST /persons/{'{id}'}/mint-token): /token/validate finds it invalid from then on, in every region. Ending a session above stops the OAuth tokens issued in it.</p>
        <ActionForm label="Revoke token" onSubmit={async (d) => {
          await api('POST', '/token/revoke', { token: text(d, 'token') });
        }}>
          <Field label="Identity token" name="token" required />
        </ActionForm>
      </Section>
    </>
  );
}

/** The stored events that name the person, newest first, then new ones as they happen. */
function RecentEvents({ id }: { id: string }) {
  const [frames, setFrames] = useState<Frame[]>([]);
  useEffect(() => {
    setFrames([]);
    const ws = openEvents({ from: '1' });
    if (!ws) return;
    ws.onmessage = (m) => {
      const frame = JSON.parse(String(m.data)) as Frame;
      if (mentions(frame, id)) setFrames((f) => [frame, ...f].slice(0, RECENT));
    };
    return () => ws.close();
  }, [id]);
  return (
    <Section title="Recent events">
      <ol class="events" data-testid="person-events">
        {frames.map((f) => (
          <li key={f.offset}>
            <strong>{nameOf(f.event)}</strong> <span>#{f.offset} {String((f.event['event_metadata'] as { timestamp?: string } | undefined)?.timestamp ?? '')}</span>
          </li>
        ))}
      </ol>
      {frames.length === 0 && <p>No events name this person.</p>}
    </Section>
  );
}
