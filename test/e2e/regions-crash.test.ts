import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { replicaStoreName } from '../../src/regions/replica-store.js';
import { spawnService, type ServiceProcess } from '../support/process.js';
import { email, removeDir, ROOT_ORG, tempDir } from '../support/server.js';
import { ALL_REGIONS, caughtUp, OPERATOR_KEY, readLog, regionHealth, setLink, THREE_REGIONS, waitFor } from '../support/regions.js';

const dataDir = tempDir('identity-crash-');
const running = new Set<ServiceProcess>();
after(async () => {
  for (const service of running) await service.kill();
  removeDir(dataDir);
});

async function start(): Promise<ServiceProcess> {
  const service = await spawnService({ ...THREE_REGIONS, SERVICE_OPERATOR_KEY: OPERATOR_KEY }, dataDir);
  running.add(service);
  void service.process.exited.then(() => running.delete(service));
  return service;
}

test('killed with SIGKILL while replicas lag, the restarted service brings every replica to exactly the local WAL', { timeout: 60_000 }, async () => {
  const first = await start();
  const client = first.client;
  for (let i = 0; i < 10; i++) assert.equal((await client.post('/persons', email(`before-${i}@example.com`), ALL_REGIONS)).status, 201);

  // us-iowa is cut; asia-japan is slow, so batches are in flight at the moment of the kill.
  await setLink(first.base, 'us-iowa', { link: 'cut' });
  await setLink(first.base, 'asia-japan', { link: 'up', latency_ms: 3000 });
  for (let i = 0; i < 30; i++) {
    const r = i % 2 === 0 ? await client.post('/persons', email(`during-${i}@example.com`)) : await client.patch('/organizations/attributes/end_user_read_write', { [`k${i}`]: i });
    assert.ok(r.status === 201 || r.status === 204, `write ${i}: ${r.status}`);
  }
  const lagging = await regionHealth(first.base);
  assert.deepEqual(lagging.find((r) => r.name === 'us-iowa'), { name: 'us-iowa', state: 'cut', lag_entries: 30 });
  assert.ok((lagging.find((r) => r.name === 'asia-japan')?.lag_entries ?? 0) > 0, 'asia-japan lags');
  assert.equal((await first.kill('SIGKILL')).signal, 'SIGKILL');

  const second = await start();
  await waitFor(() => caughtUp(second.base), 30_000, 'both replicas to catch up after the restart');
  const persons = await second.client.get('/persons?limit=1');
  assert.equal(persons.body.meta.pagination.total_count, 25, 'every acknowledged write survived the kill');
  assert.equal((await second.stop()).code, 0);

  const local = await readLog(dataDir, 'local');
  assert.equal(local.get(ROOT_ORG)?.length, 41);
  for (const region of ['us-iowa', 'asia-japan']) {
    assert.deepEqual(await readLog(dataDir, replicaStoreName(region)), local, `${region}'s log is exactly the local log`);
  }
});
