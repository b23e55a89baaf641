// A real OpenID provider (panva's oidc-provider) on loopback for SSO tests, and a cookie-keeping HTTP client
// that walks a sign-in through it the way a browser would: following redirects and submitting its login and
// consent forms (the provider's development interactions, plain HTML forms).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { Agent, fetch } from 'undici';

export interface TestAccount {
  /** what the login form takes, and the ID token's sub */
  accountId: string;
  email: string;
  email_verified: boolean;
  /** the `groups` claim, released with the `groups` scope */
  groups?: string[];
}

export interface OidcProviderOptions {
  /** the redirect URIs registered for the client: the service's /authenticate/oidc/callback */
  redirectUris: string[];
  clientId?: string;
  clientSecret?: string;
  accounts?: TestAccount[];
}

export interface TestOidcProvider {
  /** the issuer, with no trailing slash: a `service` credential's options.service.organization_url */
  issuer: string;
  port: number;
  clientId: string;
  clientSecret: string;
  /** by accountId; change them between sign-ins to change the claims the next ID token carries */
  accounts: Map<string, TestAccount>;
  provider: Provider;
  /** Publish these keys at the provider's jwks_uri instead of its signing keys (undefined: its own again). */
  publishKeys(keys: JWK[] | undefined): void;
  /** A public key the provider never signs with, for publishKeys. */
  otherKey(): Promise<JWK>;
  /** Consume an authorization code as if it had been redeemed already. */
  consumeCode(code: string): Promise<void>;
  /** Stop listening and drop open connections: the provider is down. */
  stop(): Promise<void>;
}

export const DEFAULT_ACCOUNT: TestAccount = { accountId: 'ada', email: 'ada@example.com', email_verified: true };

export async function startOidcProvider(options: OidcProviderOptions): Promise<TestOidcProvider> {
  const clientId = options.clientId ?? 'sso-test-client';
  const clientSecret = options.clientSecret ?? 'sso-test-client-secret-0123456789';
  const accounts = new Map((options.accounts ?? [DEFAULT_ACCOUNT]).map((a) => [a.accountId, { ...a }]));
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signing = { ...(await exportJWK(privateKey)), kid: 'test-signing', alg: 'RS256', use: 'sig' };

  // The port is known only once listening, and the issuer must name it: listen first, then build the provider.
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  let published: JWK[] | undefined;
  const server = createServer((req, res) => {
    if (published && req.method === 'GET' && req.url === '/jwks') {
      res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(JSON.stringify({ keys: published }));
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [signing] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    // The ID token carries the scopes' claims, as Google's and Azure's do, so no userinfo call is needed.
    conformIdTokenClaims: false,
    // Revocation (RFC 7009) and a refresh token with every code, as providers that keep offline access do.
    features: { devInteractions: { enabled: true }, revocation: { enabled: true } },
    issueRefreshToken: async () => true,
    ttl: { AuthorizationCode: 60, IdToken: 3600, AccessToken: 3600, Interaction: 600, Session: 3600, Grant: 3600 },
    async findAccount(_ctx, sub) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        async claims() {
          const a = accounts.get(sub) ?? account;
          return { sub, email: a.email, email_verified: a.email_verified, name: a.accountId, ...(a.groups && { groups: a.groups }) };
        },
      };
    },
  });
  handler = provider.callback();

  return {
    issuer,
    port,
    clientId,
    clientSecret,
    accounts,
    provider,
    publishKeys(keys) {
      published = keys;
    },
    async otherKey() {
      const { publicKey } = await generateKeyPair('RS256', { extractable: true });
      return { ...(await exportJWK(publicKey)), kid: 'test-signing', alg: 'RS256', use: 'sig' };
    },
    async consumeCode(code) {
      const found = await provider.AuthorizationCode.find(code);
      if (!found) throw new Error(`no authorization code ${code}`);
      await found.consume();
    },
    async stop() {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

/** One answer as the walking client saw it. */
export interface Hop {
  status: number;
  url: string;
  location: string | null;
  contentType: string | null;
  body: string;
}

/**
 * A browser without a screen: keeps cookies per host (name=value; path and expiry honoured only as far as
 * these tests need: Max-Age=0 deletes), never follows redirects on its own, and can submit an HTML form.
 */
export class WalkingClient {
  private readonly jar = new Map<string, Map<string, string>>();
  readonly agent = new Agent({ keepAliveTimeout: 1000 });

  cookies(url: string): Map<string, string> {
    const host = new URL(url).host;
    let c = this.jar.get(host);
    if (!c) this.jar.set(host, (c = new Map()));
    return c;
  }

  async request(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Hop> {
    const jar = this.cookies(url);
    const headers: Record<string, string> = { ...init.headers };
    if (jar.size > 0) headers['cookie'] = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body, redirect: 'manual', dispatcher: this.agent });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const gone = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || attrs.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1] ?? '') < Date.now());
      if (gone) jar.delete(name);
      else jar.set(name, value);
    }
    const location = res.headers.get('location');
    return { status: res.status, url, location: location === null ? null : new URL(location, url).href, contentType: res.headers.get('content-type'), body: await res.text() };
  }

  /**
   * From `url`, follows redirects and submits the provider's login form (as `login`) and consent form, until
   * a redirect leads to a URL for which `stop` is true (returned, not requested), or a non-redirect answer
   * that is no provider form (returned as the last hop). `rewrite` may change each redirect's target first.
   */
  async walk(url: string, o: { login?: string; stop: (url: string) => boolean; rewrite?: (url: string) => string; maxHops?: number }): Promise<{ stoppedAt?: string; last: Hop; hops: Hop[] }> {
    const hops: Hop[] = [];
    let next: { url: string; method: string; body?: string } = { url, method: 'GET' };
    for (let i = 0; i < (o.maxHops ?? 20); i++) {
      const hop = await this.request(next.url, {
        method: next.method,
        ...(next.body !== undefined && { body: next.body, headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      });
      hops.push(hop);
      if (hop.status >= 300 && hop.status < 400 && hop.location) {
        const target = o.rewrite ? o.rewrite(hop.location) : hop.location;
        if (o.stop(target)) return { stoppedAt: target, last: hop, hops };
        next = { url: target, method: 'GET' };
        continue;
      }
      const form = providerForm(hop.body);
      if (hop.status === 200 && form) {
        const fields = new URLSearchParams({ prompt: form.prompt });
        if (form.prompt === 'login') {
          fields.set('login', o.login ?? DEFAULT_ACCOUNT.accountId);
          fields.set('password', 'any password');
        }
        next = { url: new URL(form.action, hop.url).href, method: 'POST', body: fields.toString() };
        continue;
      }
      return { last: hop, hops };
    }
    throw new Error(`no end after ${o.maxHops ?? 20} hops: ${hops.map((h) => `${h.status} ${h.url}`).join(' → ')}`);
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** The provider's login or consent form on a page, if it has one. */
function providerForm(html: string): { action: string; prompt: string } | undefined {
  const action = /<form[^>]*action="([^"]+)"[^>]*method="post"/i.exec(html)?.[1];
  const prompt = /name="prompt" value="([a-z]+)"/.exec(html)?.[1];
  if (!action || !prompt) return undefined;
  return { action: action.replace(/&amp;/g, '&'), prompt };
}
