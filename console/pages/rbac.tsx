// Roles and permissions: both lists, creating either, and which permissions a role holds.
import { api } from '../api.js';
import { ActionForm, Field, Problem, Section, text, useLoad } from '../ui.js';

interface Role {
  name: string;
  description: string;
  permissions: string[];
}

export function RolesPage() {
  const permissions = useLoad(() => api<string[]>('GET', '/rbac/permissions?limit=100'), []);
  const roles = useLoad(async () => {
    const { result } = await api<string[]>('GET', '/rbac/roles?limit=100');
    return Promise.all(result.map(async (name) => (await api<Role>('GET', `/rbac/roles/${encodeURIComponent(name)}`)).result));
  }, []);
  return (
    <>
      <Section title="Roles">
        <Problem message={roles.error} />
        <table>
          <thead>
            <tr>
              <th scope="col">Role</th>
              <th scope="col">Permissions</th>
            </tr>
          </thead>
          <tbody>
            {(roles.data ?? []).map((r) => (
              <tr key={r.name}>
                <td>{r.name}</td>
                <td>{r.permissions.join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <ActionForm label="Create role" onSubmit={async (d) => {
          await api('POST', '/rbac/roles', { name: text(d, 'role'), permissions: d.getAll('permission').map(String) });
          roles.reload();
        }}>
          <Field label="Role name" name="role" required placeholder="support" />
          <fieldset>
            <legend>Permissions</legend>
            {(permissions.data?.result ?? []).map((p) => (
              <label class="check" key={p}>
                <input type="checkbox" name="permission" value={p} /> {p}
              </label>
            ))}
          </fieldset>
        </ActionForm>
      </Section>
      <Section title="Permissions">
        <Problem message={permissions.error} />
        <ul>{(permissions.data?.result ?? []).map((p) => <li key={p}>{p}</li>)}</ul>
        <ActionForm label="Create permission" class="inline" onSubmit={async (d) => {
          await api('POST', '/rbac/permissions', { name: text(d, 'permission_name') });
          permissions.reload();
        }}>
          <Field label="Permission name" name="permission_name" required placeholder="documents:read" />
        </ActionForm>
      </Section>
    </>
  );
}
