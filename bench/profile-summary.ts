// Where the time of a V8 CPU profile went (node --cpu-prof, or bench/mint.ts --profile): self time by module
// and by function, without the start-up, as shares of the busy (non-idle) time.
//
//   npm run bench -- profile-summary bench/results/profiles/CPU.*.cpuprofile [--skip 2] [--top 25]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { numberFlag, runIfMain } from './lib/cli.js';

const USAGE = `usage: npm run bench -- profile-summary <file.cpuprofile>... [options]   (or: npx tsx bench/profile-summary.ts ...)
  --skip S   seconds of start-up left out (default 2)
  --top N    lines per list (default 25)`;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** node_modules/<package> for dependencies, node:... for Node itself, the last two path parts for ours. */
function moduleOf(frame: ProfileNode['callFrame']): string {
  if (frame.url === '') return frame.functionName === '' ? '(native)' : frame.functionName;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url);
  if (pkg) return `${pkg[1]}`;
  if (frame.url.startsWith('node:')) return frame.url;
  return frame.url.split('/').slice(-2).join('/');
}

function summarize(file: string, skipSeconds: number, top: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let time = profile.startTime;
  let idle = 0;
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    time += delta;
    if (time - profile.startTime < skipSeconds * 1e6) return;
    total += delta;
    const frame = (nodes.get(id) as ProfileNode).callFrame;
    if (frame.functionName === '(idle)') {
      idle += delta;
      return;
    }
    const mod = moduleOf(frame);
    byModule.set(mod, (byModule.get(mod) ?? 0) + delta);
    const fn = `${frame.functionName || '(anonymous)'}  ${mod}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + delta);
  });
  const busy = total - idle;
  console.log(`${file}\n  ${(total / 1e6).toFixed(1)} s after the first ${skipSeconds} s: busy ${(busy / 1e6).toFixed(1)} s, idle ${((idle / total) * 100).toFixed(1)}%`);
  const list = (title: string, m: Map<string, number>) => {
    console.log(`  ${title} (share of busy time)`);
    for (const [name, t] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${((t / busy) * 100).toFixed(1).padStart(5)}%  ${name}`);
  };
  list('by module', byModule);
  list('by function', byFunction);
}

export async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { skip: { type: 'string', default: '2' }, top: { type: 'string', default: '25' }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) return console.log(USAGE);
  if (positionals.length === 0) throw new Error(`no profile given\n${USAGE}`);
  for (const file of positionals) summarize(file, numberFlag('skip', values.skip, 0, USAGE), Math.floor(numberFlag('top', values.top, 1, USAGE)));
}

runIfMain(import.meta.url, main);
