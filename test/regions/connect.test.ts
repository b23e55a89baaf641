// startRegions reaches each replica region the way it is told: here through a transport with no fault
// injection, as a real network's would be. Shipping and waits work the same; the /ops operation refuses.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../src/errors.js';
import { systemClock } from '../../src/lib/clock.js';
import { Metrics } from '../../src/lib/metrics.js';
import { createCommitBus } from '../../src/org/commit-bus.js';
import { connectInProcess, type ConnectRegion } from '../../src/regions/in-process.js';
import { startRegions } from '../../src/regions/regions.js';
import { createWal } from '../../src/wal/log.js';
import { openStore } from '../../src/wal/store.js';
import { waitFor } from '../support/regions.js';
import { testRegistry } from '../support/registry.js';
import { removeDir, tempDir } from '../support/server.js';

const dir = tempDir();
const store = openStore(dir, 'local', false);
after(async () => {
  await store.close();
  removeDir(dir);
});

test('a region reached without fault injection ships and acknowledges, and its link refuses fault injection with 409', async () => {
  const wal = createWal(store, () => {});
  const commits = createCommitBus(() => {});
  const registry = testRegistry(store, { wal, commits, regions: ['europe-belgium', 'us-iowa'] });
  await registry.bootstrap('org', 'key-0123456789abcdef');
  const config = { regions: ['europe-belgium', 'us-iowa'] as ('europe-belgium' | 'us-iowa')[], dataDir: dir, durability: 'nosync' as const, replicationLatencyMs: 0, replicationJitterMs: 0, snapshotInterval: 1000 };
  const inProcess = connectInProcess({ config, clock: systemClock, warn: () => {} });
  const connected: string[] = [];
  // The in-process replica without its simulated network's fault injection.
  const connect: ConnectRegion = async (region) => {
    connected.push(region);
    const { faults: _dropped, ...end } = await inProcess(region);
    return end;
  };
  const regions = await startRegions({ config, wal, registry, commits, metrics: new Metrics(), warn: () => {}, connect });
  try {
    assert.deepEqual(connected, ['us-iowa']);
    const actor = registry.get('org');
    assert.ok(actor);
    await actor.execute({ kind: 'CreatePerson', input: { handles: [{ type: 'username', value: 'ada' }] } });
    const offset = actor.state.offset;
    await regions.consistency.wait('org', offset, { level: 'all_regions', timeoutMs: 10_000 });
    assert.equal(regions.replica('us-iowa')?.applied('org'), offset);
    await waitFor(() => regions.views().every((v) => v.state === 'local' || v.state === 'streaming'), 30_000, 'the link to stream');

    assert.throws(
      () => regions.setLink('us-iowa', { up: false }),
      (e: unknown) => e instanceof ServiceError && e.code === 'ERR_CONFLICT' && e.status === 409 && /us-iowa/.test(e.message),
    );
    assert.equal(regions.link('us-iowa')?.state(), 'streaming', 'nothing changed');
    assert.throws(() => regions.setLink('asia-japan', { up: false }), (e: unknown) => e instanceof ServiceError && e.code === 'ERR_NOT_FOUND');
  } finally {
    await regions.stop();
  }
});
