import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { replicaStoreName } from '../../src/regions/replica-store.js';
import { Client, email, removeDir, ROOT_KEY, ROOT_ORG, tempDir } from '../support/server.js';
import { ALL_REGIONS, caughtUp, OPERATOR_KEY, readLog, regionHealth, setLink, THREE_REGIONS, waitFor } from '../support/regions.js';

const dataDir = tempDir('identity-crash-');
const children = new Set<ChildProcess>();
after(() => {
  for (const child of children) child.kill('SIGKILL');
  removeDir(dataDir);
});

/** Starts `node --import tsx src/main.ts` on port 0 and resolves with its address once it listens. */
async function startChild(): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      ...THREE_REGIONS,
      SERVICE_PORT: '0',
      SERVICE_DATA_DIR: dataDir,
      SERVICE_ROOT_ORG_ID: ROOT_ORG,
      SERVICE_ROOT_API_KEY: ROOT_KEY,
      SERVICE_OPERATOR_KEY: OPERATOR_KEY,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let output = '';
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start within 20 s:\n${output}`)), 20_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.on('exit', (code) => reject(new Error(`the service exited with ${code}:\n${output}`)));
  });
  return { child, base };
}

async function exited(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  const done = once(child, 'exit');
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await done;
  clearTimeout(timer);
}

test('killed with SIGKILL while replicas lag, the restarted service brings every replica to exactly the local WAL', { timeout: 60_000 }, async () => {
  const first = await startChild();
  const client = new Client(first.base, ROOT_ORG, ROOT_KEY);
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
  await exited(first.child, 'SIGKILL');

  const second = await startChild();
  await waitFor(() => caughtUp(second.base), 15_000, 'both replicas to catch up after the restart');
  const persons = await new Client(second.base, ROOT_ORG, ROOT_KEY).get('/persons?limit=1');
  assert.equal(persons.body.meta.pagination.total_count, 25, 'every acknowledged write survived the kill');
  await exited(second.child, 'SIGTERM');

  const local = await readLog(dataDir, 'local');
  assert.equal(local.get(ROOT_ORG)?.length, 41);
  for (const region of ['us-iowa', 'asia-japan']) {
    assert.deepEqual(await readLog(dataDir, replicaStoreName(region)), local, `${region}'s log is exactly the local log`);
  }
});
