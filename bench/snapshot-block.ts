// How long one organization's snapshot holds the event loop, in process: toSnapshot and one msgpack pack (as
// before snapshots were sliced) against heldSnapshot packed a slice at a time (src/wal/codec.ts), on a state of
// N persons of the scale benchmark's shape; CPU time of each, and the longest turn of the loop while it packs.
//   npm run bench -- snapshot-block [--persons 200000] [--rounds 3]
import { parseArgs } from 'node:util';
import { aGroup, aPerson, given } from '../test/support/domain.js';
import { apply } from '../src/domain/apply.js';
import { heldSnapshot, toSnapshot } from '../src/domain/snapshot.js';
import { encodeRecord, encodeRecordInSlices } from '../src/wal/codec.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { ownCpuUs } from './lib/process-cpu.js';
import { environment, environmentLine, formatTable, writeResults } from './lib/report.js';

const USAGE = `usage: npm run bench -- snapshot-block [--persons 200000] [--rounds 3]`;

interface Round {
  round: number;
  one_pack_turn_ms: number;
  one_pack_cpu_ms: number;
  sliced_first_turn_ms: number;
  sliced_longest_turn_ms: number;
  sliced_cpu_ms: number;
  mb: number;
}

const cpuMs = () => ownCpuUs() / 1000;

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { persons: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '3' }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) return console.log(USAGE);
  const n = Math.floor(numberFlag('persons', values.persons, 1, USAGE));
  const rounds = Math.floor(numberFlag('rounds', values.rounds, 1, USAGE));
  const env = environment();
  let state = given(...Array.from({ length: 20 }, (_, i) => aGroup(`team-${i}`)));
  for (let i = 0; i < n; i++) {
    const groups = [`team-${i % 20}`, `team-${(i + 3) % 20}`].sort();
    state = apply(state, aPerson(`0190a0b1-${String(i).padStart(4, '0')}-7000-8000-000000000000`, { handles: [{ type: 'email_address', value: `large-${i}@example.com` }], groups, attributes: { end_user_read_write: { plan: i % 3 ? 'free' : 'pro', seats: i % 50 } } }));
  }
  const rows: Round[] = [];
  for (let round = 1; round <= rounds; round++) {
    let c = cpuMs();
    let t = performance.now();
    encodeRecord({ offset: 1, event_offset: 1, state: toSnapshot(state) }, 'records');
    const oneTurn = performance.now() - t;
    const oneCpu = cpuMs() - c;

    let longest = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 1);
    c = cpuMs();
    last = t = performance.now();
    const held = heldSnapshot(state);
    const packing = encodeRecordInSlices({ offset: 1, event_offset: 1, state: held.snapshot }, held.lists);
    const firstTurn = performance.now() - t;
    const bytes = await packing;
    held.release();
    const slicedCpu = cpuMs() - c;
    clearInterval(timer);
    const r = (v: number) => Math.round(v);
    rows.push({ round, one_pack_turn_ms: r(oneTurn), one_pack_cpu_ms: r(oneCpu), sliced_first_turn_ms: r(firstTurn), sliced_longest_turn_ms: r(Math.max(longest, firstTurn)), sliced_cpu_ms: r(slicedCpu), mb: Math.round(bytes.length / 1048576) });
  }
  console.log(`snapshot of one organization of ${n} persons: one pack on the loop against the sliced writer (ms)`);
  console.log(
    formatTable(
      [
        { title: 'round', value: (x: Round) => x.round },
        { title: 'one pack: turn', value: (x) => x.one_pack_turn_ms },
        { title: 'one pack: CPU', value: (x) => x.one_pack_cpu_ms },
        { title: 'sliced: first turn', value: (x) => x.sliced_first_turn_ms },
        { title: 'sliced: longest turn', value: (x) => x.sliced_longest_turn_ms },
        { title: 'sliced: CPU', value: (x) => x.sliced_cpu_ms },
        { title: 'MB', value: (x) => x.mb },
      ],
      rows,
    ),
  );
  console.log(`\n${environmentLine(env)}`);
  console.log(`written to ${writeResults('snapshot-block', env, { persons: n, rows })}`);
}

runIfMain(import.meta.url, main);
