// scripts/regions.ts (`npm run regions`): `up` brings up two regions of a JetStream cluster of three
// nats-servers each and prints the deployment as one JSON line; writes go on with one server of the origin's
// cluster killed and `start` brings it back; `cut` black-holes a replica region (all_regions answers 408) and
// `heal` restores it; `down` ends every process it started, by PID. Each verb prints one JSON line.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { natsAvailable } from '../support/nats.js';
import { REPO_ROOT } from '../support/process.js';
import { allRegions, waitFor } from '../support/regions.js';
import { Client, email, removeDir, tempDir } from '../support/server.js';

const run = promisify(execFile);
const dir = tempDir('identity-regions-script-');
after(() => removeDir(dir));

/** Runs one verb and parses the one line it prints. */
async function regions(...args: string[]): Promise<any> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/regions.ts', ...args, '--dir', dir], { cwd: REPO_ROOT, timeout: 180_000 }).catch((error: { stdout?: string; message: string }) => {
    throw new Error(`regions ${args.join(' ')}: ${error.stdout ?? ''} ${error.message}`);
  });
  const lines = stdout.trim().split('\n');
  assert.equal(lines.length, 1, `one line: ${stdout}`);
  return JSON.parse(lines[0] as string);
}

/**
 * POST /persons, again while the answer is 503: on a cluster of three the origin writes through its region's
 * quorum, and while a restarted server rejoins (a stream leader elected again) a write may be refused for a moment.
 */
async function createPerson(client: Client, handle: string, headers: Record<string, string>): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const res = await client.post('/persons', email(handle), headers);
    if (res.status !== 503 || attempt >= 60) return res.status;
    await new Promise((r) => setTimeout(r, 500));
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('up, kill, start, cut, heal and down over two regions of three nats-servers each', { skip: natsAvailable ? false : 'nats-server is not on PATH' }, async () => {
  let deployment: any;
  const pids: number[] = [];
  try {
    deployment = await regions('up', '--regions', 'europe-belgium,us-iowa', '--nats', '3', '--one-way-ms', '2');
    assert.equal(deployment.origin, 'europe-belgium');
    assert.deepEqual(deployment.regions.map((r: any) => r.name), ['europe-belgium', 'us-iowa']);
    for (const r of deployment.regions) {
      assert.deepEqual(r.nats.map((n: any) => n.name), [1, 2, 3].map((i) => `${r.name}-nats-${i}`));
      assert.deepEqual(r.processes.map((p: any) => p.name), [`${r.name}-1`]);
      assert.equal(r.url, r.processes[0].url);
      pids.push(...r.nats.map((n: any) => n.pid), ...r.processes.map((p: any) => p.pid));
      if (r.proxy_pid) pids.push(r.proxy_pid);
    }
    assert.equal(typeof deployment.regions[1].proxy_pid, 'number');
    assert.ok(typeof deployment.operator_key === 'string' && deployment.operator_key.length >= 16);
    const origin = new Client(deployment.regions[0].url, deployment.root.org_id, deployment.root.api_key);

    assert.equal(await createPerson(origin, 'first@example.com', allRegions(30)), 201);

    const killed = await regions('kill', 'europe-belgium-nats-2');
    assert.equal(killed.killed, 'europe-belgium-nats-2');
    assert.equal(alive(killed.pid), false);
    // the stream keeps a quorum of two: writes still reach the replica region
    assert.equal(await createPerson(origin, 'one-server-down@example.com', allRegions(30)), 201);
    const started = await regions('start', 'europe-belgium-nats-2');
    assert.equal(started.started, 'europe-belgium-nats-2');
    pids.push(started.pid);

    const cut = await regions('cut', 'us-iowa');
    assert.deepEqual(cut, { cut: 'us-iowa', mode: 'blackhole', proxies: ['us-iowa-proxy'] });
    assert.equal(await createPerson(origin, 'while-cut@example.com', allRegions(1)), 408);
    const healed = await regions('heal', 'us-iowa');
    assert.equal(healed.heal, 'us-iowa');
    const replica = deployment.regions[1].url;
    await waitFor(async () => {
      const res = await fetch(`${replica}/replica/organizations/${deployment.root.org_id}`);
      const origin = await fetch(`${deployment.regions[0].url}/health`).then((r) => r.json() as Promise<any>);
      return res.ok && origin.result.regions.every((r: any) => r.lag_entries === 0);
    }, 60_000, 'us-iowa to catch up after the heal');

    const refused = await regions('cut', 'us-iowa-1').catch((error: Error) => error.message);
    assert.match(String(refused), /not in network namespaces/);
  } finally {
    const down = await regions('down');
    assert.ok(Array.isArray(down.down));
  }
  for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} stopped`);
});
