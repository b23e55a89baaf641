// A sample relying party of the service's OAuth 2.0 authorization server: "Sign in" starts the authorization
// code flow with PKCE (S256), state and nonce; /callback exchanges the code through openid-client, which checks
// the ID token (its signature against the published keys too), and shows the person and the claims.
//
//   npx tsx scripts/oauth-sample.ts --client-id <client_id> [--client-secret <secret>] [--service-url http://127.0.0.1:8080] [--port 3000]
//   (or SERVICE_URL, OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET, PORT; --public-url when the page is reached through another address)
//
// Without a secret the client is public (token endpoint auth `none`); its redirect URI, http://host:port/callback,
// must be one of the client's redirect_uris.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as oidc from 'openid-client';
import { catching } from '../src/lib/http-handler.js';

export interface OAuthSampleOptions {
  /** base URL of the identity service, its issuer: discovery reads /.well-known/openid-configuration there */
  serviceUrl: string;
  clientId: string;
  /** a confidential client's secret (client_secret_basic); none: a public client */
  clientSecret?: string;
  scope?: string;
  host?: string;
  /** 0 picks a free port */
  port?: number;
  /** the page's own base URL when it differs from http://host:port (a proxy in front) */
  publicUrl?: string;
}

export interface OAuthSample {
  /** the page with the sign-in button */
  url: string;
  /** the redirect URI: put exactly this on the client's redirect_uris */
  callbackUrl: string;
  close(): Promise<void>;
}

/** What the sample keeps between the redirect to the service and the callback, per browser. */
interface Pending {
  verifier: string;
  state: string;
  nonce: string;
  at: number;
}

