// Regions as separate processes on one machine, for trying them and for tests (the same script an operator
// adapts): per region `--nats` nats-servers (1, or a JetStream cluster of 3 with R3 streams) and `--processes`
// service processes, the regions joined by leafnodes with the origin's servers as the hub, every replica region
// reaching the hub through a delay proxy of ours (scripts/delay-proxy.ts), all on free loopback ports. Each verb
// prints one JSON line; the processes outlive the script, their PIDs and how to start them again are in
// DIR/state.json, so `down` ends exactly those.
//   npm run regions -- up --dir DIR [--regions europe-belgium,us-iowa,asia-japan] [--processes 1] [--nats 1] [--one-way-ms N]
//   npm run regions -- kill NAME --dir DIR | start NAME --dir DIR
//   npm run regions -- cut REGION --dir DIR | heal REGION --dir DIR
//   npm run regions -- down --dir DIR
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { natsServerConfig, type NatsServerPlan } from '../src/regions/jetstream/nats-config.js';
import { freePort } from '../test/support/free-port.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT_REGIONS = 'europe-belgium,us-iowa,asia-japan';
const USAGE = `usage: npm run regions -- VERB [NAME] --dir DIR
  up --dir DIR [--regions ${DEFAULT_REGIONS}] [--processes 1] [--nats 1|3] [--one-way-ms N]
  kill NAME --dir DIR      SIGKILL one service process or nats-server
  start NAME --dir DIR     start it again with its data dir and configuration
  cut REGION --dir DIR     black-hole the region's links to the others (its delay proxy; the origin: every proxy)
  heal REGION --dir DIR    restore them
  down --dir DIR           stop exactly the processes up started`;

type Kind = 'service' | 'nats' | 'proxy';

/** One process the script started: enough to find it, kill it and start it again. */
interface Started {
  name: string;
  kind: Kind;
  region: string;
  pid: number | null;
  url: string;
  data_dir?: string;
  command: string[];
  env: Record<string, string>;
  /** GET here answers 200 once it serves */
  ready?: string;
  /** a proxy's control port */
  control?: number;
}

interface State {
  regions: string[];
  origin: string;
  processes: number;
  nats: number;
  one_way_ms: number;
  root: { org_id: string; api_key: string };
  operator_key: string;
  started: Started[];
}

class UsageError extends Error {}

const out = (line: Record<string, unknown>) => console.log(JSON.stringify(line));

