// A sample application page that uses the service's browser client (/sdk/service-sdk.js) from another origin:
// sign in, register, a client-side route change, logout, an anonymous cart that survives registration, and the
// phishing-detection snippet.
//
//   npx tsx scripts/browser-sample.ts --service-url http://127.0.0.1:8080 --org-id <org id> [--port 3000] [--mitm-snippet '<span ...>']
//   (or SERVICE_URL, SERVICE_ORG_ID, PORT, MITM_SNIPPET)
//
// The page's origin must be in the service's SERVICE_CORS_ORIGINS (e.g. http://127.0.0.1:3000).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { catching } from '../src/lib/http-handler.js';

export interface BrowserSampleOptions {
  serviceUrl: string;
  orgId: string;
  host?: string;
  /** 0 picks a free port */
  port?: number;
  /** HTML placed in the body as is: the phishing-detection snippet POST /organizations/mitm-tokens answered */
  mitmSnippet?: string;
  /** extra response headers of the page, e.g. a Referrer-Policy */
  headers?: Record<string, string>;
}

export interface BrowserSample {
  /** the page's base URL, e.g. http://127.0.0.1:3000 (its origin goes on SERVICE_CORS_ORIGINS) */
  url: string;
  close(): Promise<void>;
}

const escapeAttr = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d232b}
nav a{margin-right:1rem}fieldset{border:1px solid #d5dae1;border-radius:.4rem;margin:1rem 0;padding:.8rem 1rem}
input{font:inherit;padding:.3rem .5rem;margin:.2rem 0}button{font:inherit;padding:.35rem .9rem;margin:.2rem .3rem .2rem 0;cursor:pointer}
#status{font-weight:600}.muted{color:#5b6573;font-size:.9rem}code{background:#f3f5f8;padding:0 .3rem}`;

/** The page: the same document for every path, since the application routes on the client. */
export function samplePage(o: Pick<BrowserSampleOptions, 'serviceUrl' | 'orgId' | 'mitmSnippet'>): string {
  const service = o.serviceUrl.replace(/\/+$/, '');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sample shop</title><style>${STYLE}</style></head>
<body>
<h1>Sample shop</h1>
<nav><a href="/" data-route>Home</a><a href="/products" data-route id="go-products">Products</a><a href="/cart" data-route>Cart</a></nav>
<p>Page: <code id="route"></code> · Status: <span id="status">loading</span> · Person: <code id="person"></code> (<span id="person-type"></span>)</p>
<fieldset><legend>Account</legend>
<input id="email" type="email" placeholder="email" autocomplete="username">
<input id="password" type="password" placeholder="password" autocomplete="current-password"><br>
<button id="sign-in">Sign in</button><button id="register">Register</button><button id="logout">Log out</button>
</fieldset>
<fieldset><legend>Cart (kept for anonymous visitors too)</legend>
<button id="add-to-cart">Add an apple</button> Cart: <code id="cart">[]</code>
</fieldset>
<p class="muted">Analytics correlation id of this tab: <code id="correlation"></code></p>
${o.mitmSnippet ?? ''}
<script type="module">
import { ServiceSDK } from '${escapeAttr(service)}/sdk/service-sdk.js';
const sdk = new ServiceSDK({ baseUrl: ${JSON.stringify(service)}, orgId: ${JSON.stringify(o.orgId)}, sdkVersion: 'sample-1.0.0' });
window.sdk = sdk;
const $ = (id) => document.getElementById(id);
const BUCKET = '/attributes/end_user_read_write';
async function showCart() {
  let cart = [];
  if (sdk.person) {
    try { cart = (await sdk.call('GET', BUCKET)).cart ?? []; } catch { cart = []; }
  }
  $('cart').textContent = JSON.stringify(cart);
}
function show(status) {
  $('status').textContent = status;
  $('person').textContent = sdk.person ? sdk.person.person_id : '';
  $('person-type').textContent = sdk.person ? sdk.person.person_type : 'nobody';
  $('route').textContent = location.pathname;
  $('correlation').textContent = sdk.correlationId;
}
const credentials = () => ({ handle: { type: 'email_address', value: $('email').value }, password: $('password').value });
async function act(name, work) {
  try {
    await work();
    show(name);
  } catch (error) {
    show(name + ' failed: ' + error.message);
  }
  await showCart();
  document.body.dataset.state = $('status').textContent;
}
$('sign-in').onclick = () => act('signed in', () => sdk.signIn(credentials()));
$('register').onclick = () => act('registered', () => sdk.register(credentials()));
$('logout').onclick = () => act('logged out', () => sdk.logout());
$('add-to-cart').onclick = () => act('cart updated', async () => {
  await sdk.anonymous();
  const cart = sdk.person ? ((await sdk.call('GET', BUCKET)).cart ?? []) : [];
  await sdk.call('PATCH', BUCKET, { cart: [...cart, 'apple'] });
});
for (const a of document.querySelectorAll('a[data-route]')) {
  a.onclick = (e) => {
    e.preventDefault();
    history.pushState(null, '', a.getAttribute('href'));
    sdk.trackVirtualPageView();
    show($('status').textContent);
  };
}
await sdk.ready;
show(sdk.person ? 'restored' : 'ready');
await showCart();
document.body.dataset.state = $('status').textContent;
</script>
</body></html>`;
}

export async function startBrowserSample(o: BrowserSampleOptions): Promise<BrowserSample> {
  const html = samplePage(o);
  const server = createServer(catching((req, res) => {
    if (req.method !== 'GET') {
      res.writeHead(405, { Allow: 'GET' }).end();
      return;
    }
    if (req.url === '/favicon.ico') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', ...o.headers }).end(html);
  }));
  const host = o.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { 'service-url': { type: 'string' }, 'org-id': { type: 'string' }, port: { type: 'string' }, 'mitm-snippet': { type: 'string' } } });
  const serviceUrl = values['service-url'] ?? process.env['SERVICE_URL'] ?? 'http://127.0.0.1:8080';
  const orgId = values['org-id'] ?? process.env['SERVICE_ORG_ID'];
  if (!orgId) {
    console.error('--org-id (or SERVICE_ORG_ID) is required');
    process.exit(2);
  }
  const mitmSnippet = values['mitm-snippet'] ?? process.env['MITM_SNIPPET'];
  const sample = await startBrowserSample({ serviceUrl, orgId, port: Number(values.port ?? process.env['PORT'] ?? 3000), ...(mitmSnippet && { mitmSnippet }) });
  console.log(`sample page: ${sample.url} (put ${sample.url} on SERVICE_CORS_ORIGINS of ${serviceUrl})`);
}
