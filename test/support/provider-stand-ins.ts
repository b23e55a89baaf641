// Loopback stand-ins of Microsoft Entra ID (a multi-tenant v2.0 endpoint) and Sign in with Apple for SSO tests:
// a real OpenID provider (panva's oidc-provider) whose issuer is the real one, behind a small server that
// lays its endpoints out at the real provider's paths. The service reaches it through ssoReroute; the walking
// client through rewrite().
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, importSPKI, jwtVerify, type JWK } from 'jose';
import Provider from 'oidc-provider';

export interface StandIn {
  /** the real provider's origin, e.g. https://login.microsoftonline.com */
  origin: string;
  base: string;
  clientId: string;
  /** for startService's ssoReroute */
  reroute: Record<string, string>;
  /** A URL at the real provider's origin, as this server's. */
  rewrite(url: string): string;
  /** the claims the next ID token carries, beyond sub (change them between sign-ins) */
  claims: Record<string, unknown>;
  stop(): Promise<void>;
}

interface ShimOptions {
  origin: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  claims: Record<string, unknown>;
  /** the real provider's path (and method) → oidc-provider's, or a document to answer, or undefined: passed as is */
  route(path: string, method: string): string | { document: unknown } | undefined;
  /** the key its ID tokens are signed with; a fresh one by default */
  signingKey?: Promise<JWK>;
  /** drop RFC 9207's `iss` from authorization responses, which this provider does not send */
  withoutIss?: boolean;
  /** the token request's form fields as the provider received them, checked and made oidc-provider's */
  tokenFields?(fields: URLSearchParams): Promise<URLSearchParams>;
}

async function newSigningKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

/** Microsoft signs every tenant's tokens with the same published keys, so do its stand-ins (one per process). */
let entraKey: Promise<JWK> | undefined;