const alive = (pid: number | null) => {
  if (pid === null) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const stateFile = (dir: string) => join(dir, 'state.json');
function readState(dir: string): State {
  if (!existsSync(stateFile(dir))) throw new UsageError(`no deployment in ${dir} (run up first)`);
  return JSON.parse(readFileSync(stateFile(dir), 'utf8')) as State;
}
const writeState = (dir: string, state: State) => writeFileSync(stateFile(dir), JSON.stringify(state, null, 2));

/** Starts the process detached (it outlives the script), its output appended to DIR/logs/NAME.log. */
function launch(dir: string, p: Started): number {
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const log = openSync(join(dir, 'logs', `${p.name}.log`), 'a');
  const child = spawn(p.command[0] as string, p.command.slice(1), { cwd: REPO_ROOT, detached: true, stdio: ['ignore', log, log], env: { ...process.env, ...p.env } });
  child.unref();
  if (child.pid === undefined) throw new Error(`${p.name} did not start`);
  p.pid = child.pid;
  return child.pid;
}

async function waitUntil(what: string, dir: string, check: () => Promise<boolean>, pid?: number | null, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not listening yet
    }
    if (pid !== undefined && !alive(pid)) throw new Error(`${what} exited (see ${join(dir, 'logs')})`);
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${timeoutMs} ms (see ${join(dir, 'logs')})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const ok = async (url: string) => (await fetch(url)).ok;
const json = async (url: string) => (await fetch(url)).json() as Promise<Record<string, any>>;

async function ready(dir: string, p: Started): Promise<void> {
  if (p.ready) await waitUntil(p.name, dir, () => ok(p.ready as string), p.pid);
}

/** A proxy prints its ports as its first line of output. */
async function proxyPorts(dir: string, p: Started): Promise<{ control: number; ports: number[] }> {
  let line: string | undefined;
  await waitUntil(p.name, dir, async () => {
    line = readFileSync(join(dir, 'logs', `${p.name}.log`), 'utf8').split('\n').find((l) => l.startsWith('{'));
    return line !== undefined;
  }, p.pid);
  return JSON.parse(line as string) as { control: number; ports: number[] };
}

const tsx = (script: string, ...args: string[]) => [process.execPath, '--import', 'tsx', script, ...args];

async function up(dir: string, o: { regions: string[]; processes: number; nats: number; oneWayMs: number }): Promise<void> {
  if (existsSync(stateFile(dir)) && readState(dir).started.some((p) => alive(p.pid))) throw new UsageError(`a deployment from ${dir} is running; run down first`);
  mkdirSync(dir, { recursive: true });
  const [origin] = o.regions as [string];
  const state: State = {
    regions: o.regions,
    origin,
    processes: o.processes,
    nats: o.nats,
    one_way_ms: o.oneWayMs,
    root: { org_id: 'root', api_key: randomBytes(24).toString('base64url') },
    operator_key: randomBytes(24).toString('base64url'),
    started: [],
  };
  const save = () => writeState(dir, state);
  try {
    // The hub first: every replica region's proxy forwards to its leafnode ports.
    const leafPorts: number[] = [];
    for (const region of o.regions) {
      const isHub = region === origin;
      let hubUrls: string[] | undefined;
      if (!isHub) {
        const proxy: Started = { name: `${region}-proxy`, kind: 'proxy', region, pid: null, url: '', command: tsx('scripts/delay-proxy.ts', '--targets', leafPorts.join(','), '--delay-ms', String(o.oneWayMs)), env: {} };
        state.started.push(proxy);
        launch(dir, proxy);
        save();
        const { control, ports } = await proxyPorts(dir, proxy);
        proxy.control = control;
        proxy.url = `http://127.0.0.1:${control}`;
        hubUrls = ports.map((p) => `nats-leaf://127.0.0.1:${p}`);
      }
      const plans: NatsServerPlan[] = [];
      const routes = o.nats > 1 ? await Promise.all(Array.from({ length: o.nats }, freePort)) : [];
      for (let i = 1; i <= o.nats; i++) {
        const name = `${region}-nats-${i}`;
        const plan: NatsServerPlan = { region, name, port: await freePort(), httpPort: await freePort(), storeDir: join(dir, 'nats', name) };
        if (o.nats > 1) plan.cluster = { port: routes[i - 1] as number, routes };
        if (isHub) {
          plan.leafPort = await freePort();
          leafPorts.push(plan.leafPort);
          // Each replica region reaches the hub through its own proxy: the hub must not tell leafs to redial around it.
          plan.leafAdvertise = '127.0.0.1:1';
        } else plan.hubUrls = hubUrls as string[];
        plans.push(plan);
      }
      for (const plan of plans) {
        mkdirSync(join(dir, 'nats'), { recursive: true });
        const conf = join(dir, 'nats', `${plan.name}.conf`);
        writeFileSync(conf, natsServerConfig(plan));
        const server: Started = { name: plan.name as string, kind: 'nats', region, pid: null, url: `nats://127.0.0.1:${plan.port}`, command: ['nats-server', '-c', conf], env: {}, ready: `http://127.0.0.1:${plan.httpPort}/healthz?js-enabled-only=true` };
        state.started.push(server);
        launch(dir, server);
        save();
      }
      for (const p of state.started.filter((s) => s.kind === 'nats' && s.region === region)) await ready(dir, p);
      if (o.nats > 1) {
        const monitor = (plans[0] as NatsServerPlan).httpPort;
        await waitUntil(`${region}'s JetStream meta leader`, dir, async () => Boolean((await json(`http://127.0.0.1:${monitor}/jsz`))['meta_cluster']?.leader));
      }
    }
    const hubMonitors = state.started.filter((p) => p.kind === 'nats' && p.region === origin).map((p) => (p.ready as string).replace(/\/healthz.*/, '/leafz'));
    const leafs = (o.regions.length - 1) * o.nats;
    await waitUntil('leafnodes', dir, async () => (await Promise.all(hubMonitors.map(async (u) => Number((await json(u))['leafnodes'] ?? 0)))).reduce((a, b) => a + b, 0) >= leafs);

    const originUrl: string[] = [];
    for (const region of o.regions) {
      const natsUrl = state.started.filter((p) => p.kind === 'nats' && p.region === region).map((p) => p.url).join(',');
      // Hot standbys are the origin region's: a replica region's process applies what the origin ships and writes nothing.
      const processes = region === origin ? o.processes : 1;
      for (let i = 1; i <= processes; i++) {
        const name = `${region}-${i}`;
        const port = await freePort();
        const url = `http://127.0.0.1:${port}`;
        if (region === origin && i === 1) originUrl.push(url);
        const dataDir = join(dir, 'data', name);
        const service: Started = {
          name,
          kind: 'service',
          region,
          pid: null,
          url,
          data_dir: dataDir,
          command: tsx('src/main.ts'),
          env: {
            SERVICE_HOST: '127.0.0.1',
            SERVICE_PORT: String(port),
            SERVICE_DATA_DIR: dataDir,
            SERVICE_REGIONS: o.regions.join(','),
            SERVICE_REGION_TRANSPORT: 'jetstream',
            SERVICE_REGION: region,
            SERVICE_NATS_URL: natsUrl,
            SERVICE_NATS_REPLICAS: String(o.nats),
            SERVICE_ORIGIN_URL: originUrl[0] as string,
            SERVICE_ROOT_ORG_ID: state.root.org_id,
            SERVICE_ROOT_API_KEY: state.root.api_key,
            SERVICE_OPERATOR_KEY: state.operator_key,
            // Several processes share the origin region through its commit stream and write leases.
            ...(o.processes > 1 && region === origin ? { SERVICE_COMMIT: 'quorum', SERVICE_PROCESS_NAME: name, SERVICE_PUBLIC_URL: url } : {}),
          },
          ready: `${url}/health`,
        };
        state.started.push(service);
        launch(dir, service);
        save();
      }
    }
    for (const p of state.started.filter((s) => s.kind === 'service')) await ready(dir, p);
  } catch (error) {
    await stopAll(state);
    save();
    throw error;
  }
  out({
    regions: o.regions.map((region) => {
      const mine = (kind: Kind) => state.started.filter((p) => p.kind === kind && p.region === region);
      const proxy = mine('proxy')[0];
      return {
        name: region,
        // Each process answers for its region; the first is the one to send a region's traffic to (docs/regions.md).
        url: mine('service')[0]?.url,
        processes: mine('service').map((p) => ({ name: p.name, url: p.url, pid: p.pid, data_dir: p.data_dir })),
        nats: mine('nats').map((p) => ({ name: p.name, url: p.url, pid: p.pid })),
        ...(proxy ? { proxy_pid: proxy.pid } : {}),
      };
    }),
    origin,
    root: state.root,
    operator_key: state.operator_key,
  });
}

function find(state: State, name: string, kinds: Kind[]): Started {
  const p = state.started.find((s) => s.name === name && kinds.includes(s.kind));
  if (!p) throw new UsageError(`no process named ${name} (names: ${state.started.filter((s) => kinds.includes(s.kind)).map((s) => s.name).join(', ')})`);
  return p;
}

async function kill(dir: string, name: string): Promise<void> {
  const state = readState(dir);
  const p = find(state, name, ['service', 'nats']);
  const pid = p.pid;
  const wasAlive = alive(pid);
  if (wasAlive) process.kill(pid as number, 'SIGKILL');
  await waitUntil(`${name} to exit`, dir, async () => !alive(pid), undefined, 10_000);
  p.pid = null;
  writeState(dir, state);
  out({ killed: name, pid, was_running: wasAlive });
}

async function start(dir: string, name: string): Promise<void> {
  const state = readState(dir);
  const p = find(state, name, ['service', 'nats']);
  if (alive(p.pid)) throw new UsageError(`${name} is running (pid ${p.pid})`);
  launch(dir, p);
  writeState(dir, state);
  await ready(dir, p);
  out({ started: name, pid: p.pid, url: p.url });
}

async function cutOrHeal(dir: string, verb: 'cut' | 'heal', name: string): Promise<void> {
  const state = readState(dir);
  if (!state.regions.includes(name)) {
    find(state, name, ['service', 'nats']);
    throw new UsageError(`${verb} ${name}: this deployment runs every process on the host's loopback, not in network namespaces, so one process's links cannot be ${verb === 'cut' ? 'cut' : 'healed'} apart from its region's; kill it instead, or ${verb} its region`);
  }
  // A replica region's links all pass through its own proxy; the origin's are every replica region's proxy.
  const proxies = state.started.filter((p) => p.kind === 'proxy' && (name === state.origin || p.region === name));
  const mode = verb === 'cut' ? 'blackhole' : 'up';
  for (const p of proxies) {
    const res = await fetch(`http://127.0.0.1:${p.control}/mode/${mode}`, { method: 'PUT' });
    if (!res.ok) throw new Error(`${p.name} refused ${mode}: ${res.status}`);
  }
  out({ [verb]: name, mode, proxies: proxies.map((p) => p.name) });
}

/** Services first (they flush and close their connections), then proxies and servers; each by its own PID. */
async function stopAll(state: State): Promise<string[]> {
  const order: Kind[] = ['service', 'proxy', 'nats'];
  const stopped: string[] = [];
  for (const kind of order) {
    const group = state.started.filter((p) => p.kind === kind && alive(p.pid));
    for (const p of group) process.kill(p.pid as number, 'SIGTERM');
    const deadline = Date.now() + 15_000;
    while (group.some((p) => alive(p.pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    for (const p of group) {
      if (alive(p.pid)) process.kill(p.pid as number, 'SIGKILL');
      stopped.push(p.name);
      p.pid = null;
    }
  }
  return stopped;
}

async function down(dir: string): Promise<void> {
  const state = readState(dir);
  const stopped = await stopAll(state);
  writeState(dir, state);
  out({ down: stopped });
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      dir: { type: 'string' },
      regions: { type: 'string', default: DEFAULT_REGIONS },
      processes: { type: 'string', default: '1' },
      nats: { type: 'string', default: '1' },
      'one-way-ms': { type: 'string', default: '0' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [verb, name] = positionals;
  if (values.help) return void console.log(USAGE);
  if (!values.dir) throw new UsageError('--dir is required');
  const dir = resolve(values.dir);
  const needName = () => {
    if (!name) throw new UsageError(`${verb} needs a NAME`);
    return name;
  };
  switch (verb) {
    case 'up': {
      const regions = values.regions.split(',').map((r) => r.trim()).filter(Boolean);
      const processes = Number(values.processes);
      const nats = Number(values.nats);
      const oneWayMs = Number(values['one-way-ms']);
      if (regions.length === 0) throw new UsageError('--regions names at least one region');
      if (!Number.isInteger(processes) || processes < 1) throw new UsageError(`--processes must be 1 or more, got ${values.processes}`);
      if (nats !== 1 && nats !== 3) throw new UsageError(`--nats must be 1 or 3, got ${values.nats}`);
      if (!Number.isInteger(oneWayMs) || oneWayMs < 0) throw new UsageError(`--one-way-ms must be 0 or more, got ${values['one-way-ms']}`);
      return up(dir, { regions, processes, nats, oneWayMs });
    }
    case 'kill':
      return kill(dir, needName());
    case 'start':
      return start(dir, needName());
    case 'cut':
    case 'heal':
      return cutOrHeal(dir, verb, needName());
    case 'down':
      return down(dir);
    default:
      throw new UsageError(`unknown verb ${verb ?? '(none)'}\n${USAGE}`);
  }
}

main().catch((error: unknown) => {
  out({ error: error instanceof Error ? error.message : String(error) });
  process.exit(error instanceof UsageError ? 2 : 1);
});
