// A child process for test/org/stop-snapshots.test.ts: recovers the organizations of a data dir, adds a person
// to each, then stops as the service does, with its final snapshots a commit each, and kills itself with SIGKILL
// right after the first half of them were packed and handed to LMDB (how many of those commits reach the disk
// is the kernel's business): a kill -9 in the middle of a clean stop.
//   node --import tsx test/support/stop-kill.ts <data dir>
import { openStore } from '../../src/wal/store.js';
import { createWal, type SnapshotItem, type Wal } from '../../src/wal/log.js';
import { testRegistry } from './registry.js';

const dir = process.argv[2] as string;
const store = openStore(dir, 'local', true);
const wal = createWal(store, (m) => console.log(`warning: ${m}`), { snapshotBatchBytes: 1 });

function* killHalfWay(items: Iterable<SnapshotItem>, total: number): Generator<SnapshotItem> {
  let n = 0;
  for (const item of items) {
    if (n++ === Math.floor(total / 2)) process.kill(process.pid, 'SIGKILL');
    yield item;
  }
}

const registry = testRegistry(store, { wal: { ...wal, saveSnapshots: (items) => wal.saveSnapshots(killHalfWay(items, [...registry.all()].length)) } satisfies Wal });
const { orgs } = await registry.recover();
console.log(`recovered ${orgs}`);
for (const actor of registry.all()) await actor.execute({ kind: 'CreatePerson', input: { handles: [{ type: 'username', value: `late-${actor.id}` }] } });
await registry.stop();
console.log('stopped without being killed');
