// The soak of high availability inside a region (scripts/ha-soak.ts) for 30 seconds, over real nats-servers and
// service processes: kill -9 cycles of a random writer, standby or nats-server under a steady write load, and after
// each, every acknowledged write stored exactly once at the writer and nothing twice anywhere. A stall (nothing
// acknowledged for 30 s after a kill) fails it too. The long run is `npx tsx scripts/ha-soak.ts --cycles 200`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { natsAvailable } from '../support/nats.js';
import { runScript } from '../support/process.js';

test('30 seconds of soak: kill -9 of a random writer, standby or nats-server under load, no acknowledged write lost or doubled', { skip: natsAvailable ? false : 'nats-server is not on PATH', timeout: 300_000 }, async () => {
  const { code, out } = await runScript('scripts/ha-soak.ts', ['--seconds', '30', '--seed', '3'], 280_000);
  assert.equal(code, 0, out);
  const summary = out.trim().split('\n').at(-1) as string;
  assert.match(summary, /, 0 cycles with an acknowledged write lost or doubled/, out);
  console.log(`# ${summary}`);
});
