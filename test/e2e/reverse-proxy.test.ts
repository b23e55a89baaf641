// Debian's nginx in front of the service with the documented configuration (docs/operations.md): a sign-in with a sync hook, a mint
// and a WS /events subscription through it, and the client address the hook and the events report.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { JWTPayload } from 'jose';
import { Agent } from 'undici';
import { startReceiver, type Receiver } from '../../scripts/webhook-receiver.js';
import { emailHandle, newOrg, personWithPassword, type Org } from '../support/auth.js';
import { nginxInstalled, documentedNginxConfig, startNginx, type Nginx } from '../support/nginx.js';
import { Client, removeDir, startTestServer, type TestServer } from '../support/server.js';
import { Subscriber } from '../support/ws.js';
import { freePort } from '../support/free-port.js';

const PASSWORD = 'correct horse battery';
/** The client's own loopback address, other than the 127.0.0.1 nginx connects from (Linux routes 127/8 to lo). */
const CLIENT_IP = '127.0.0.2';
const DIRECT_IP = '127.0.0.3';

describe('behind nginx, with the documented configuration', { skip: nginxInstalled ? false : 'nginx is not installed' }, () => {
  let server: TestServer;
  let nginx: Nginx;
  let org: Org;
  let personId: string;
  let receiver: Receiver;
  const hookIps: string[] = [];
  const agents: Agent[] = [];

  /** A client of `base` whose connections leave from `localAddress`. */
  function clientFrom(base: string, localAddress: string, apiKey = ''): Client {
    // undici's own connector drops localAddress: connect the socket here.
    const agent = new Agent({
      keepAliveTimeout: 1000,
      connect: (opts, callback) => {
        const socket = connect({ host: opts.hostname, port: Number(opts.port), localAddress });
        socket.once('connect', () => callback(null, socket));
        socket.once('error', (error) => callback(error, null));
        return socket;
      },
    });
    agents.push(agent);
    return new Client(base, org.id, apiKey, agent);
  }

  before(async () => {
    server = await startTestServer({ SERVICE_TRUSTED_PROXIES: '127.0.0.1', SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
    const listenPort = await freePort();
    nginx = await startNginx(documentedNginxConfig(readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8'), server.service.port, listenPort), listenPort);
    org = await newOrg(server, 'proxied');
    personId = await personWithPassword(org, 'ada@example.com', PASSWORD);
    receiver = await startReceiver({
      serviceUrl: server.base,
      orgId: org.id,
      path: '/hook',
      claims: (payload: JWTPayload) => {
        const content = payload['trigger_content'] as { request_metadata: { client_ip_address: string } };
        hookIps.push(content.request_metadata.client_ip_address);
        return { via: 'proxy' };
      },
    });
    const w = await org.admin.post('/organizations/webhooks', { name: 'hook', target_url: receiver.url, timeout: '10s' });
    assert.equal(w.status, 201, w.text);
    const t = await org.admin.post(`/organizations/webhooks/${w.body.result.id}/triggers`, { trigger_type: 'sync_hook', trigger_name: 'token_minted' });
    assert.equal(t.status, 201, t.text);
  });

  after(async () => {
    await nginx?.stop();
    await receiver?.close();
    for (const a of agents) await a.close();
    if (server) {
      await server.stop();
      removeDir(server.dataDir);
    }
  });

  test('sign-in: the hook and AuthenticationSucceeded report the client, not nginx nor a forged X-Forwarded-For', async () => {
    const events = await Subscriber.open(nginx.base, { org: org.id, key: org.admin.apiKey });
    try {
      const user = clientFrom(nginx.base, CLIENT_IP);
      const r = await user.post('/authenticate/password', { handle: emailHandle('ada@example.com'), password: PASSWORD }, { 'X-Forwarded-For': '203.0.113.9' });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(hookIps, [CLIENT_IP]);
      const succeeded = () => events.frames.find((f) => JSON.stringify(f.event).includes('AuthenticationSucceeded'));
      await events.waitUntil(() => succeeded() !== undefined, 30_000, 'AuthenticationSucceeded');
      const event = succeeded()?.event;
      assert.equal(event.analytics_metadata?.client_ip_address ?? event.analyticsMetadata?.clientIpAddress, CLIENT_IP, JSON.stringify(event));
      assert.equal(event.person_id ?? event.personId, personId);
    } finally {
      await events.close();
    }
  });

  test('mint-token through nginx', async () => {
    const admin = clientFrom(nginx.base, CLIENT_IP, org.admin.apiKey);
    const r = await admin.post(`/persons/${personId}/mint-token`);
    assert.equal(r.status, 201, r.text);
    assert.equal(typeof r.body.result, 'string');
  });

  test('straight to the service, from an address that is no trusted proxy, X-Forwarded-For is ignored', async () => {
    hookIps.length = 0;
    const direct = clientFrom(server.base, DIRECT_IP);
    const r = await direct.post('/authenticate/password', { handle: emailHandle('ada@example.com'), password: PASSWORD }, { 'X-Forwarded-For': '203.0.113.9' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(hookIps, [DIRECT_IP]);
  });
});
