// A three-region deployment on one machine, for trying regions over NATS JetStream by hand: three
// nats-servers (a domain each; the origin's is the leafnode hub) with generated configs and three service
// processes, all detached, their PIDs written down so that `stop` ends exactly those.
//   npx tsx scripts/regions.ts start [--dir ./regions-demo] [--port 8080] [--nats-port 4222]
//   npx tsx scripts/regions.ts stop [--dir ./regions-demo]
// Region i (0 = the origin) serves HTTP on port+i; its nats-server listens on nats-port+i, monitoring on
// nats-port+100+i, and the hub takes leafnodes on nats-port+200. Logs and data go under --dir.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { natsServerConfig } from '../src/regions/jetstream/nats-config.js';

const REGIONS = ['europe-belgium', 'us-iowa', 'asia-japan'];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    dir: { type: 'string', default: './regions-demo' },
    port: { type: 'string', default: '8080' },
    'nats-port': { type: 'string', default: '4222' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
const command = positionals[0];
if (values.help || (command !== 'start' && command !== 'stop')) {
  console.log('usage: npx tsx scripts/regions.ts start|stop [--dir DIR] [--port 8080] [--nats-port 4222]');
  process.exit(values.help ? 0 : 2);
}

const dir = resolve(values.dir);
const pidFile = join(dir, 'pids.json');
interface Started {
  name: string;
  pid: number;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // A fetch that fails means not listening yet; any other error (the process exited) ends the wait.
  while (!(await check().catch((error: unknown) => {
    if (error instanceof TypeError) return false;
    throw error;
  }))) {
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${timeoutMs} ms (see the logs in ${dir})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function stop(): Promise<void> {
  if (!existsSync(pidFile)) {
    console.log(`nothing to stop: no ${pidFile}`);
    return;
  }
  const started = JSON.parse(readFileSync(pidFile, 'utf8')) as Started[];
  // Services first (they flush and close their NATS connections), then the servers; each by its own PID.
  for (const { name, pid } of [...started].reverse()) {
    if (!alive(pid)) continue;
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 15_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (alive(pid)) process.kill(pid, 'SIGKILL');
    console.log(`stopped ${name} (pid ${pid})`);
  }
  rmSync(pidFile);
}

async function start(): Promise<void> {
  if (existsSync(pidFile) && (JSON.parse(readFileSync(pidFile, 'utf8')) as Started[]).some((s) => alive(s.pid))) {
    throw new Error(`a deployment from ${dir} is running; stop it first`);
  }
  mkdirSync(dir, { recursive: true });
  const httpBase = Number(values.port);
  const natsBase = Number(values['nats-port']);
  const leafPort = natsBase + 200;
  const started: Started[] = [];
  const record = (name: string, pid: number | undefined) => {
    if (pid === undefined) throw new Error(`${name} did not start`);
    started.push({ name, pid });
    writeFileSync(pidFile, JSON.stringify(started, null, 2));
  };
  const detached = (name: string, cmd: string, args: string[], env: Record<string, string> = {}) => {
    const log = openSync(join(dir, `${name}.log`), 'a');
    const child = spawn(cmd, args, { detached: true, stdio: ['ignore', log, log], env: { ...process.env, ...env } });
    child.unref();
    record(name, child.pid);
    return child;
  };
  /** Ready when `check` passes; a process that exits meanwhile (a port in use, a bad config) fails at once. */
  const ready = (what: string, child: ReturnType<typeof detached>, check: () => Promise<boolean>) =>
    waitFor(what, async () => {
      if (child.exitCode !== null) throw new Error(`${what} exited with status ${child.exitCode}: ${readFileSync(join(dir, `${what.replace(' ', '-')}.log`), 'utf8').slice(-2000)}`);
      return check();
    });

  for (const [i, region] of REGIONS.entries()) {
    const conf = join(dir, `nats-${region}.conf`);
    const plan = { region, port: natsBase + i, httpPort: natsBase + 100 + i, storeDir: join(dir, `nats-${region}`), ...(i === 0 ? { leafPort } : { hubUrl: `nats-leaf://127.0.0.1:${leafPort}` }) };
    writeFileSync(conf, natsServerConfig(plan));
    const child = detached(`nats-${region}`, 'nats-server', ['-c', conf]);
    await ready(`nats ${region}`, child, async () => (await fetch(`http://127.0.0.1:${plan.httpPort}/healthz?js-enabled-only=true`)).ok);
  }
  await waitFor('leafnodes', async () => ((await (await fetch(`http://127.0.0.1:${natsBase + 100}/leafz`)).json()) as { leafnodes: number }).leafnodes >= REGIONS.length - 1);

  const services = REGIONS.map((region, i) =>
    detached(`service-${region}`, process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      SERVICE_PORT: String(httpBase + i),
      SERVICE_DATA_DIR: join(dir, `data-${region}`),
      SERVICE_REGIONS: REGIONS.join(','),
      SERVICE_REGION_TRANSPORT: 'jetstream',
      SERVICE_REGION: region,
      SERVICE_NATS_URL: `nats://127.0.0.1:${natsBase + i}`,
      SERVICE_ORIGIN_URL: `http://127.0.0.1:${httpBase}`,
    }),
  );
  for (const [i, region] of REGIONS.entries()) await ready(`service ${region}`, services[i] as ReturnType<typeof detached>, async () => (await fetch(`http://127.0.0.1:${httpBase + i}/health`)).ok);

  console.log(`three regions running (PIDs in ${pidFile}); the origin's root credentials are in ${join(dir, `service-${REGIONS[0]}.log`)}`);
  for (const [i, region] of REGIONS.entries()) console.log(`  ${region.padEnd(15)} http://127.0.0.1:${httpBase + i}  ${i === 0 ? 'origin' : 'replica'}  nats://127.0.0.1:${natsBase + i}`);
  console.log(`stop with: npx tsx scripts/regions.ts stop --dir ${values.dir}`);
}

(command === 'start' ? start() : stop()).catch(async (error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  if (command === 'start') await stop();
  process.exit(1);
});
