// Loopback stand-ins of GitHub's and Bitbucket Cloud's OAuth 2.0 servers and user APIs, for SSO tests: the
// authorize endpoint approves at once, the token endpoint and the APIs answer with the documented shapes
// (GitHub's token errors in a 200 body, Bitbucket's HTTP Basic client authentication and paged email list).
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type StandInKind = 'github' | 'bitbucket';

export interface StandInEmail {
  email: string;
  verified: boolean;
  primary: boolean;
}

export interface StandInAccount {
  /** GitHub's numeric id, Bitbucket's {uuid} */
  id: string;
  login: string;
  /** change between sign-ins to change what /user/emails lists */
  emails: StandInEmail[];
}

export interface OAuthStandIns {
  base: string;
  clientId: string;
  clientSecret: string;
  accounts: Record<StandInKind, StandInAccount>;
  /** for startService's ssoReroute: the providers' origins to this server */
  reroute: Record<string, string>;
  /** A provider URL the browser is sent to, as this server's. */
  rewrite(url: string): string;
  /** What the token endpoint received, last first: its form fields and Authorization header. */
  tokenRequests: Array<{ kind: StandInKind; fields: Record<string, string>; authorization: string | undefined }>;
  /** The next token request of this kind answers this OAuth error (as the provider sends it). */
  failNextToken(kind: StandInKind, error: string): void;
  stop(): Promise<void>;
}

interface Grant {
  kind: StandInKind;
  redirect_uri: string | undefined;
  challenge: string | undefined;
  used: boolean;
}

const ORIGINS: Record<string, string> = {
  'https://github.com': '/github',
  'https://api.github.com': '/github-api',
  'https://bitbucket.org': '/bitbucket',
  'https://api.bitbucket.org': '/bitbucket-api',
};

