// CPU time from /proc (Linux): of another process, to tell whether the server or the load generator was the
// bottleneck of a run (on two cores, one of them saturating its core is what bounds the figure); and of the
// whole machine, whose steal time says how long the host ran something else on our virtual CPUs.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** USER_HZ, asked of getconf once; 100 on every mainstream Linux build, so that is the fallback. */
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU µs this process has used so far (all threads). */
export function ownCpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** User + system CPU seconds (all threads) the process has used so far, or undefined where /proc is not available. */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces; fields are counted from after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return undefined;
  }
}

/** User and system (kernel) CPU seconds (all threads) the process has used so far; undefined without /proc. */
export function cpuSplit(pid: number): { user: number; system: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / clockTicks(), system: Number(fields[12]) / clockTicks() };
  } catch {
    return undefined;
  }
}

/** The machine's CPU ticks so far: all of them, and those stolen by the hypervisor; undefined without /proc. */
export function machineTicks(): { total: number; steal: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] as string;
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest time is counted in user)
    const fields = line.trim().split(/\s+/).slice(1, 9).map(Number);
    return { total: fields.reduce((a, b) => a + b, 0), steal: fields[7] ?? 0 };
  } catch {
    return undefined;
  }
}

/** CPU µs per call of f over n calls, the best of `rounds`, after `warmup` calls. */
export function cpuPerCall(n: number, rounds: number, f: (i: number) => void, warmup = 10_000): number {
  for (let i = 0; i < warmup; i++) f(i);
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const c = ownCpuUs();
    for (let i = 0; i < n; i++) f(i);
    best = Math.min(best, (ownCpuUs() - c) / n);
  }
  return best;
}

/** CPU µs per item of `round`, which does n items each time it runs: the best of `rounds`, after one that warms up. */
export async function cpuPerItem(n: number, rounds: number, round: () => Promise<void>): Promise<number> {
  let best = Infinity;
  for (let r = 0; r <= rounds; r++) {
    const c = ownCpuUs();
    await round();
    if (r > 0) best = Math.min(best, (ownCpuUs() - c) / n);
  }
  return best;
}
