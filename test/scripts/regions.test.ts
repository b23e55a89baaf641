// scripts/regions.ts: starts three nats-servers and three service processes on one machine, answers
// all_regions across them, and `stop` ends every process it started, by PID.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { natsAvailable } from '../support/nats.js';
import { REPO_ROOT } from '../support/process.js';
import { ALL_REGIONS } from '../support/regions.js';
import { Client, email, removeDir, tempDir } from '../support/server.js';

const run = promisify(execFile);
const dir = tempDir('identity-regions-script-');
after(() => removeDir(dir));
const script = (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'scripts/regions.ts', ...args, '--dir', dir], { cwd: REPO_ROOT, timeout: 180_000 });

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('start brings up three regions over JetStream; stop ends every process it started', { skip: natsAvailable ? false : 'nats-server is not on PATH' }, async () => {
  // Below the ephemeral range (32768 and up), so that no port another test got from the kernel collides.
  const http = 20_000 + Math.floor(Math.random() * 9_000);
  const nats = 10_000 + Math.floor(Math.random() * 9_000);
  let pids: Array<{ name: string; pid: number }> = [];
  try {
    const out = await script('start', '--port', String(http), '--nats-port', String(nats));
    assert.match(out.stdout, /three regions running/);
    pids = JSON.parse(readFileSync(join(dir, 'pids.json'), 'utf8'));
    assert.equal(pids.length, 6);
    const log = readFileSync(join(dir, 'service-europe-belgium.log'), 'utf8');
    const org = /Service-OrgID:\s+(\S+)/.exec(log)?.[1] as string;
    const key = /Service-API-Key:\s+(\S+)/.exec(log)?.[1] as string;
    const origin = new Client(`http://127.0.0.1:${http}`, org, key);
    const res = await origin.post('/persons', email('demo@example.com'), ALL_REGIONS);
    assert.equal(res.status, 201, res.text);
    for (const i of [1, 2]) {
      const applied = await fetch(`http://127.0.0.1:${http + i}/replica/organizations/${org}`);
      assert.equal(applied.status, 200);
    }
  } finally {
    await script('stop');
  }
  for (const { name, pid } of pids) assert.equal(alive(pid), false, `${name} (pid ${pid}) stopped`);
});
