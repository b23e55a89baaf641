// Servers under test as child processes, and the CPU time they use (Linux /proc).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface Child {
  process: ChildProcess;
  port: number;
  /** SIGTERM, then waits (at most 10 s) for the exit, so that a CPU profile gets written */
  stop(): Promise<void>;
}

/** Starts `node --import tsx ...args` in cwd and waits for the stdout line that portOf reads a port from. */
export function startChild(cwd: string, args: string[], env: Record<string, string>, portOf: (line: string) => number | undefined): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  // A benchmark that dies (an error, Ctrl-C) must not leave servers running behind it.
  const orphanGuard = () => child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      process.off('exit', orphanGuard);
      resolve();
    }),
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000).unref())]);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${args.join(' ')} did not start within 60 s`));
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code} before listening`));
    });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const port = portOf(line);
      if (port === undefined) return;
      clearTimeout(timer);
      resolve({ process: child, port, stop });
    });
  });
}

/** A child that prints {"port": N} as a JSON line. */
export function jsonPort(line: string): number | undefined {
  try {
    return (JSON.parse(line) as { port?: number }).port;
  } catch {
    return undefined;
  }
}

const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds (user + system, all threads) a process has used so far; undefined where /proc is missing. */
export function cpuSeconds(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces: count fields from after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}
