// Credentials and TLS for a region's nats-servers: a server configured with users (SERVICE_NATS_CREDS) and a
// certificate refuses a client without the credentials, or one that does not trust its CA; a service process
// given both connects, writes through the region's commit stream and serves.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { freePort } from '../support/free-port.js';
import { natsAvailable, startNatsServer } from '../support/nats.js';
import { spawnService } from '../support/process.js';
import { email, removeDir, tempDir } from '../support/server.js';

const dir = tempDir('identity-nats-security-');
const stops: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => {});
  removeDir(dir);
});

/** A CA and a server certificate for 127.0.0.1 signed by it (openssl, P-256, valid for a day). */
function certificates(): { ca: string; cert: string; key: string } {
  const f = (name: string) => join(dir, name);
  const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  run('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '1', '-subj', '/CN=region test CA');
  run('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=127.0.0.1');
  writeFileSync(f('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  run('x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('server.pem'), '-days', '1', '-extfile', f('san.ext'));
  return { ca: f('ca.pem'), cert: f('server.pem'), key: f('server.key') };
}

test('a server with users and TLS refuses a client without them; a service process with both writes through it', { skip: natsAvailable ? false : 'nats-server is not on PATH', timeout: 120_000 }, async () => {
  const { ca, cert, key } = certificates();
  const region = 'europe-belgium';
  const server = await startNatsServer({ region, port: await freePort(), httpPort: await freePort(), storeDir: join(dir, 'js'), users: [{ user: 'svc', password: 'region-secret' }], tls: { certFile: cert, keyFile: key } }, join(dir, 'nats'));
  stops.push(() => server.kill());
  const url = `tls://127.0.0.1:${server.plan.port}`;

  await assert.rejects(connect({ servers: url, tls: { caFile: ca }, reconnect: false, timeout: 5000 }), /Authorization Violation|authorization/i);
  await assert.rejects(connect({ servers: url, user: 'svc', pass: 'wrong', tls: { caFile: ca }, reconnect: false, timeout: 5000 }), /Authorization Violation|authorization/i);
  // without the CA the server's certificate is not trusted
  await assert.rejects(connect({ servers: url, user: 'svc', pass: 'region-secret', reconnect: false, timeout: 5000 }));
  const nc = await connect({ servers: url, user: 'svc', pass: 'region-secret', tls: { caFile: ca }, reconnect: false, timeout: 5000 });
  await nc.close();

  const service = await spawnService({ SERVICE_REGIONS: region, SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_URL: url, SERVICE_COMMIT: 'quorum', SERVICE_PROCESS_NAME: 'eu-1', SERVICE_NATS_CREDS: 'svc:region-secret', SERVICE_NATS_TLS_CA: ca, SERVICE_LEASE_TTL: '2s', SERVICE_LEASE_RENEW: '500ms' });
  stops.push(() => service.kill());
  const created = await service.client.post('/persons', email('over-tls@example.com'));
  assert.equal(created.status, 201, created.text);
  const health = await service.client.get('/health');
  assert.equal(health.body.result.role, 'writer');
});
