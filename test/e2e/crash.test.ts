// kill -9 at a random moment loses no acknowledged write: a real service process, concurrent writers in three
// organizations, SIGKILL, restart on the same data dir, every 2xx checked. CRASH_SEED=<n> repeats a run's kill delays.
// SIGKILL leaves the page cache intact, so this proves the acknowledgement follows the LMDB commit; what fsync
// adds against power loss cannot be observed from inside one machine.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCrashLoop, type CrashLoop } from '../support/crash-cycle.js';

const seed = Number(process.env['CRASH_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const CYCLES = 4;

let loop: CrashLoop;
before(async () => {
  loop = await createCrashLoop({ seed, orgs: 3, writersPerOrg: 4, minAcks: 30, maxKillDelayMs: 600 });
});
after(() => loop?.close());

for (let i = 1; i <= CYCLES; i++) {
  test(`cycle ${i}/${CYCLES}: every write acknowledged before SIGKILL is there after the restart`, async (t) => {
    const r = await loop.cycle();
    const acked = r.acknowledged.persons + r.acknowledged.attributes + r.acknowledged.groups;
    t.diagnostic(
      `seed ${seed}: killed after ${Math.round(r.killAfterMs)} ms, ${acked} writes acknowledged, ` +
        `${r.inFlightApplied}/${r.inFlight} in flight applied, ${r.persons} persons; ${r.recovery}`,
    );
    assert.ok(acked >= 30, 'the cycle wrote before the kill');
    assert.match(r.recovery, /^recovered 3 organization\(s\)/);
  });
}
