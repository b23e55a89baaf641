// CPU time of another process from /proc (Linux), to tell whether the server or the load generator was the
// bottleneck of a run: on two cores, one of them saturating its core is what bounds the figure.
import { readFileSync } from 'node:fs';

/** USER_HZ: 100 on every mainstream Linux build; Node offers no sysconf to ask. */
const CLOCK_TICKS = 100;

/** User + system CPU seconds the process has used so far, or undefined where /proc is not available. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces; fields are counted from after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
