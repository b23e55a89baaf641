// Every connection the service makes on a tenant's behalf goes through the address guard, not only webhooks:
// cloud connection endpoints (AWS, GCP, Active Directory) and SSO discovery. Each address form that reaches
// this machine or a private network is refused before connecting (a loopback listener receives nothing), and
// the refusal reads exactly like any other endpoint that gave no answer, so it cannot be used as a port scanner.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { systemResolver } from '../../src/lib/address-guard.js';
import { newOrg, type Org } from '../support/auth.js';
import { startTestServer, type TestServer } from '../support/server.js';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const KEY_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

let server: TestServer;
let listener: Server;
let port: number;
let connections = 0;
let org: Org;

before(async () => {
  listener = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  port = (listener.address() as { port: number }).port;
  // A name that resolves to loopback, as a tenant's own DNS record could; every other name as the system resolves it.
  server = await startTestServer({}, { resolveHost: (host) => (host.endsWith('rebind.test') ? Promise.resolve([{ address: '127.0.0.1', family: 4 }]) : systemResolver(host)) });
  org = await newOrg(server, 'outbound');
});
after(async () => {
  await server.stop();
  await new Promise((r) => listener.close(r));
});

/** Hosts that must never be connected to; the port is the loopback listener's. */
const FORBIDDEN = ['[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '0.0.0.0', '127.0.0.2', '[::1]', '10.0.0.1', '172.16.0.1', '192.168.1.1', '169.254.169.254', '[fd00::1]', 'localhost', 'localhost.', 'rebind.test', 'a.rebind.test'];

const CONNECTIONS: Record<'aws' | 'gcp' | 'active_directory', { provider: string; body: (host: string) => Record<string, unknown> }> = {
  aws: {
    provider: 'AWS',
    body: (host) => ({ config: { account_id: '123456789012', endpoint: `https://${host}:${port}` }, credentials: { access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: 'secret' } }),
  },
  gcp: {
    provider: 'GCP',
    body: (host) => ({ config: { project_id: 'sample-project', endpoint: `https://${host}:${port}` }, credentials: { service_account_key: { client_email: 'sa@sample-project.iam.gserviceaccount.com', private_key: KEY_PEM } } }),
  },
  active_directory: {
    provider: 'Active Directory',
    body: (host) => ({ config: { url: `ldaps://${host}:${port}`, base_dn: 'DC=example,DC=com', domain: 'example.com' }, credentials: { bind_dn: 'CN=admin,DC=example,DC=com', password: 'secret' } }),
  },
};

describe('cloud connection endpoints go through the address guard', () => {
  for (const [type, c] of Object.entries(CONNECTIONS)) {
    test(`${type}: every loopback, unspecified, private and link-local form is refused unreached, as an unreachable endpoint is`, async () => {
      const before = connections;
      const answers = new Map<string, string>();
      for (const host of FORBIDDEN) {
        const r = await org.admin.post('/cloud/connections', { name: `probe-${type}`, type, ...c.body(host) });
        assert.equal(r.status, 400, `${host}: ${r.text}`);
        answers.set(host, r.body.errors[0].message);
      }
      // A name that does not resolve gets the very same answer: nothing tells a closed door from a forbidden one.
      const nowhere = await org.admin.post('/cloud/connections', { name: `probe-${type}`, type, ...c.body('nowhere.invalid') });
      const expected = `the connection test failed: the ${c.provider} endpoint could not be reached`;
      assert.equal(nowhere.body.errors[0].message, expected);
      for (const [host, message] of answers) assert.equal(message, expected, host);
      assert.equal(connections, before, 'the loopback listener was connected to');
      assert.equal((await org.admin.get('/cloud/connections')).body.result.length, 0);
    });
  }
});

test('SSO discovery at a name that resolves to loopback is refused unreached, in the words of a name that does not resolve', async () => {
  const before = connections;
  const patched = await org.admin.patch('/organizations/config', { sso_allowed_redirect_uris: ['https://app.example/done'] });
  assert.equal(patched.status, 200, patched.text);
  const started = async (clientId: string, host: string) => {
    const cred = await org.admin.post('/organizations/sso/oidc/provider-credentials', { client_id: clientId, client_secret: 'secret', provider: 'service', options: { service: { organization_url: `https://${host}:${port}` } } });
    assert.equal(cred.status, 201, cred.text);
    const start = await fetch(`${server.base}/authenticate/oidc/${clientId}/start?org_id=${org.id}&redirect_uri=${encodeURIComponent('https://app.example/done')}`, { redirect: 'manual' });
    const text = await start.text();
    assert.equal(start.status, 502, text);
    return (JSON.parse(text).errors[0].message as string).replace(`${host}:${port}`, 'HOST');
  };
  const rebound = await started('rebound-client', 'idp.rebind.test');
  assert.equal(rebound, 'the provider at https://HOST could not be reached for OpenID discovery: fetch failed: the endpoint could not be reached');
  assert.equal(await started('nowhere-client', 'idp.nowhere.invalid'), rebound);
  assert.equal(connections, before, 'the loopback listener was connected to');
});
