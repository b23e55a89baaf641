// A longer kill -9 soak for operators: the crash test's loop for as many cycles as asked, one line per cycle.
//   npx tsx scripts/crash-loop.ts --cycles 50 [--orgs 3] [--writers 4] [--max-delay-ms 1500] [--seed N] [--nosync]
// CRASH_CYCLES and CRASH_SEED work too. Exits 1 at the first acknowledged write that did not survive.
import { parseArgs } from 'node:util';
import { createCrashLoop } from '../test/support/crash-cycle.js';

const { values } = parseArgs({
  options: {
    cycles: { type: 'string', default: process.env['CRASH_CYCLES'] ?? '20' },
    orgs: { type: 'string', default: '3' },
    writers: { type: 'string', default: '4' },
    'min-acks': { type: 'string', default: '30' },
    'max-delay-ms': { type: 'string', default: '1500' },
    seed: { type: 'string', default: process.env['CRASH_SEED'] ?? String(Math.floor(Math.random() * 2 ** 31)) },
    nosync: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  console.log('usage: npx tsx scripts/crash-loop.ts [--cycles N] [--orgs N] [--writers N (1-6)] [--min-acks N] [--max-delay-ms N] [--seed N] [--nosync]');
  process.exit(0);
}

function int(name: keyof typeof values): number {
  const raw = String(values[name]);
  if (!/^\d+$/.test(raw)) {
    console.error(`--${name} must be a non-negative integer, got "${raw}"`);
    process.exit(2);
  }
  return Number(raw);
}

const cycles = int('cycles');
const seed = int('seed');
const loop = await createCrashLoop({
  seed,
  orgs: int('orgs'),
  writersPerOrg: int('writers'),
  minAcks: int('min-acks'),
  maxKillDelayMs: int('max-delay-ms'),
  env: values.nosync ? { SERVICE_DURABILITY: 'nosync' } : {},
});
console.log(`crash loop: ${cycles} cycles, seed ${seed}, data in ${loop.dataDir}${values.nosync ? ', SERVICE_DURABILITY=nosync' : ''}`);

let acknowledged = 0;
let inFlight = 0;
let applied = 0;
let code = 0;
try {
  for (let i = 1; i <= cycles; i++) {
    const r = await loop.cycle();
    const acked = r.acknowledged.persons + r.acknowledged.attributes + r.acknowledged.groups;
    acknowledged += acked;
    inFlight += r.inFlight;
    applied += r.inFlightApplied;
    console.log(
      `cycle ${String(i).padStart(String(cycles).length)}/${cycles}: killed after ${String(Math.round(r.killAfterMs)).padStart(5)} ms, ` +
        `${String(acked).padStart(5)} acknowledged (persons ${r.acknowledged.persons}, attributes ${r.acknowledged.attributes}, groups ${r.acknowledged.groups}), ` +
        `in flight ${r.inFlightApplied}/${r.inFlight} applied, restart ${Math.round(r.restartMs)} ms, ${r.persons} persons, all present; ${r.recovery}`,
    );
  }
  console.log(`ok: ${cycles} kills, ${acknowledged} acknowledged writes all survived; ${applied} of ${inFlight} unanswered writes had landed`);
} catch (error) {
  console.error(`FAILED (seed ${seed}): ${error instanceof Error ? error.message : String(error)}`);
  code = 1;
} finally {
  await loop.close();
}
process.exit(code);
