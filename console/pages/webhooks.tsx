// Event webhooks: the list, creation with the events they carry, and each one's dead letters with retry.
import { api } from '../api.js';
import { ActionForm, Field, Problem, Section, text, useLoad } from '../ui.js';

interface Webhook {
  id: string;
  name: string;
  target_url: string;
}
interface DeadLetter {
  offset: number;
  event_name: string;
  attempts: number;
  last_error: string;
  failed_at: string;
  state: string;
}

export function WebhooksPage() {
  const hooks = useLoad(() => api<Webhook[]>('GET', '/organizations/webhooks'), []);
  return (
    <>
      <Section title="Webhooks">
        <Problem message={hooks.error} />
        <ul>
          {(hooks.data?.result ?? []).map((w) => (
            <li key={w.id}>
              <a href={`#/webhooks/${encodeURIComponent(w.id)}`}>{w.name}</a> → {w.target_url}
            </li>
          ))}
        </ul>
        {hooks.data?.result.length === 0 && <p>No webhooks.</p>}
      </Section>
      <Section title="Create a webhook">
        <ActionForm label="Create webhook" onSubmit={async (d) => {
          const { result } = await api<Webhook>('POST', '/organizations/webhooks', { name: text(d, 'name'), target_url: text(d, 'target_url') });
          for (const name of text(d, 'events').split(/[\s,]+/).filter(Boolean)) {
            await api('POST', `/organizations/webhooks/${encodeURIComponent(result.id)}/triggers`, { trigger_type: 'event', trigger_name: name });
          }
          hooks.reload();
        }}>
          <Field label="Name" name="name" required />
          <Field label="Target URL" name="target_url" type="url" required placeholder="https://hooks.example/identity" />
          <Field label="Events (comma-separated)" name="events" placeholder="PersonCreated_v1" />
        </ActionForm>
      </Section>
    </>
  );
}

export function WebhookPage({ id }: { id: string }) {
  const path = `/organizations/webhooks/${encodeURIComponent(id)}`;
  const hook = useLoad(() => api<Webhook>('GET', path), [id]);
  const triggers = useLoad(() => api<Array<{ trigger_type: string; trigger_name: string }>>('GET', `${path}/triggers`), [id]);
  const dead = useLoad(() => api<DeadLetter[]>('GET', `${path}/dead-letters?limit=100`), [id]);
  return (
    <>
      <Problem message={hook.error} />
      <p>{hook.data && `${hook.data.result.name} → ${hook.data.result.target_url}`}</p>
      <Section title="Triggers">
        <ul>{(triggers.data?.result ?? []).map((t) => <li>{t.trigger_type}: {t.trigger_name}</li>)}</ul>
      </Section>
      <Section title="Dead letters">
        <Problem message={dead.error} />
        <table>
          <thead>
            <tr>
              <th scope="col">Offset</th>
              <th scope="col">Event</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last error</th>
              <th scope="col">State</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(dead.data?.result ?? []).map((l) => (
              <tr key={l.offset}>
                <td>{l.offset}</td>
                <td>{l.event_name}</td>
                <td>{l.attempts}</td>
                <td>{l.last_error}</td>
                <td>{l.state}</td>
                <td>
                  <ActionForm label={`Retry ${l.offset}`} onSubmit={async () => {
                    await api('POST', `${path}/dead-letters/${l.offset}/retry`);
                    dead.reload();
                  }} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {dead.data?.result.length === 0 && <p>No dead letters.</p>}
      </Section>
    </>
  );
}
