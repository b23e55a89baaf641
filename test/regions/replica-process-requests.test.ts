// A replica region's process under JetStream answers requests it cannot read with a 400 and keeps serving
// (a URIError in its handler used to end the process), and lists organizations only to the operator.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { jetstreamEnv, natsAvailable, startNatsRegions, type NatsRegions } from '../support/nats.js';
import { spawnService, type ServiceProcess } from '../support/process.js';
import { OPERATOR_KEY } from '../support/regions.js';
import { removeDir, ROOT_ORG, tempDir } from '../support/server.js';

const REGIONS = ['europe-belgium', 'us-iowa'] as const;
const skip = natsAvailable ? false : 'nats-server is not on PATH (.ci/run installs it)';
const dir = tempDir('identity-replica-requests-');
let nats: NatsRegions;
let origin: ServiceProcess;
let replica: ServiceProcess;

before(async () => {
  if (skip) return;
  nats = await startNatsRegions(REGIONS, join(dir, 'nats'));
  const env = (region: string) => ({ ...jetstreamEnv(nats, REGIONS, region), SERVICE_OPERATOR_KEY: OPERATOR_KEY });
  origin = await spawnService(env(REGIONS[0]), join(dir, 'origin'));
  replica = await spawnService(env(REGIONS[1]), join(dir, 'replica'));
});

after(async () => {
  for (const p of [origin, replica]) await p?.kill();
  await nats?.stop();
  removeDir(dir);
});

/** A GET with the path sent exactly as given (fetch would normalise it). */
function rawGet(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.path = path;
    req.on('error', reject).end();
  });
}

test('a malformed percent-encoding gets a 400 and the replica process goes on serving', { skip }, async () => {
  const bad = await rawGet(replica.base, '/replica/organizations/%E0%A4%A');
  assert.equal(bad.status, 400, bad.body);
  assert.match(JSON.parse(bad.body).errors[0].message, /percent-encoding/);
  const health = await rawGet(replica.base, '/health');
  assert.equal(health.status, 200);
  assert.equal(replica.process.child.exitCode, null);
});

test("a replica's organization list is the operator's", { skip }, async () => {
  assert.equal((await rawGet(replica.base, '/replica/organizations')).status, 401);
  assert.equal((await rawGet(replica.base, '/replica/organizations', { 'service-operator-key': 'wrong-key-0123456789' })).status, 401);
  const listed = await rawGet(replica.base, '/replica/organizations', { 'service-operator-key': OPERATOR_KEY });
  assert.equal(listed.status, 200, listed.body);
  assert.ok(Array.isArray(JSON.parse(listed.body).result));
  // One organization by its ID stays readable, as the consistency checks read it.
  assert.notEqual((await rawGet(replica.base, `/replica/organizations/${ROOT_ORG}`)).status, 400);
});
