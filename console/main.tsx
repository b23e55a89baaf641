// The console: sign-in, the first-administrator link, and the pages, one per area of the API, by URL fragment.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { anonymous, finishSignIn, LAST_ORG, session, signOut, startSignIn } from './api.js';
import { ClientsPage } from './pages/clients.js';
import { DomainsPage, SuborganizationsPage } from './pages/organization.js';
import { SsoPage } from './pages/sso.js';
import { RegionsPage, SigningKeysPage } from './pages/system.js';
import { EventsPage } from './pages/events.js';
import { GroupPage, GroupsPage } from './pages/groups.js';
import { PersonPage, PersonsPage } from './pages/persons.js';
import { RolesPage } from './pages/rbac.js';
import { ConfigPage, KeysPage } from './pages/settings.js';
import { WebhookPage, WebhooksPage } from './pages/webhooks.js';
import { ActionForm, Field, Problem, text } from './ui.js';
import './style.css';

const AREAS = [
  ['persons', 'Persons'],
  ['groups', 'Groups'],
  ['roles', 'Roles and permissions'],
  ['clients', 'OAuth clients'],
  ['sso', 'SSO providers'],
  ['webhooks', 'Webhooks'],
  ['events', 'Live events'],
  ['config', 'Configuration'],
  ['domains', 'Domains'],
  ['suborganizations', 'Suborganizations'],
  ['keys', 'API key'],
  ['signing-keys', 'Signing keys'],
  ['regions', 'Regions'],
] as const;

const routeOf = (hash: string) => hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);

function page(parts: string[], go: (hash: string) => void): { title: string; body: preact.JSX.Element } {
  const [area, id] = parts;
  switch (area) {
    case 'groups':
      return id ? { title: `Group ${id}`, body: <GroupPage name={id} /> } : { title: 'Groups', body: <GroupsPage /> };
    case 'roles':
      return { title: 'Roles and permissions', body: <RolesPage /> };
    case 'clients':
      return { title: 'OAuth clients', body: <ClientsPage /> };
    case 'sso':
      return { title: 'SSO providers', body: <SsoPage /> };
    case 'domains':
      return { title: 'Domains', body: <DomainsPage /> };
    case 'suborganizations':
      return { title: 'Suborganizations', body: <SuborganizationsPage /> };
    case 'signing-keys':
      return { title: 'Signing keys', body: <SigningKeysPage /> };
    case 'regions':
      return { title: 'Regions', body: <RegionsPage /> };
    case 'webhooks':
      return id ? { title: 'Webhook', body: <WebhookPage id={id} /> } : { title: 'Webhooks', body: <WebhooksPage /> };
    case 'events':
      return { title: 'Live events', body: <EventsPage /> };
    case 'config':
      return { title: 'Configuration', body: <ConfigPage /> };
    case 'keys':
      return { title: 'API key', body: <KeysPage /> };
    default:
      return id ? { title: 'Person', body: <PersonPage id={id} /> } : { title: 'Persons', body: <PersonsPage go={go} /> };
  }
}

function Shell({ org }: { org: string }) {
  const [hash, setHash] = useState(location.hash);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  const parts = routeOf(hash);
  const go = (to: string) => (location.hash = to);
  const { title, body } = page(parts, go);
  // A new page moves the focus to its heading, as a page load would for a screen reader or the keyboard.
  useEffect(() => {
    heading.current?.focus();
    document.title = `${title} · Console`;
  }, [hash]);
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); heading.current?.focus(); }}>
        Skip to content
      </a>
      <header>
        <p class="brand">Console · <span>{org}</span></p>
        <nav aria-label="Areas">
          <ul>
            {AREAS.map(([key, label]) => (
              <li key={key}>
                <a href={`#/${key}`} aria-current={(parts[0] || 'persons') === key ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main">
        <h1 tabIndex={-1} ref={heading}>
          {title}
        </h1>
        {body}
      </main>
    </>
  );
}

function SignIn({ problem }: { problem?: string }) {
  const org = new URLSearchParams(location.search).get('org') ?? localStorage.getItem(LAST_ORG) ?? '';
  return (
    <main id="main" class="narrow">
      <h1>Sign in to the console</h1>
      <Problem message={problem} />
      <ActionForm label="Sign in" onSubmit={(d) => startSignIn(text(d, 'org'))}>
        <Field label="Organization ID" name="org" required value={org} />
      </ActionForm>
      <p>You sign in on the service's sign-in page, with any method your organization allows.</p>
    </main>
  );
}

function FirstAdministrator({ code, org }: { code: string; org: string }) {
  return (
    <main id="main" class="narrow">
      <h1>Become the first administrator</h1>
      <p>This link works once. It creates you as a person of the organization, with the password you choose, and makes you its administrator.</p>
      <ActionForm label="Create administrator" onSubmit={async (d) => {
        await anonymous('POST', '/console/first-administrator', { code, handle: { type: 'email_address', value: text(d, 'email') }, password: String(d.get('password')) });
        history.replaceState(null, '', '/console');
        await startSignIn(org);
      }}>
        <Field label="Email address" name="email" type="email" required autocomplete="username" />
        <Field label="Password" name="password" type="password" required autocomplete="new-password" />
      </ActionForm>
    </main>
  );
}

function App() {
  const query = new URLSearchParams(location.search);
  const fragment = new URLSearchParams(location.hash.slice(1));
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [finishing, setFinishing] = useState(query.has('code') || query.has('error'));
  useEffect(() => {
    if (finishing) finishSignIn(query).then(() => setFinishing(false), (e: Error) => { setProblem(e.message); setFinishing(false); });
  }, []);
  if (finishing) return <main id="main" class="narrow"><h1>Signing in…</h1></main>;
  const code = fragment.get('first-administrator');
  if (code) return <FirstAdministrator code={code} org={fragment.get('org') ?? ''} />;
  const s = session();
  return s ? <Shell org={s.org} /> : <SignIn problem={problem} />;
}

render(<App />, document.getElementById('app') as HTMLElement);
