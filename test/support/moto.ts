// A real moto_server (AWS IAM's local implementation, from the machine's pyenv Python) on a loopback port,
// started by the test and stopped by its pid; absent moto, tests skip with the reason.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './free-port.js';

export interface Moto {
  url: string;
  /** POST /moto-api/reset: every account empty again */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** The moto_server executable, or undefined: PATH, then pyenv's versions. */
export function findMotoServer(): string | undefined {
  const onPath = spawnSync('sh', ['-c', 'command -v moto_server'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim()) return onPath.stdout.trim();
  const root = spawnSync('pyenv', ['root'], { encoding: 'utf8' });
  const roots = [root.status === 0 ? root.stdout.trim() : '', '/root/.pyenv'].filter(Boolean);
  for (const r of roots) {
    const versions = join(r, 'versions');
    if (!existsSync(versions)) continue;
    for (const v of readdirSync(versions)) {
      const bin = join(versions, v, 'bin', 'moto_server');
      if (existsSync(bin)) return bin;
    }
  }
  return undefined;
}

export const MOTO_MISSING = 'moto_server not found (PATH or pyenv versions): the AWS tests need moto 5 from the pyenv Python';

export async function startMoto(): Promise<Moto> {
  const bin = findMotoServer();
  if (!bin) throw new Error(MOTO_MISSING);
  const port = await freePort();
  const child: ChildProcess = spawn(bin, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const r = await fetch(`${url}/moto-api/`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`moto_server did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    async reset() {
      await fetch(`${url}/moto-api/reset`, { method: 'POST' });
    },
    async stop() {
      if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
      await exited;
    },
  };
}
