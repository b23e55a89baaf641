// Servers under test as child processes: a bench server script (bench/hello-server.ts, bench/minimal-mint-server.ts)
// or the service itself (src/main.ts) on a fresh data dir. Each runs in its own process so that on two cores the
// server and the load generator get a core each, and so its CPU time can be read apart from the generator's.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnNode } from '../../test/support/process.js';
import { removeDir, tempDir } from '../../test/support/server.js';

/** The line src/main.ts prints once it listens; the bench servers print the same one. */
const LISTENING = /^listening on http:\/\/[^\s]+:(\d+)/;

export interface ServerProcess {
  readonly pid: number;
  readonly port: number;
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** everything the server printed so far, for error messages */
  output(): string;
  /** SIGTERM, then waits for the exit (which also lets a --cpu-prof profile be written); safe to call twice */
  stop(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** options for node before the script, e.g. ['--cpu-prof', '--cpu-prof-dir=…'] */
  nodeArgs?: string[];
  /** CPU cores the server is confined to from its start (taskset -c), e.g. '0'; it sees only those */
  cores?: string;
  /** another checkout of the repository to run the script from (bench/lib/baseline.ts); default: this one */
  root?: string;
}

/** Starts `node --import tsx <script>` (a path from the repository root) and waits until it listens. */
export async function startServer(script: string, options: StartOptions = {}): Promise<ServerProcess> {
  const child = await spawnNode({ script, env: { SERVICE_HOST: '127.0.0.1', SERVICE_PORT: '0', ...options.env }, ready: LISTENING, timeoutMs: 60_000, ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}), ...(options.root === undefined ? {} : { cwd: options.root }), ...(options.cores === undefined ? {} : { launcher: ['taskset', '-c', options.cores] }) });
  const port = Number(child.ready[1]);
  let stopping: Promise<void> | undefined;
  return {
    pid: child.child.pid as number,
    port,
    url: `http://127.0.0.1:${port}`,
    output: () => child.output(),
    stop() {
      stopping ??= child.kill('SIGTERM').then(() => {});
      return stopping;
    },
  };
}

export interface ServiceProcess extends ServerProcess {
  readonly dataDir: string;
  /** the root organization's credentials, as request headers */
  readonly auth: Record<string, string>;
}

const ORG = 'bench-org';
const KEY = 'bench-api-key-0123456789abcdef';
/** The headers that authenticate as the root organization of every service startService starts. */
export const SERVICE_AUTH: Readonly<Record<string, string>> = { 'Service-OrgID': ORG, 'Service-API-Key': KEY };

/** Starts the service (src/main.ts) on a fresh temporary data dir, removed again by stop(). */
export async function startService(env: Record<string, string> = {}, options: Omit<StartOptions, 'env'> = {}): Promise<ServiceProcess> {
  const dataDir = tempDir('identity-bench-');
  let server: ServerProcess;
  try {
    server = await startServer('src/main.ts', { ...options, env: { SERVICE_DATA_DIR: dataDir, SERVICE_ROOT_ORG_ID: ORG, SERVICE_ROOT_API_KEY: KEY, ...env } });
  } catch (error) {
    removeDir(dataDir);
    throw error;
  }
  return {
    ...server,
    dataDir,
    auth: { ...SERVICE_AUTH },
    async stop() {
      try {
        await server.stop();
      } finally {
        removeDir(dataDir);
      }
    },
  };
}

/** With `on` (a benchmark's --profile), the service writes a CPU profile to bench/results/profiles/ when it stops. */
export function profiled(on: boolean): { nodeArgs?: string[] } {
  if (!on) return {};
  const profileDir = join(fileURLToPath(new URL('../..', import.meta.url)), 'bench/results/profiles');
  mkdirSync(profileDir, { recursive: true });
  return { nodeArgs: ['--cpu-prof', '--cpu-prof-interval=100', `--cpu-prof-dir=${profileDir}`] };
}
