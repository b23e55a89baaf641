// A sample relying party for SSO sign-in: a page with a "Sign in with SSO" link to the service's start URL, and
// the /signed-in page the service redirects back to, which reads the token from the URL fragment in the browser.
//
//   npx tsx scripts/sso-sample.ts --service-url http://127.0.0.1:8080 --org-id <org id> --client-id <oauth_client_id> [--port 3000]
//   (or SERVICE_URL, SERVICE_ORG_ID, SSO_CLIENT_ID, PORT; --public-url when the page is reached through another address)
//
// Its /signed-in URL must be on the organization's sso_allowed_redirect_uris. The claims are decoded in the
// browser for display only: a real application verifies the token against the service's key set.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { catching } from '../src/lib/http-handler.js';

export interface SampleOptions {
  /** base URL of the identity service, as the browser reaches it */
  serviceUrl: string;
  orgId: string;
  /** the SSO credential to sign in with (its client_id) */
  clientId: string;
  host?: string;
  /** 0 picks a free port */
  port?: number;
  /** the page's own base URL when it differs from http://host:port (a proxy in front) */
  publicUrl?: string;
}

export interface SamplePage {
  /** the page with the sign-in link */
  url: string;
  /** where the service sends the browser back: put exactly this on sso_allowed_redirect_uris */
  signedInUrl: string;
  /** the service's start URL the link points to */
  startUrl: string;
  close(): Promise<void>;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The service's start URL for a browser: the organization travels as ?org_id=, since a link sets no headers. */
export function startUrlFor(serviceUrl: string, orgId: string, clientId: string, redirectUri: string): string {
  const url = new URL(`/authenticate/oidc/${encodeURIComponent(clientId)}/start`, serviceUrl);
  url.searchParams.set('org_id', orgId);
  url.searchParams.set('redirect_uri', redirectUri);
  return url.href;
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:3rem auto;padding:0 1rem;color:#1d232b}
a.button{display:inline-block;padding:.7rem 1.4rem;background:#2457c5;color:#fff;border-radius:.4rem;text-decoration:none;font-weight:600}
pre,textarea{width:100%;box-sizing:border-box;background:#f3f5f8;border:1px solid #d5dae1;border-radius:.3rem;padding:.6rem;font:13px/1.4 ui-monospace,monospace}
pre{white-space:pre-wrap;word-break:break-all}.muted{color:#5b6573;font-size:.9rem}`;

function page(title: string, body: string, script?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style>${script ? `<script src="${script}" defer></script>` : ''}</head>
<body>${body}</body></html>
`;
}

function homePage(startUrl: string, orgId: string, clientId: string): string {
  return page(
    'SSO sample',
    `<h1>SSO sample</h1>
<p>Organization <code>${escapeHtml(orgId)}</code>, provider credential <code>${escapeHtml(clientId)}</code>.</p>
<p><a class="button" id="sign-in" href="${escapeHtml(startUrl)}">Sign in with SSO</a></p>`,
  );
}

const SIGNED_IN = page(
  'Signed in — SSO sample',
  `<h1 id="status">Reading the sign-in…</h1>
<p>Person ID: <code id="person">-</code></p>
<h2>Token claims</h2>
<p class="muted">Decoded in the browser for display only; an application verifies the token against the service's key set.</p>
<pre id="claims">-</pre>
<h2>Token</h2>
<textarea id="token" rows="6" readonly></textarea>
<p><a href="/">Back to the sample</a></p>`,
  '/signed-in.js',
);

// Runs in the browser. The token arrives in the fragment, which never reaches a server; it is taken out of the
// address bar at once so that it stays out of the history. An error may come in the fragment or the query.
const SIGNED_IN_SCRIPT = `'use strict';
(function () {
  var fragment = new URLSearchParams(location.hash.slice(1));
  var query = new URLSearchParams(location.search);
  history.replaceState(null, '', location.pathname);
  var token = fragment.get('token');
  var error = fragment.get('error') || query.get('error');
  var status = document.getElementById('status');
  function decodePart(part) {
    var b64 = part.replace(/-/g, '+').replace(/_/g, '/');
    var binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, function (c) { return c.charCodeAt(0); })));
  }
  if (token) {
    var claims;
    try { claims = decodePart(token.split('.')[1] || ''); } catch (e) { claims = null; }
    if (claims) {
      var person = claims.person_id || claims.sub;
      status.textContent = 'Signed in as ' + person;
      document.getElementById('person').textContent = person;
      document.getElementById('claims').textContent = JSON.stringify(claims, null, 2);
      document.getElementById('token').value = token;
      document.body.dataset.state = 'signed-in';
      return;
    }
    status.textContent = 'The token in the address is not a JWT';
    document.body.dataset.state = 'failed';
    return;
  }
  if (error) {
    var detail = fragment.get('error_description') || query.get('error_description');
    status.textContent = 'Sign-in failed: ' + error + (detail ? ' (' + detail + ')' : '');
    document.body.dataset.state = 'failed';
    return;
  }
  status.textContent = 'No sign-in here: start from the sample page.';
  document.body.dataset.state = 'empty';
})();
`;

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    'content-type': `${type}; charset=utf-8`,
    'cache-control': 'no-store',
    // Only the page's own script runs, so the token in the fragment is read by nothing else.
    'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  });
  res.end(body);
}

export async function startSamplePage(options: SampleOptions): Promise<SamplePage> {
  const host = options.host ?? '127.0.0.1';
  let home = '';
  let signedInUrl = '';
  let startUrl = '';
  const server = createServer(catching((req, res) => {
    const path = new URL(req.url ?? '/', 'http://sample').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'GET only\n');
    if (path === '/') return send(res, 200, 'text/html', home);
    if (path === '/signed-in') return send(res, 200, 'text/html', SIGNED_IN);
    if (path === '/signed-in.js') return send(res, 200, 'text/javascript', SIGNED_IN_SCRIPT);
    send(res, 404, 'text/plain', 'not found\n');
  }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const base = (options.publicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  signedInUrl = `${base}/signed-in`;
  startUrl = startUrlFor(options.serviceUrl, options.orgId, options.clientId, signedInUrl);
  home = homePage(startUrl, options.orgId, options.clientId);
  return {
    url: `${base}/`,
    signedInUrl,
    startUrl,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const USAGE = `usage: npx tsx scripts/sso-sample.ts --org-id ORG --client-id CLIENT_ID [--service-url URL] [--port 3000] [--host 127.0.0.1] [--public-url URL]
  --service-url  the identity service (SERVICE_URL; default http://127.0.0.1:8080)
  --org-id       the organization (SERVICE_ORG_ID)
  --client-id    the SSO credential's client_id, the oauth_client_id of the start URL (SSO_CLIENT_ID)
  --port         the sample's own port (PORT; default 3000)`;

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = process.env;
  const { values } = parseArgs({
    options: {
      'service-url': { type: 'string', default: env['SERVICE_URL'] ?? 'http://127.0.0.1:8080' },
      'org-id': { type: 'string', default: env['SERVICE_ORG_ID'] ?? '' },
      'client-id': { type: 'string', default: env['SSO_CLIENT_ID'] ?? '' },
      port: { type: 'string', default: env['PORT'] ?? '3000' },
      host: { type: 'string', default: env['HOST'] ?? '127.0.0.1' },
      'public-url': { type: 'string', default: env['PUBLIC_URL'] ?? '' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (!values['org-id'] || !values['client-id']) {
    console.error(`--org-id and --client-id are required\n${USAGE}`);
    process.exit(2);
  }
  const sample = await startSamplePage({
    serviceUrl: values['service-url'],
    orgId: values['org-id'],
    clientId: values['client-id'],
    host: values.host,
    port: Number(values.port),
    ...(values['public-url'] ? { publicUrl: values['public-url'] } : {}),
  });
  console.log(`sample page on ${sample.url}
  its redirect URI (put it on the organization's sso_allowed_redirect_uris): ${sample.signedInUrl}
  sign-in link: ${sample.startUrl}`);
}
