// A process of a region further behind than the region's commit stream retains catches up from the writer's
// snapshot, over real nats-servers and service processes: a standby stopped while many writes were made and the
// stream's old messages dropped (purged here, as SERVICE_NATS_RETENTION's max_age would), and a new process with an
// empty data dir joining after that, each with the organization written on after the drop or idle since. Each
// installs the writer's snapshot (taken from a log compacted up to its last periodic one; when written on, while the
// writer goes on writing), follows the stream on from it with the writer's event chain, and once the writer is
// killed serves the organization with every acknowledged write present exactly once.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { commitStreamName } from '../../src/regions/ha/commit-stream.js';
import { chainHead, createPerson, HA_REGION, health, personsAt, startHaProcess } from '../support/ha.js';
import { natsAvailable, startNatsCluster, type NatsServer } from '../support/nats.js';
import type { ServiceProcess } from '../support/process.js';
import { waitFor } from '../support/regions.js';
import { removeDir, tempDir } from '../support/server.js';

const dir = tempDir('identity-ha-snapshot-');
const running: Array<{ kill(): Promise<unknown> }> = [];
after(async () => {
  for (const p of running.reverse()) await p.kill().catch(() => {});
  removeDir(dir);
});

const TTL_MS = 2000;
/** Snapshots and compaction often: the writer serves its snapshot from a log compacted up to its last one. */
const COMPACTING = { SERVICE_SNAPSHOT_INTERVAL: '25', SERVICE_WAL_COMPACT_INTERVAL_MS: '250' };
const skip = natsAvailable ? false : 'nats-server is not on PATH';

/** Process names as the default makes them (host name and port): each snapshot subject escapes them into one token. */
async function cluster(name: string): Promise<{ nats: NatsServer[]; start(process: string): Promise<ServiceProcess> }> {
  const clusterDir = join(dir, name);
  const nats = await startNatsCluster(HA_REGION, clusterDir);
  for (const n of nats) running.push({ kill: () => n.kill() });
  return { nats, start: (process) => startHaProcess(process, nats, clusterDir, running, TTL_MS, COMPACTING) };
}

