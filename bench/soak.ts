// Does the data dir stop growing? Two services side by side, one compacting its WAL (the default) and one with
// compaction off (SERVICE_WAL_COMPACT_INTERVAL_MS=0), both keeping the same bounded event log: each is minted for
// at a fixed rate for N minutes, and both data dirs' sizes are printed every minute. Then their closed-loop mint
// rates take turns round after round: compaction runs off the hot path, so the compacting one's rate should stay
// ≥ 95% of the other's.
//   npm run bench -- soak [--minutes 10] [--rate 500] [--rounds 3] [--duration 5]
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { numberFlag, runIfMain } from './lib/cli.js';
import { encodeRequest } from './lib/connection.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { createPersons } from './lib/persons.js';
import { count, environment, environmentLine, ms, pct, writeResults } from './lib/report.js';
import { SERVICE_AUTH, startService, type ServiceProcess } from './lib/server-process.js';

const USAGE = `usage: npm run bench -- soak [options]   (or: npx tsx bench/soak.ts [options])
  --minutes <n>       minutes of minting at the fixed rate (default 10)
  --rate <n>          mints per second sent to each service (default 500)
  --rounds <n>        closed-loop rounds afterwards, the two services taking turns (default 3)
  --duration <s>      seconds per closed-loop round (default 5)
  --connections <n>   keep-alive connections per service (default 50)
  --retention <n>     events each service keeps (SERVICE_EVENT_RETENTION, default 20000): the event log is
                      bounded the same way in both, so the difference in size is the WAL's`;

interface Options {
  minutes: number;
  rate: number;
  rounds: number;
  duration: number;
  connections: number;
  retention: number;
}

function parse(argv: string[]): Options | undefined {
  const { values } = parseArgs({ args: argv, options: { minutes: { type: 'string', default: '10' }, rate: { type: 'string', default: '500' }, rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '50' }, retention: { type: 'string', default: '20000' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) return undefined;
  return {
    minutes: numberFlag('minutes', values.minutes, 0.1, USAGE),
    rate: numberFlag('rate', values.rate, 1, USAGE),
    rounds: Math.round(numberFlag('rounds', values.rounds, 1, USAGE)),
    duration: numberFlag('duration', values.duration, 1, USAGE),
    connections: Math.round(numberFlag('connections', values.connections, 1, USAGE)),
    retention: Math.round(numberFlag('retention', values.retention, 1, USAGE)),
  };
}

/** Bytes the data dir takes on disk (allocated blocks, so a sparse LMDB file counts what it really uses). */
function diskBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const st = statSync(join(dir, name));
    total += st.isDirectory() ? diskBytes(join(dir, name)) : st.blocks * 512;
  }
  return total;
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

interface Side {
  name: 'compacting' | 'not compacting';
  service: ServiceProcess;
  requests: Buffer[];
  sizes: number[];
  minted: number;
  errors: number;
  rounds: LoadResult[];
}

function load(side: Side, o: Options, durationMs: number, rate?: number) {
  return runLoad({ url: side.service.url, request: (i) => side.requests[i % side.requests.length] as Buffer, connections: o.connections, durationMs, serverPid: side.service.pid, ...(rate === undefined ? { warmupMs: 1000 } : { rate }) });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

export async function main(argv: string[]): Promise<void> {
  const o = parse(argv);
  if (!o) return console.log(USAGE);
  const env = environment();
  const common = { SERVICE_EVENT_RETENTION: String(o.retention), SERVICE_EVENT_PRUNE_INTERVAL_MS: '10000', SERVICE_SIGNING_THREADS: '0' };
  const sides: Side[] = [];
  try {
    for (const [name, interval] of [['compacting', '10000'], ['not compacting', '0']] as const) {
      const service = await startService({ ...common, SERVICE_WAL_COMPACT_INTERVAL_MS: interval });
      const ids = await createPersons(service, 64);
      const requests = ids.map((id) => encodeRequest('127.0.0.1', { method: 'POST', path: `/persons/${id}/mint-token`, headers: { ...SERVICE_AUTH } }));
      sides.push({ name, service, requests, sizes: [diskBytes(service.dataDir)], minted: 0, errors: 0, rounds: [] });
    }
    console.log(`minting at ${o.rate}/s into each service for ${o.minutes} min; data dir size every minute`);
    console.log(`${'minute'.padEnd(8)}${'compacting'.padStart(16)}${'not compacting'.padStart(18)}${'mints each'.padStart(14)}`);
    const minutes = Math.ceil(o.minutes);
    for (let m = 1; m <= minutes; m++) {
      const durationMs = Math.round(Math.min(1, o.minutes - (m - 1)) * 60_000);
      const results = await Promise.all(sides.map((s) => load(s, o, durationMs, o.rate)));
      results.forEach((r, i) => {
        const side = sides[i] as Side;
        side.minted += r.requests - r.errors;
        side.errors += r.errors;
        side.sizes.push(diskBytes(side.service.dataDir));
      });
      const [on, off] = sides as [Side, Side];
      console.log(`${String(m).padEnd(8)}${mib(on.sizes.at(-1) as number).padStart(16)}${mib(off.sizes.at(-1) as number).padStart(18)}${count(on.minted).padStart(14)}`);
    }
    console.log(`\nclosed loop, ${o.rounds} rounds of ${o.duration} s each, the two taking turns, who goes first alternating:`);
    for (let round = 0; round < o.rounds; round++) {
      // Who goes first alternates: the first of a pair meets whatever the machine was doing before it.
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const r = await load(side, o, o.duration * 1000);
        side.rounds.push(r);
        console.log(`  round ${round + 1} ${side.name.padEnd(15)} ${count(r.rps)} mints/s  p50 ${ms(r.latency.p50_us)}  p99 ${ms(r.latency.p99_us)}${r.errors ? `  ${r.errors} errors` : ''}`);
      }
    }
    const [on, off] = sides as [Side, Side];
    const ratios = on.rounds.map((r, i) => r.rps / ((off.rounds[i] as LoadResult).rps || 1));
    const ratio = median(ratios);
    console.log(`\nmint-token rate compacting / not compacting: ${pct(ratio)} (median of rounds ${ratios.map(pct).join(', ')}; target ≥ 95%)`);
    console.log(`data dir after ${o.minutes} min: ${mib(on.sizes.at(-1) as number)} compacting, ${mib(off.sizes.at(-1) as number)} not; errors ${on.errors} / ${off.errors}`);
    console.log(environmentLine(env));
    const path = writeResults('soak', env, { options: o, sides: sides.map((s) => ({ name: s.name, sizes_bytes: s.sizes, minted: s.minted, errors: s.errors, rounds: s.rounds })), ratio, ratios });
    console.log(`results: ${path}`);
  } finally {
    await Promise.all(sides.map((s) => s.service.stop()));
  }
}

runIfMain(import.meta.url, main);