/** Not the service's cookie name: both may live on 127.0.0.1, and cookies do not tell ports apart. */
const COOKIE = 'oauth_sample_login';
/** A sign-in not finished in this time is forgotten. */
const PENDING_MS = 10 * 60_000;
const MAX_PENDING = 1000;

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:3rem auto;padding:0 1rem;color:#1d232b}
a.button{display:inline-block;padding:.7rem 1.4rem;background:#2457c5;color:#fff;border-radius:.4rem;text-decoration:none;font-weight:600}
pre,textarea{width:100%;box-sizing:border-box;background:#f3f5f8;border:1px solid #d5dae1;border-radius:.3rem;padding:.6rem;font:13px/1.4 ui-monospace,monospace}
pre{white-space:pre-wrap;word-break:break-all}.muted{color:#5b6573;font-size:.9rem}`;

function page(title: string, state: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body data-state="${state}">${body}</body></html>
`;
}

function homePage(serviceUrl: string, clientId: string, isPublic: boolean): string {
  return page(
    'OAuth sample',
    'home',
    `<h1>OAuth sample</h1>
<p>Authorization server <code>${escapeHtml(serviceUrl)}</code>, ${isPublic ? 'public' : 'confidential'} client <code>${escapeHtml(clientId)}</code>.</p>
<p><a class="button" id="sign-in" href="/login">Sign in</a></p>`,
  );
}

function signedInPage(claims: Record<string, unknown>, idToken: string): string {
  const sub = String(claims['sub']);
  return page(
    'Signed in — OAuth sample',
    'signed-in',
    `<h1 id="status">Signed in as ${escapeHtml(sub)}</h1>
<p>Subject: <code id="person">${escapeHtml(sub)}</code></p>
<h2>ID token claims</h2>
<p class="muted">Checked by openid-client: signature against the service's key set, issuer, audience, nonce, expiry.</p>
<pre id="claims">${escapeHtml(JSON.stringify(claims, null, 2))}</pre>
<h2>ID token</h2>
<textarea id="token" rows="6" readonly>${escapeHtml(idToken)}</textarea>
<p><a href="/">Back to the sample</a></p>`,
  );
}

function failedPage(message: string): string {
  return page('Sign-in failed — OAuth sample', 'failed', `<h1 id="status">Sign-in failed: ${escapeHtml(message)}</h1>\n<p><a href="/">Back to the sample</a></p>`);
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    // No script at all: the page is server-rendered.
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(body);
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Why the exchange failed, in the words of the RFC 6749 5.2 error when the service sent one. */
function reason(error: unknown): string {
  if (error instanceof oidc.ResponseBodyError) return `${error.error}${error.error_description ? ` (${error.error_description})` : ''}`;
  if (error instanceof oidc.AuthorizationResponseError) return `${error.error}${error.error_description ? ` (${error.error_description})` : ''}`;
  return error instanceof Error ? error.message : String(error);
}

export async function startOAuthSample(options: OAuthSampleOptions): Promise<OAuthSample> {
  const host = options.host ?? '127.0.0.1';
  const scope = options.scope ?? 'openid email';
  const isPublic = options.clientSecret === undefined;
  const auth = isPublic ? oidc.None() : oidc.ClientSecretBasic(options.clientSecret as string);
  // Plain http is for a service on this machine only; the non-repudiation checks make the library verify the
  // ID token's signature against the discovered jwks_uri, which it otherwise trusts to TLS (OIDC Core 3.1.3.7).
  const execute = [oidc.enableNonRepudiationChecks, ...(new URL(options.serviceUrl).protocol === 'http:' ? [oidc.allowInsecureRequests] : [])];
  const config = await oidc.discovery(new URL(options.serviceUrl), options.clientId, undefined, auth, { execute });
  const pending = new Map<string, Pending>();
  let base = '';
  let callbackUrl = '';
  let home = '';

  const login = async (res: ServerResponse) => {
    const now = Date.now();
    for (const [id, p] of pending) if (now - p.at > PENDING_MS || pending.size >= MAX_PENDING) pending.delete(id);
    const p: Pending = { verifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState(), nonce: oidc.randomNonce(), at: now };
    const id = randomBytes(18).toString('base64url');
    pending.set(id, p);
    const to = oidc.buildAuthorizationUrl(config, {
      redirect_uri: callbackUrl,
      scope,
      state: p.state,
      nonce: p.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(p.verifier),
      code_challenge_method: 'S256',
    });
    // SameSite=Lax: the cookie comes back on the service's top-level redirect to /callback.
    send(res, 302, '', { location: to.href, 'set-cookie': `${COOKIE}=${id}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${PENDING_MS / 1000}` });
  };

  const callback = async (req: IncomingMessage, res: ServerResponse) => {
    const id = cookieOf(req, COOKIE);
    const p = id === undefined ? undefined : pending.get(id);
    const clear = { 'set-cookie': `${COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0` };
    if (!p) return send(res, 400, failedPage('no sign-in started in this browser: start from the sample page'), clear);
    pending.delete(id as string);
    try {
      const tokens = await oidc.authorizationCodeGrant(config, new URL(req.url ?? '/', base), { pkceCodeVerifier: p.verifier, expectedState: p.state, expectedNonce: p.nonce, idTokenExpected: true });
      const claims = tokens.claims();
      if (!claims || !tokens.id_token) return send(res, 502, failedPage('the service sent no ID token'), clear);
      send(res, 200, signedInPage(claims as Record<string, unknown>, tokens.id_token), clear);
    } catch (error) {
      send(res, 400, failedPage(reason(error)), clear);
    }
  };

  const server = createServer(catching((req, res) => {
    const path = new URL(req.url ?? '/', 'http://sample').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, failedPage('GET only'));
    if (path === '/') return send(res, 200, home);
    if (path === '/login') return void login(res).catch((e) => send(res, 500, failedPage(reason(e))));
    if (path === '/callback') return void callback(req, res).catch((e) => send(res, 500, failedPage(reason(e))));
    send(res, 404, failedPage('not found'));
  }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  base = (options.publicUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  callbackUrl = `${base}/callback`;
  home = homePage(options.serviceUrl, options.clientId, isPublic);
  return {
    url: `${base}/`,
    callbackUrl,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const USAGE = `usage: npx tsx scripts/oauth-sample.ts --client-id CLIENT_ID [--client-secret SECRET] [--service-url URL] [--port 3000] [--host 127.0.0.1] [--public-url URL]
  --service-url    the identity service, its issuer (SERVICE_URL; default http://127.0.0.1:8080)
  --client-id      the OAuth client (OAUTH_CLIENT_ID)
  --client-secret  a confidential client's secret (OAUTH_CLIENT_SECRET); without it the client is public
  --scope          the scopes asked for (default "openid email")
  --port           the sample's own port (PORT; default 3000)`;

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = process.env;
  const { values } = parseArgs({
    options: {
      'service-url': { type: 'string', default: env['SERVICE_URL'] ?? 'http://127.0.0.1:8080' },
      'client-id': { type: 'string', default: env['OAUTH_CLIENT_ID'] ?? '' },
      'client-secret': { type: 'string', default: env['OAUTH_CLIENT_SECRET'] ?? '' },
      scope: { type: 'string', default: 'openid email' },
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
  if (!values['client-id']) {
    console.error(`--client-id is required\n${USAGE}`);
    process.exit(2);
  }
  const sample = await startOAuthSample({
    serviceUrl: values['service-url'],
    clientId: values['client-id'],
    ...(values['client-secret'] ? { clientSecret: values['client-secret'] } : {}),
    scope: values.scope,
    host: values.host,
    port: Number(values.port),
    ...(values['public-url'] ? { publicUrl: values['public-url'] } : {}),
  });
  console.log(`sample page on ${sample.url}
  its redirect URI (put it on the client's redirect_uris): ${sample.callbackUrl}`);
}
