// Pinned runs, the way operators measure a server: the server confined to core 0 from its start (taskset), the
// load generator, and whatever it forks after pinning itself, to core 1.
import { execFileSync } from 'node:child_process';

export const SERVER_CORE = '0';
export const GENERATOR_CORE = '1';

/** Confines every thread of this process to `cores` (a taskset list); returns the list it had before. */
function pinSelf(cores: string): string {
  const before = execFileSync('taskset', ['-c', '-p', String(process.pid)], { encoding: 'utf8' }).trim().split(': ').pop() as string;
  execFileSync('taskset', ['-a', '-c', '-p', cores, String(process.pid)], { stdio: 'ignore' });
  return before;
}

/** Runs `measure` with this process (the load generator, and whatever it forks meanwhile) on GENERATOR_CORE, then puts it back. */
export async function onGeneratorCore<T>(measure: () => Promise<T>): Promise<T> {
  const before = pinSelf(GENERATOR_CORE);
  try {
    return await measure();
  } finally {
    pinSelf(before);
  }
}
