// Counts a running process's system calls by kind with `perf stat` on the kernel's syscall tracepoints: cheap
// enough to leave on during a measured phase (no ptrace stop per call, unlike strace), and what says how many
// writes a fan-out costs (bench/events.ts --syscalls). Needs perf and permission to trace the process.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SyscallCounter {
  /**
   * Stops counting; each syscall name asked for with the number of calls entered since start, and under
   * `failed:<name>` the number of those that returned an error (EAGAIN: a socket write the kernel had no room for).
   */
  stop(): Promise<Record<string, number>>;
}

/** Starts counting calls of each named syscall (e.g. 'sendto', 'fdatasync') by every thread of `pid`, and failures of those in `failures`. */
export async function countSyscalls(pid: number, names: readonly string[], failures: readonly string[] = []): Promise<SyscallCounter> {
  const out = join(tmpdir(), `syscalls-${pid}-${Date.now()}.csv`);
  const events = [...names.map((n) => ['-e', `syscalls:sys_enter_${n}`]), ...failures.map((n) => ['-e', `syscalls:sys_exit_${n}`, '--filter', 'ret < 0'])].flat();
  const perf = spawn('perf', ['stat', '-x', ',', '-o', out, ...events, '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  perf.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve, reject) => {
    perf.once('error', reject);
    perf.once('exit', (code) => resolve(code));
  });
  // perf attaches asynchronously; a short wait keeps the first calls of the phase in the count.
  await new Promise((r) => setTimeout(r, 200));
  return {
    async stop() {
      perf.kill('SIGINT');
      const code = await exited;
      try {
        const counts: Record<string, number> = {};
        // Lines are "<count>,<unit>,<event>,...", or "<not counted>" for an event that never fired.
        for (const line of readFileSync(out, 'utf8').split('\n')) {
          const [value, , event] = line.split(',');
          if (event?.startsWith('syscalls:sys_enter_')) counts[event.slice('syscalls:sys_enter_'.length)] = Number(value) || 0;
          if (event?.startsWith('syscalls:sys_exit_')) counts[`failed:${event.slice('syscalls:sys_exit_'.length)}`] = Number(value) || 0;
        }
        if (Object.keys(counts).length === 0) throw new Error(`perf stat counted nothing (exit ${code}): ${errors.trim()}`);
        return counts;
      } finally {
        rmSync(out, { force: true });
      }
    },
  };
}
