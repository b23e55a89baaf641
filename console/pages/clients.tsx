// OAuth clients: the list, registration (the secret shown once), deletion.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ActionForm, Field, Problem, Section, ShownOnce, text, useLoad } from '../ui.js';

interface Client {
  client_id: string;
  client_name: string;
  public: boolean;
  redirect_uris: string[];
  scopes: string[];
}

export function ClientsPage() {
  const clients = useLoad(() => api<Client[]>('GET', '/oauth2/clients?limit=100'), []);
  const [secret, setSecret] = useState<string | undefined>(undefined);
  return (
    <>
      <Section title="Register a client">
        <ActionForm label="Register client" onSubmit={async (d) => {
          const { result } = await api<Client & { client_secret?: string }>('POST', '/oauth2/clients', {
            client_name: text(d, 'client_name'),
            redirect_uris: [text(d, 'redirect_uri')],
            scopes: text(d, 'scopes').split(/\s+/).filter(Boolean),
            grant_types: ['authorization_code', 'refresh_token'],
          });
          setSecret(result.client_secret);
          clients.reload();
        }}>
          <Field label="Name" name="client_name" required placeholder="Web app" />
          <Field label="Redirect URI" name="redirect_uri" type="url" required placeholder="https://app.example/cb" />
          <Field label="Scopes" name="scopes" value="openid email" />
        </ActionForm>
        {secret !== undefined && <ShownOnce label="Client secret" value={secret} />}
      </Section>
      <Section title="Clients">
        <Problem message={clients.error} />
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Client ID</th>
              <th scope="col">Redirect URIs</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(clients.data?.result ?? []).map((c) => (
              <tr key={c.client_id}>
                <td>{c.client_name}</td>
                <td>
                  <code>{c.client_id}</code>
                </td>
                <td>{c.redirect_uris.join(' ')}</td>
                <td>
                  <ActionForm label={`Delete ${c.client_name}`} confirm={`Delete the client ${c.client_name}? Its tokens stop working.`} onSubmit={async () => {
                    await api('DELETE', `/oauth2/clients/${encodeURIComponent(c.client_id)}`);
                    clients.reload();
                  }} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}