/** Persons created through `base` by four clients at once, `until` there are that many or it says so; resolves to their ids, all acknowledged. */
async function write(base: string, prefix: string, until: number | (() => boolean)): Promise<string[]> {
  const ids: string[] = [];
  let n = 0;
  const client = async () => {
    while (typeof until === 'number' ? n < until : !until()) {
      const handle = `${prefix}-${n++}@example.com`;
      for (;;) {
        const r = await createPerson(base, handle);
        if (r.status === 201) {
          ids.push(r.id as string);
          break;
        }
        await new Promise((res) => setTimeout(res, 50));
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, client));
  return ids;
}

/** Drops every message the region's commit stream holds, as its retention would once they are old enough. */
async function dropRetained(nats: NatsServer[]): Promise<void> {
  const nc = await connect({ servers: nats.map((n) => n.url) });
  try {
    const purged = await (await jetstreamManager(nc)).streams.purge(commitStreamName(HA_REGION));
    assert.ok(purged.purged > 0, 'the stream held messages to drop');
  } finally {
    await nc.close();
  }
}

const offset = async (p: ServiceProcess): Promise<number> => (await health(p.base)).lease.offset;

/**
 * `follower` is behind the stream's retention: it must install `writer`'s snapshot and catch up; then `writer` is
 * killed, `follower` takes the lease and serves, and every acknowledged person is on it exactly once.
 */
async function caughtUpAndServes(follower: ServiceProcess, writer: ServiceProcess, acked: string[]): Promise<void> {
  const output = () => follower.process.output().split('\n').filter((l) => !l.startsWith('POST') && !l.startsWith('GET')).join('\n').slice(-3000);
  await waitFor(async () => (await offset(follower)) === (await offset(writer)), 30_000, 'the process behind the retention to catch up').catch(async (error: unknown) => {
    throw new Error(`${(error as Error).message}: at entry ${await offset(follower)}, the writer at ${await offset(writer)}; it said: ${output()}`);
  });
  const h = await health(follower.base);
  assert.equal(h.role, 'standby');
  assert.ok(h.snapshots_installed >= 1, `/health says a snapshot was installed: ${JSON.stringify(h)}`);
  assert.match(await (await fetch(`${follower.base}/metrics`)).text(), /^region_snapshots_installed [1-9]/m);
  assert.match(follower.process.output(), /installed the snapshot of \S+ at entry \d+/);
  // The event chain goes on from the writer's link: the next event either process writes chains from the same one.
  assert.deepEqual(await chainHead(follower.base), await chainHead(writer.base), 'the same event head and chain link as the writer');

  await writer.kill('SIGKILL');
  let served: string | undefined;
  const deadline = performance.now() + TTL_MS + 30_000;
  while (!served && performance.now() < deadline) {
    const r = await createPerson(follower.base, `after-kill-${performance.now()}@example.com`);
    if (r.status === 201) served = r.id;
    else await new Promise((res) => setTimeout(res, 100));
  }
  assert.ok(served, `the process caught up from the snapshot serves once the writer is gone; it said: ${output()}`);
  acked.push(served as string, ...(await write(follower.base, 'new-writer', 20)));
  assert.doesNotMatch(follower.process.output(), /chain restarts from zero/);

  const stored = await personsAt(follower.base);
  const counts = new Map<string, number>();
  for (const id of stored) counts.set(id, (counts.get(id) ?? 0) + 1);
  for (const id of acked) assert.equal(counts.get(id), 1, `acknowledged person ${id} stored ${counts.get(id) ?? 0} times`);
  assert.equal(new Set(stored).size, stored.length, 'no person twice');
}

// Written on after the drop, the stream shows the gap to the follower; idle since, it holds no message of the
// organization at all, and the process compares its log with the writer's where its follower starts.
for (const [after, written] of [['written on after the drop', 10], ['idle since the drop', 0]] as const) {
  test(`a standby stopped longer than the commit stream retains installs the writer's snapshot, then serves every acknowledged write once (${after})`, { skip, timeout: 240_000 }, async () => {
    const { nats, start } = await cluster(`stopped-${written}`);
    const a = await start('a.example:8080');
    const b = await start('b.example:8080');
    await waitFor(async () => (await health(a.base)).lease.writing || (await health(b.base)).lease.writing, 20_000, 'a writer of the root organization');
    const [writer, standby] = (await health(a.base)).lease.writing ? [a, b] : [b, a];
    const acked = await write(writer.base, 'before-stop', 20);
    await waitFor(async () => (await offset(standby)) === (await offset(writer)), 20_000, 'the standby to follow');

    await standby.kill('SIGKILL');
    acked.push(...(await write(writer.base, 'while-stopped', 300)));
    await dropRetained(nats);
    acked.push(...(await write(writer.base, 'after-retention', written)));

    // Written on: the writer goes on writing while the standby starts, until it has installed the snapshot.
    let installed = written === 0;
    const meanwhile = write(writer.base, 'while-installing', () => installed);
    const restarted = await standby.restart();
    running.push(restarted);
    await waitFor(async () => installed || (await health(restarted.base)).snapshots_installed >= 1, 30_000, 'the snapshot installed');
    installed = true;
    const during = await meanwhile;
    if (written > 0) console.log(`# ${during.length} persons written while the process started and installed the snapshot`);
    acked.push(...during);
    await caughtUpAndServes(restarted, writer, acked);
  });

  test(`a new process with an empty data dir joining after the commit stream dropped old messages installs the writer's snapshot, then serves every acknowledged write once (${after})`, { skip, timeout: 240_000 }, async () => {
    const { nats, start } = await cluster(`joining-${written}`);
    const writer = await start('a.example:8080');
    await waitFor(async () => (await health(writer.base)).lease.writing, 20_000, 'a writer of the root organization');
    const acked = await write(writer.base, 'before-join', 300);
    await dropRetained(nats);
    acked.push(...(await write(writer.base, 'after-retention', written)));

    let installed = written === 0;
    const meanwhile = write(writer.base, 'while-joining', () => installed);
    const joined = await start('c.example:8080');
    await waitFor(async () => installed || (await health(joined.base)).snapshots_installed >= 1, 30_000, 'the snapshot installed');
    installed = true;
    const during = await meanwhile;
    if (written > 0) console.log(`# ${during.length} persons written while the process started and installed the snapshot`);
    acked.push(...during);
    await caughtUpAndServes(joined, writer, acked);
  });
}
