// An organization signing in through a loopback OpenID provider (oidc-provider) as its `service` credential,
// with the page that receives the token on its redirect allow-list, and a browser-like client to walk it.
import assert from 'node:assert/strict';
import { newOrg, type Org } from './auth.js';
import { startOidcProvider, WalkingClient, type TestOidcProvider } from './oidc-provider.js';
import type { TestServer } from './server.js';

export interface SsoSetup {
  org: Org;
  idp: TestOidcProvider;
  browser: WalkingClient;
  /** the start of a sign-in to `app`, with `extra` query parameters appended */
  startUrl(extra?: string): string;
  close(): Promise<void>;
}

/** A fresh organization (named after `tag`) with a fresh provider; `options` go into the credential's `service` options. */
export async function ssoSetup(server: TestServer, tag: string, app: string, options: Record<string, unknown> = {}): Promise<SsoSetup> {
  const org = await newOrg(server, tag);
  const idp = await startOidcProvider({ redirectUris: [`${server.base}/authenticate/oidc/callback`] });
  const config = await org.admin.patch('/organizations/config', { sso_allowed_redirect_uris: [app] });
  assert.equal(config.status, 200, config.text);
  const cred = await org.admin.post('/organizations/sso/oidc/provider-credentials', {
    client_id: idp.clientId,
    client_secret: idp.clientSecret,
    provider: 'service',
    options: { service: { organization_url: idp.issuer, ...options } },
  });
  assert.equal(cred.status, 201, cred.text);
  const browser = new WalkingClient();
  return {
    org,
    idp,
    browser,
    startUrl: (extra = '') => `${server.base}/authenticate/oidc/${idp.clientId}/start?org_id=${org.id}&redirect_uri=${encodeURIComponent(app)}${extra}`,
    async close() {
      await browser.close();
      await idp.stop();
    },
  };
}
