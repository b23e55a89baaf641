// The real service as a child process: spawned like an operator would run it, killed with any signal,
// restarted on the same data dir. Crash tests need a process boundary that an in-process server lacks.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client, ROOT_KEY, ROOT_ORG, tempDir } from './server.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Runs a script of the repository (`node --import tsx`) to its end: its exit code (99 when it had none) and output. */
export function runScript(script: string, args: string[], timeoutMs = 120_000): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', script, ...args], { cwd: REPO_ROOT, timeout: timeoutMs }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 99) : 0, out: stdout + stderr });
    });
  });
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface NodeProcess {
  readonly child: ChildProcess;
  /** the match of the ready pattern in the child's output */
  readonly ready: RegExpMatchArray;
  readonly exited: Promise<Exit>;
  /** everything the child wrote to stdout and stderr so far, in arrival order */
  output(): string;
  /** sends the signal and resolves once the process is gone */
  kill(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
}

export interface SpawnOptions {
  /** script path relative to the repository root, run with `node --import tsx` */
  script: string;
  args?: string[];
  /** options for node itself, before the script (e.g. --cpu-prof) */
  nodeArgs?: string[];
  /** a command that execs node, e.g. ['taskset', '-c', '0'] to confine the child to core 0 from its start */
  launcher?: string[];
  env?: Record<string, string>;
  /** the checkout the script is run from (default: this repository) */
  cwd?: string;
  /** a line of output that means the child is ready; its match is returned */
  ready: RegExp;
  timeoutMs?: number;
}

/** Spawns `node [nodeArgs] --import tsx <script> [args]` and resolves once a line matching `ready` appears. */
export async function spawnNode(options: SpawnOptions): Promise<NodeProcess> {
  // The test runner marks its own processes with NODE_TEST_CONTEXT; a service is not one of them.
  const { NODE_TEST_CONTEXT: _, ...inherited } = process.env;
  const argv = [process.execPath, ...(options.nodeArgs ?? []), '--import', 'tsx', options.script, ...(options.args ?? [])];
  const [command, ...args] = [...(options.launcher ?? []), ...argv] as [string, ...string[]];
  const child = spawn(command, args, {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...inherited, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A child must never outlive the process that started it, even when a test fails half way.
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      process.removeListener('exit', reap);
      resolve({ code, signal });
    });
  });

  let out = '';
  let pending = '';
  let onLine: ((line: string) => void) | undefined;
  const take = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    out += text;
    pending += text;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      onLine?.(line);
    }
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);

  const timeoutMs = options.timeoutMs ?? 60_000;
  const ready = await new Promise<RegExpMatchArray>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => fail(`not ready within ${timeoutMs} ms`), timeoutMs);
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      onLine = undefined;
      child.kill('SIGKILL');
      reject(new Error(`${options.script} ${why}; its output:\n${out}`));
    };
    onLine = (line) => {
      const m = line.match(options.ready);
      if (!m || settled) return;
      settled = true;
      clearTimeout(timer);
      onLine = undefined;
      resolve(m);
    };
    void exited.then((e) => fail(`exited before it was ready (code ${e.code}, signal ${e.signal})`));
  });

  return {
    child,
    ready,
    exited,
    output: () => out,
    async kill(signal = 'SIGTERM', killTimeoutMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`${options.script} did not exit within ${killTimeoutMs} ms of ${signal}; its output:\n${out}`));
        }, killTimeoutMs);
      });
      try {
        return await Promise.race([exited, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export interface ServiceProcess {
  readonly process: NodeProcess;
  readonly port: number;
  readonly base: string;
  readonly dataDir: string;
  readonly env: Record<string, string>;
  /** authenticated as the root organization */
  readonly client: Client;
  /** SIGKILL by default: no shutdown code runs, as in a crash */
  kill(signal?: NodeJS.Signals): Promise<Exit>;
  /** a clean stop (SIGTERM), as an operator would do it */
  stop(): Promise<Exit>;
  /** a new process on the same data dir and settings; this one must have exited */
  restart(): Promise<ServiceProcess>;
}

const LISTENING = /^listening on http:\/\/[^\s]+:(\d+) /;

/** Runs src/main.ts on a loopback port with the test root organization, on dataDir (fresh by default). */
export async function spawnService(env: Record<string, string> = {}, dataDir = tempDir()): Promise<ServiceProcess> {
  const fullEnv = {
    SERVICE_HOST: '127.0.0.1',
    SERVICE_PORT: '0',
    SERVICE_DATA_DIR: dataDir,
    SERVICE_ROOT_ORG_ID: ROOT_ORG,
    SERVICE_ROOT_API_KEY: ROOT_KEY,
    ...env,
  };
  const child = await spawnNode({ script: 'src/main.ts', env: fullEnv, ready: LISTENING });
  const port = Number(child.ready[1]);
  const base = `http://127.0.0.1:${port}`;
  return {
    process: child,
    port,
    base,
    dataDir,
    env: fullEnv,
    client: new Client(base, ROOT_ORG, ROOT_KEY),
    kill: (signal = 'SIGKILL') => child.kill(signal),
    stop: () => child.kill('SIGTERM'),
    async restart() {
      if (child.child.exitCode === null && child.child.signalCode === null) throw new Error('restart() of a service process that is still running');
      return spawnService(env, dataDir);
    },
  };
}
