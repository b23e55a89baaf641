// Groups: the list, creation, and one group's members.
import { api } from '../api.js';
import { ActionForm, Field, Problem, Section, text, useLoad } from '../ui.js';

export function GroupsPage() {
  const groups = useLoad(() => api<string[]>('GET', '/groups'), []);
  return (
    <>
      <Section title="Groups">
        <Problem message={groups.error} />
        <ul>
          {(groups.data?.result ?? []).map((g) => (
            <li key={g}>
              <a href={`#/groups/${encodeURIComponent(g)}`}>{g}</a>
            </li>
          ))}
        </ul>
        {groups.data?.result.length === 0 && <p>No groups.</p>}
      </Section>
      <Section title="Create a group">
        <ActionForm label="Create group" onSubmit={async (d) => {
          await api('POST', '/groups', { name: text(d, 'name'), description: text(d, 'description') });
          groups.reload();
        }}>
          <Field label="Name" name="name" required placeholder="staff" />
          <Field label="Description" name="description" />
        </ActionForm>
      </Section>
    </>
  );
}

export function GroupPage({ name }: { name: string }) {
  const path = `/groups/${encodeURIComponent(name)}`;
  const group = useLoad(() => api<{ description?: string }>('GET', path), [name]);
  const members = useLoad(() => api<string[]>('GET', `${path}/persons?limit=100`), [name]);
  return (
    <>
      <Problem message={group.error ?? members.error} />
      <p>{group.data?.result.description}</p>
      <Section title="Members">
        <ul>
          {(members.data?.result ?? []).map((id) => (
            <li key={id}>
              <a href={`#/persons/${encodeURIComponent(id)}`}>{id}</a>
            </li>
          ))}
        </ul>
        {members.data?.result.length === 0 && <p>No members.</p>}
        <ActionForm label="Add person" class="inline" onSubmit={async (d) => {
          await api('POST', `${path}/persons`, { person_ids: [text(d, 'person_id')] });
          members.reload();
        }}>
          <Field label="Person ID" name="person_id" required />
        </ActionForm>
      </Section>
    </>
  );
}