async function startShim(o: ShimOptions): Promise<StandIn> {
  const signing = await (o.signingKey ?? newSigningKey('stand-in'));
  const claimNames = Object.keys(o.claims);
  const claims = { ...o.claims };
  const provider = new Provider(o.issuer, {
    clients: [
      {
        client_id: o.clientId,
        client_secret: o.clientSecret,
        redirect_uris: o.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [signing] },
    claims: { openid: ['sub', ...claimNames] },
    scopes: ['openid', 'email', 'profile', 'name', 'User.Read'],
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    ttl: { AuthorizationCode: 60, IdToken: 3600, AccessToken: 3600, Interaction: 600, Session: 3600, Grant: 3600 },
    async findAccount(_ctx, sub) {
      return { accountId: sub, claims: async () => ({ sub, ...claims }) };
    },
  });
  const handle = provider.callback();

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const to = o.route(url.pathname, req.method ?? 'GET');
    if (to && typeof to === 'object') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(to.document));
      return;
    }
    if (typeof to === 'string') req.url = `${to}${url.search}`;
    if (to === '/token' && o.tokenFields) {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      try {
        (req as IncomingMessage & { body?: string }).body = (await o.tokenFields(new URLSearchParams(Buffer.concat(chunks).toString()))).toString();
      } catch (error) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_client', error_description: (error as Error).message }));
        return;
      }
    }
    if (o.withoutIss) {
      const setHeader = res.setHeader.bind(res);
      res.setHeader = (name, value) => {
        if (name.toLowerCase() === 'location' && typeof value === 'string' && o.redirectUris.some((u) => value.startsWith(u))) {
          const url = new URL(value);
          url.searchParams.delete('iss');
          return setHeader(name, url.href);
        }
        return setHeader(name, value);
      };
    }
    handle(req, res);
  }

  const server = createServer((req, res) => {
    serve(req, res).catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin: o.origin,
    base,
    clientId: o.clientId,
    reroute: { [o.origin]: base },
    rewrite: (url) => (url.startsWith(`${o.origin}/`) ? base + url.slice(o.origin.length) : url),
    claims,
    async stop() {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

const ENTRA = 'https://login.microsoftonline.com';

/**
 * Entra ID's v2.0 endpoints for any tenant name (common, organizations, consumers, a GUID): the discovery
 * document Microsoft publishes for the multi-tenant ones (issuer `{tenantid}` template), and ID tokens from
 * `tenantId`'s issuer with its `tid`, an `email` and `xms_edov` but no email_verified, as Microsoft's are.
 */
export function startEntraStandIn(o: { redirectUris: string[]; tenantId: string; clientId?: string; clientSecret?: string; issuerTenant?: string }): Promise<StandIn> {
  const MULTI = ['common', 'organizations', 'consumers'];
  return startShim({
    origin: ENTRA,
    issuer: `${ENTRA}/${o.issuerTenant ?? o.tenantId}/v2.0`,
    clientId: o.clientId ?? 'entra-client',
    clientSecret: o.clientSecret ?? 'entra-secret-0123456789',
    redirectUris: o.redirectUris,
    claims: { tid: o.tenantId, email: 'grace@contoso.example', xms_edov: true },
    withoutIss: true,
    signingKey: (entraKey ??= newSigningKey('entra-stand-in')),
    route(path) {
      const m = /^\/([^/]+)\/(v2\.0\/\.well-known\/openid-configuration|oauth2\/v2\.0\/authorize|oauth2\/v2\.0\/token|discovery\/v2\.0\/keys)$/.exec(path);
      if (!m) return undefined;
      const [, tenant = '', what] = m;
      if (what === 'oauth2/v2.0/authorize') return '/auth';
      if (what === 'oauth2/v2.0/token') return '/token';
      if (what === 'discovery/v2.0/keys') return '/jwks';
      // https://login.microsoftonline.com/common/v2.0/.well-known/openid-configuration, abridged
      return {
        document: {
          issuer: MULTI.includes(tenant) ? `${ENTRA}/{tenantid}/v2.0` : `${ENTRA}/${o.tenantId}/v2.0`,
          authorization_endpoint: `${ENTRA}/${tenant}/oauth2/v2.0/authorize`,
          token_endpoint: `${ENTRA}/${tenant}/oauth2/v2.0/token`,
          jwks_uri: `${ENTRA}/${tenant}/discovery/v2.0/keys`,
          response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
          response_modes_supported: ['query', 'fragment', 'form_post'],
          subject_types_supported: ['pairwise'],
          id_token_signing_alg_values_supported: ['RS256'],
          scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
          token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
          claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nonce', 'tid', 'email'],
          tenant_region_scope: null,
          cloud_instance_name: 'microsoftonline.com',
        },
      };
    },
  });
}

const APPLE = 'https://appleid.apple.com';

/**
 * Sign in with Apple at its paths (/auth/authorize, /auth/token, /auth/keys), answering with form_post as
 * Apple must when name or email is asked for; the client secret is checked as Apple does: an ES256 JWT by
 * the team's key (`kid`), iss the team, sub the client, aud https://appleid.apple.com. Its ID tokens carry
 * email_verified as the string "true", as Apple's may.
 */
export async function startAppleStandIn(o: { redirectUris: string[]; clientId: string; teamId: string; keyId: string; publicKeyPem: string }): Promise<StandIn> {
  const key = await importSPKI(o.publicKeyPem, 'ES256');
  const registered = 'apple-stand-in-registered-secret';
  return startShim({
    origin: APPLE,
    issuer: APPLE,
    clientId: o.clientId,
    clientSecret: registered,
    redirectUris: o.redirectUris,
    claims: { email: 'tim@privaterelay.appleid.com', email_verified: 'true', is_private_email: 'true' },
    route(path) {
      return ({ '/auth/authorize': '/auth', '/auth/token': '/token', '/auth/keys': '/jwks' } as Record<string, string>)[path];
    },
    async tokenFields(fields) {
      const secret = fields.get('client_secret') ?? '';
      const { protectedHeader } = await jwtVerify(secret, key, { issuer: o.teamId, subject: o.clientId, audience: APPLE, algorithms: ['ES256'] });
      if (protectedHeader.kid !== o.keyId) throw new Error(`the client secret's kid is not ${o.keyId}`);
      fields.set('client_secret', registered);
      return fields;
    },
  });
}
