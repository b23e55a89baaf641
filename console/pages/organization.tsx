// The organization's allowed origin domains, and its suborganizations (each one's API key shown once).
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ActionForm, Field, Problem, Section, ShownOnce, text, useLoad } from '../ui.js';

const DOMAINS = '/organizations/config/domains';

export function DomainsPage() {
  const domains = useLoad(() => api<string[]>('GET', DOMAINS), []);
  return (
    <>
      <Section title="Allowed origin domains">
        <Problem message={domains.error} />
        <ul data-testid="domains">
          {(domains.data?.result ?? []).map((d) => (
            <li key={d}>
              {d}{' '}
              <ActionForm label={`Remove ${d}`} class="inline" onSubmit={async () => {
                await api('DELETE', `${DOMAINS}?domain=${encodeURIComponent(d)}`);
                domains.reload();
              }} />
            </li>
          ))}
        </ul>
        {domains.data?.result.length === 0 && <p>No domains: browsers of no other origin may call the API.</p>}
      </Section>
      <Section title="Add domains">
        <ActionForm label="Add domains" onSubmit={async (d) => {
          await api('POST', DOMAINS, { domains: text(d, 'domains').split(/[\s,]+/).filter(Boolean) });
          domains.reload();
        }}>
          <Field label="Domains (comma-separated; *.example.com matches its subdomains)" name="domains" required placeholder="app.example.com" />
        </ActionForm>
      </Section>
    </>
  );
}

export function SuborganizationsPage() {
  const subs = useLoad(() => api<string[]>('GET', '/organizations/suborganizations'), []);
  const [created, setCreated] = useState<{ id: string; api_key: string } | undefined>(undefined);
  return (
    <>
      <Section title="Suborganizations">
        <Problem message={subs.error} />
        <ul data-testid="suborganizations">{(subs.data?.result ?? []).map((id) => <li key={id}>{id}</li>)}</ul>
        {subs.data?.result.length === 0 && <p>No suborganizations.</p>}
      </Section>
      <Section title="Create a suborganization">
        <p>Needs the permission console.keys: the new organization's API key is shown once.</p>
        <ActionForm label="Create suborganization" onSubmit={async (d) => {
          const { result } = await api<{ id: string; api_key: string }>('POST', '/organizations/suborganizations', { sub_org_name: text(d, 'sub_org_name') });
          setCreated(result);
          subs.reload();
        }}>
          <Field label="Name" name="sub_org_name" required />
        </ActionForm>
        {created && <ShownOnce label={`API key of ${created.id}`} value={created.api_key} />}
      </Section>
    </>
  );
}