export async function startOAuthStandIns(o: { clientId?: string; clientSecret?: string } = {}): Promise<OAuthStandIns> {
  const clientId = o.clientId ?? 'stand-in-client';
  const clientSecret = o.clientSecret ?? 'stand-in-secret-0123456789';
  const accounts: Record<StandInKind, StandInAccount> = {
    github: { id: '583231', login: 'octocat', emails: [{ email: 'octocat@example.com', verified: true, primary: true }] },
    bitbucket: { id: '{5f4dcc3b-5aa7-4c5e-8d1f-0a2f3b4c5d6e}', login: 'bitbucketeer', emails: [{ email: 'bucketeer@example.com', verified: true, primary: true }] },
  };
  const grants = new Map<string, Grant>();
  const tokens = new Map<string, StandInKind>();
  const failures = new Map<StandInKind, string>();
  const tokenRequests: OAuthStandIns['tokenRequests'] = [];

  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
  };

  function authorize(kind: StandInKind, url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    if (q.get('client_id') !== clientId) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('unknown client');
    // Bitbucket sends to the consumer's registered callback; the tests register the service's, passed along here.
    const redirect = new URL(q.get('redirect_uri') ?? '');
    const code = randomBytes(10).toString('hex');
    const challenge = q.get('code_challenge') ?? undefined;
    if (challenge && q.get('code_challenge_method') !== 'S256') return void res.writeHead(400).end('only S256');
    grants.set(code, { kind, redirect_uri: q.get('redirect_uri') ?? undefined, challenge, used: false });
    redirect.searchParams.set('code', code);
    const state = q.get('state');
    if (state) redirect.searchParams.set('state', state);
    res.writeHead(302, { location: redirect.href }).end();
  }

  /** GitHub answers its token errors with 200 (https://docs.github.com/en/apps/oauth-apps/maintaining-oauth-apps/troubleshooting-oauth-app-access-token-request-errors). */
  function tokenError(kind: StandInKind, res: ServerResponse, error: string, description: string): void {
    if (kind === 'github') json(res, 200, { error, error_description: description, error_uri: 'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors' });
    else json(res, 400, { error, error_description: description });
  }

  function token(kind: StandInKind, req: IncomingMessage, body: string, res: ServerResponse): void {
    const fields = Object.fromEntries(new URLSearchParams(body));
    tokenRequests.unshift({ kind, fields, authorization: req.headers.authorization });
    let id = fields['client_id'];
    let secret = fields['client_secret'];
    if (kind === 'bitbucket') {
      // https://developer.atlassian.com/cloud/bitbucket/oauth-2/ : the consumer key and secret as HTTP Basic
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const [user, pass] = Buffer.from(basic ?? '', 'base64').toString().split(':').map(decodeURIComponent);
      id = user;
      secret = pass;
    }
    if (id !== clientId || secret !== clientSecret) return tokenError(kind, res, kind === 'github' ? 'incorrect_client_credentials' : 'invalid_client', 'The client_id and/or client_secret passed are incorrect.');
    const forced = failures.get(kind);
    if (forced) {
      failures.delete(kind);
      return tokenError(kind, res, forced, 'the stand-in was told to refuse this code');
    }
    const grant = grants.get(fields['code'] ?? '');
    if (!grant || grant.used || grant.kind !== kind) {
      return tokenError(kind, res, kind === 'github' ? 'bad_verification_code' : 'invalid_grant', 'The code passed is incorrect or expired.');
    }
    grant.used = true;
    if (grant.challenge) {
      const verifier = fields['code_verifier'] ?? '';
      if (createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) return tokenError(kind, res, 'invalid_grant', 'The code_verifier does not match the code_challenge.');
    }
    const access = randomBytes(16).toString('hex');
    tokens.set(access, kind);
    if (kind === 'github') json(res, 200, { access_token: `gho_${access}`, token_type: 'bearer', scope: 'read:user,user:email' });
    else json(res, 200, { access_token: access, scopes: 'account email', expires_in: 7200, refresh_token: randomBytes(8).toString('hex'), token_type: 'bearer', state: 'authorization_code' });
  }

  function api(kind: StandInKind, path: string, req: IncomingMessage, res: ServerResponse): void {
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (tokens.get(kind === 'github' ? bearer.replace(/^gho_/, '') : bearer) !== kind) {
      return kind === 'github'
        ? json(res, 401, { message: 'Requires authentication', documentation_url: 'https://docs.github.com/rest/users/users#get-the-authenticated-user', status: '401' })
        : json(res, 401, { type: 'error', error: { message: 'Access token expired.' } });
    }
    const a = accounts[kind];
    if (kind === 'github') {
      if (req.headers['user-agent'] === undefined) return json(res, 403, { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header' });
      if (path === '/user') return json(res, 200, { login: a.login, id: Number(a.id), node_id: 'MDQ6VXNlcjE=', type: 'User', site_admin: false, name: 'The Octocat', email: null });
      if (path === '/user/emails') return json(res, 200, a.emails.map((e) => ({ email: e.email, primary: e.primary, verified: e.verified, visibility: e.primary ? 'private' : null })));
    } else {
      if (path === '/2.0/user') return json(res, 200, { type: 'user', uuid: a.id, account_id: '557058:c0b7', username: a.login, display_name: 'Bit Bucketeer', has_2fa_enabled: null, links: {} });
      if (path === '/2.0/user/emails') {
        const values = a.emails.map((e) => ({ is_primary: e.primary, is_confirmed: e.verified, type: 'email', email: e.email, links: {} }));
        return json(res, 200, { pagelen: 10, values, page: 1, size: values.length });
      }
    }
    json(res, 404, { message: 'Not Found' });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const [, prefix = '', ...rest] = url.pathname.split('/');
      const path = `/${rest.join('/')}`;
      const body = Buffer.concat(chunks).toString();
      if (prefix === 'github' && path === '/login/oauth/authorize') return authorize('github', url, res);
      if (prefix === 'github' && path === '/login/oauth/access_token' && req.method === 'POST') return token('github', req, body, res);
      if (prefix === 'bitbucket' && path === '/site/oauth2/authorize') return authorize('bitbucket', url, res);
      if (prefix === 'bitbucket' && path === '/site/oauth2/access_token' && req.method === 'POST') return token('bitbucket', req, body, res);
      if (prefix === 'github-api' && req.method === 'GET') return api('github', path, req, res);
      if (prefix === 'bitbucket-api' && req.method === 'GET') return api('bitbucket', path, req, res);
      json(res, 404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const reroute = Object.fromEntries(Object.entries(ORIGINS).map(([origin, prefix]) => [origin, `${base}${prefix}`]));

  return {
    base,
    clientId,
    clientSecret,
    accounts,
    reroute,
    rewrite(url) {
      for (const [origin, to] of Object.entries(reroute)) if (url.startsWith(`${origin}/`)) return to + url.slice(origin.length);
      return url;
    },
    tokenRequests,
    failNextToken(kind, error) {
      failures.set(kind, error);
    },
    async stop() {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
