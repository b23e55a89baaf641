// SSO provider credentials: the list, registration, a new secret, deletion. Secrets are write-only: the API
// never answers them, so the page has fields to send one and nothing that shows one.
import { api } from '../api.js';
import { ActionForm, Field, Problem, Section, text, useLoad } from '../ui.js';

interface Credential {
  client_id: string;
  provider: string;
  label: string;
}

const PATH = '/organizations/sso/oidc/provider-credentials';
const PROVIDERS = ['google', 'github', 'bitbucket', 'gitlab', 'facebook', 'line', 'azuread', 'service', 'apple'];
const one = (clientId: string) => `${PATH}/${encodeURIComponent(clientId)}`;

export function SsoPage() {
  const creds = useLoad(() => api<Credential[]>('GET', PATH), []);
  return (
    <>
      <Section title="Provider credentials">
        <Problem message={creds.error} />
        <table>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Client ID</th>
              <th scope="col">Label</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(creds.data?.result ?? []).map((c) => (
              <tr key={c.client_id}>
                <td>{c.provider}</td>
                <td>{c.client_id}</td>
                <td>{c.label}</td>
                <td>
                  <ActionForm label={`New secret for ${c.client_id}`} class="inline" onSubmit={async (d) => {
                    await api('PATCH', one(c.client_id), { client_secret: String(d.get('secret')) });
                  }}>
                    <div class="field">
                      <label for={`f-secret-${c.client_id}`}>New client secret</label>
                      <input id={`f-secret-${c.client_id}`} name="secret" type="password" required autocomplete="off" />
                    </div>
                  </ActionForm>
                  <ActionForm label={`Delete ${c.client_id}`} confirm={`Delete the ${c.provider} credential ${c.client_id}? Sign-in with it stops.`} onSubmit={async () => {
                    await api('DELETE', one(c.client_id));
                    creds.reload();
                  }} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {creds.data?.result.length === 0 && <p>No provider credentials.</p>}
      </Section>
      <Section title="Add a provider credential">
        <p>The client secret is sent once and never shown again, here or by the API.</p>
        <ActionForm label="Add credential" onSubmit={async (d) => {
          const label = text(d, 'label');
          await api('POST', PATH, { provider: text(d, 'provider'), client_id: text(d, 'client_id'), client_secret: String(d.get('client_secret')), ...(label !== '' && { label }) });
          creds.reload();
        }}>
          <div class="field">
            <label for="f-provider">Provider</label>
            <select id="f-provider" name="provider">
              {PROVIDERS.map((p) => <option value={p}>{p}</option>)}
            </select>
          </div>
          <Field label="Client ID" name="client_id" required />
          <Field label="Client secret" name="client_secret" type="password" required />
          <Field label="Label" name="label" />
        </ActionForm>
      </Section>
    </>
  );
}
