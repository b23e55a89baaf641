// /metrics answers anyone (Prometheus scrapes it without credentials), so it must name no organization: the
// webhook backlog gauge used to carry organization_id labels, listing the organizations with a backlog.
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { newOrg } from '../support/auth.js';
import { waitFor } from '../support/regions.js';
import { email, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let silent: Server;
const sockets = new Set<Socket>();
before(async () => {
  // A receiver that takes the connection and never answers: the event stays behind, a backlog.
  silent = createServer((s) => void sockets.add(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  server = await startTestServer({ SERVICE_WEBHOOK_ALLOW_INSECURE: '1' });
});
after(async () => {
  for (const s of sockets) s.destroy();
  await server.stop();
  await new Promise((r) => silent.close(r));
});

test('the webhook backlog in /metrics is one unlabelled total that names no organization', async () => {
  const org = await newOrg(server, 'metrics-labels');
  const port = (silent.address() as { port: number }).port;
  const hook = await org.admin.post('/organizations/webhooks', { name: 'events', target_url: `http://127.0.0.1:${port}/hook`, timeout: '20s' });
  assert.equal(hook.status, 201, hook.text);
  assert.equal((await org.admin.post(`/organizations/webhooks/${hook.body.result.id}/triggers`, { trigger_type: 'event', trigger_name: 'PersonCreated_v1' })).status, 201);
  assert.equal((await org.admin.post('/persons', email('backlog@example.com'))).status, 201);
  let text = '';
  const depth = () => Number(/^webhook_event_queue_depth(?:\{[^}]*\})? (\d+)$/m.exec(text)?.[1] ?? 0);
  await waitFor(async () => {
    text = (await server.client.as('', '').get('/metrics')).text;
    return depth() > 0;
  }, 10_000, 'a webhook backlog in /metrics');
  assert.match(text, /^webhook_event_queue_depth \d+$/m);
  assert.ok(!text.includes(org.id), 'an organization ID in the unauthenticated /metrics');
  assert.doesNotMatch(text, /organization_id=/);
});
