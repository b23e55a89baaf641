// SERVICE_REGION_TRANSPORT and its settings: simulated by default, jetstream with the timers SCALE.md
// measured, and every bad value refused naming the variable.
import { hostname } from 'node:os';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { natsServerConfig } from '../../src/regions/jetstream/nats-config.js';

const REGIONS = { SERVICE_REGIONS: 'europe-belgium,us-iowa' };

test('simulated by default; jetstream with its defaults: origin region, 7 d retention, pull expiry 5 s, ping 2 s', () => {
  assert.deepEqual(loadConfig(REGIONS).regionTransport, { kind: 'simulated' });
  assert.deepEqual(loadConfig({ ...REGIONS, SERVICE_REGION_TRANSPORT: 'jetstream' }).regionTransport, {
    kind: 'jetstream',
    region: 'europe-belgium',
    natsUrl: 'nats://127.0.0.1:4222',
    replicas: 1,
    retentionMs: 7 * 86_400_000,
    pullExpiresMs: 5000,
    pingMs: 2000,
    security: {},
    commit: 'local',
    processName: `${hostname()}:8080`,
    leaseTtlMs: 5000,
    leaseRenewMs: 1000,
  });
  const replica = loadConfig({ ...REGIONS, SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_REGION: 'us-iowa', SERVICE_NATS_RETENTION: '30m', SERVICE_ORIGIN_URL: 'https://a.example' }).regionTransport;
  assert.equal(replica?.kind === 'jetstream' && replica.region, 'us-iowa');
  assert.equal(replica?.kind === 'jetstream' && replica.retentionMs, 1_800_000);
  assert.equal(replica?.kind === 'jetstream' && replica.originUrl, 'https://a.example');
  const cluster = loadConfig({ ...REGIONS, SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_URL: 'nats://10.0.0.1:4222,nats://10.0.0.2:4222,nats://10.0.0.3:4222', SERVICE_NATS_REPLICAS: '3' }).regionTransport;
  assert.equal(cluster?.kind === 'jetstream' && cluster.replicas, 3);
  assert.equal(cluster?.kind === 'jetstream' && cluster.natsUrl.split(',').length, 3);
  // a cluster makes quorum commit the default; SERVICE_COMMIT=local keeps one writer per region as before
  assert.equal(cluster?.kind === 'jetstream' && cluster.commit, 'quorum');
  const local = loadConfig({ ...REGIONS, SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_REPLICAS: '3', SERVICE_COMMIT: 'local', SERVICE_LEASE_TTL: '3s', SERVICE_LEASE_RENEW: '500ms', SERVICE_PROCESS_NAME: 'eu-1', SERVICE_PUBLIC_URL: 'https://eu-1.example/' }).regionTransport;
  const secured = loadConfig({ ...REGIONS, SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_CREDS: 'svc:pa:ss', SERVICE_NATS_TLS_CA: '/ca.pem' }).regionTransport;
  assert.deepEqual(secured?.kind === 'jetstream' && secured.security, { auth: { user: 'svc', pass: 'pa:ss' }, tls: { caFile: '/ca.pem' } });
  assert.deepEqual(local?.kind === 'jetstream' && [local.commit, local.leaseTtlMs, local.leaseRenewMs, local.processName, local.publicUrl], ['local', 3000, 500, 'eu-1', 'https://eu-1.example']);
});

test('bad values are refused naming the variable', () => {
  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ SERVICE_REGION_TRANSPORT: 'kafka' }, /SERVICE_REGION_TRANSPORT must be simulated or jetstream/],
    [{ SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_REGION: 'asia-japan' }, /SERVICE_REGION "asia-japan" is not one of SERVICE_REGIONS/],
    [{ SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_URL: 'http://x' }, /SERVICE_NATS_URL/],
    [{ SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_RETENTION: '10s' }, /SERVICE_NATS_RETENTION/],
    [{ SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_PULL_EXPIRES: '500ms' }, /SERVICE_NATS_PULL_EXPIRES/],
    [{ SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_PING: 'often' }, /SERVICE_NATS_PING/],
    [{ SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_REPLICAS: '2' }, /SERVICE_NATS_REPLICAS must be 1 or 3/],
    [{ SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_COMMIT: 'async' }, /SERVICE_COMMIT must be local or quorum/],
    [{ SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_CREDS: 'nobody' }, /SERVICE_NATS_CREDS must be user:password or the path of a .creds file/],
    [{ SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_TLS_CERT: '/c.pem' }, /SERVICE_NATS_TLS_CERT and SERVICE_NATS_TLS_KEY go together/],
    [{ SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_LEASE_TTL: '2s', SERVICE_LEASE_RENEW: '1500ms' }, /SERVICE_LEASE_RENEW .* at most half of SERVICE_LEASE_TTL/],
    [{ SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_LEASE_TTL: '100ms' }, /SERVICE_LEASE_TTL/],
    [{ SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_PUBLIC_URL: 'eu-1:8080' }, /SERVICE_PUBLIC_URL/],
    [{ SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_NATS_URL: 'nats://a:1,http://b' }, /SERVICE_NATS_URL/],
  ];
  for (const [env, message] of bad) assert.throws(() => loadConfig({ ...REGIONS, ...env }), (e: unknown) => e instanceof ConfigError && message.test(e.message), JSON.stringify(env));
});

test('a region server: its own JetStream domain, pings 2 s × 3; the hub listens for leafnodes, a leaf dials it', () => {
  const hub = natsServerConfig({ region: 'europe-belgium', port: 4222, httpPort: 8222, storeDir: '/d', leafPort: 7422, leafAdvertise: 'hub.example:7422' });
  assert.match(hub, /domain: "europe-belgium"/);
  assert.match(hub, /ping_interval: "2s"\nping_max: 3/);
  assert.match(hub, /leafnodes \{ listen: "127.0.0.1:7422", advertise: "hub.example:7422" \}/);
  const leaf = natsServerConfig({ region: 'us-iowa', port: 4223, httpPort: 8223, storeDir: '/e', hubUrl: 'nats-leaf://hub.example:7422' });
  assert.match(leaf, /remotes: \[ \{ url: "nats-leaf:\/\/hub.example:7422" \} \]/);
  assert.doesNotMatch(leaf, /listen: "127.0.0.1:7422"/);
});
