// Real nats-server processes for region tests (Debian's package, found on PATH), one JetStream domain per
// region with the origin as leafnode hub, and a TCP proxy of our own on each leafnode link that can delay,
// cut and black-hole it. Every process is killed by the PID this module started.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, Socket, type Server } from 'node:net';
import { join } from 'node:path';
import { natsServerConfig, type NatsServerPlan } from '../../src/regions/jetstream/nats-config.js';
import { freePort } from './free-port.js';

export const natsAvailable = spawnSync('nats-server', ['--version']).status === 0;


export interface NatsServer {
  readonly plan: NatsServerPlan;
  readonly url: string;
  pid(): number | undefined;
  /** SIGKILL by default, as in a crash */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** starts it again on the same config and store */
  start(): Promise<void>;
  /** GET on its monitoring port */
  monitor(path: string): Promise<any>;
}

/** `launcher` runs it through a command that execs it, e.g. ['ip', 'netns', 'exec', name] for a namespace. */
export async function startNatsServer(plan: NatsServerPlan, dir: string, launcher: string[] = []): Promise<NatsServer> {
  const host = plan.host ?? '127.0.0.1';
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, `${plan.region}.conf`);
  writeFileSync(conf, natsServerConfig(plan));
  let child: ChildProcess | undefined;
  let log = '';
  const reap = () => child?.kill('SIGKILL');
  const monitor = async (path: string) => {
    const res = await fetch(`http://${host}:${plan.httpPort}${path}`);
    return res.json();
  };
  const server: NatsServer = {
    plan,
    url: `nats://${host}:${plan.port}`,
    pid: () => child?.pid,
    async kill(signal = 'SIGKILL') {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const gone = new Promise((r) => c.once('exit', r));
      c.kill(signal);
      await gone;
      process.removeListener('exit', reap);
    },
    async start() {
      log = '';
      const argv = [...launcher, 'nats-server', '-c', conf];
      child = spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
      process.once('exit', reap);
      const deadline = Date.now() + 20_000;
      for (;;) {
        try {
          const res = await fetch(`http://${host}:${plan.httpPort}/healthz?js-enabled-only=true`);
          if (res.ok) return;
        } catch {
          // not listening yet
        }
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`nats-server ${plan.region} did not start: ${log}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    monitor,
  };
  await server.start();
  return server;
}

export type ProxyMode = 'up' | 'cut' | 'blackhole';

export interface Proxy {
  readonly port: number;
  /**
   * cut: connections closed and refused. blackhole: connections kept open and nothing read either way, as
   * with every packet lost and TCP retransmitting: the peers see silence until their pings give up.
   */
  setMode(mode: ProxyMode): void;
  /** one-way delay added to every chunk, ms */
  setDelay(ms: number): void;
  close(): Promise<void>;
}

/** Forwards a loopback port to `targetPort`, holding each chunk `delayMs` in each direction, in order. */
export async function startProxy(targetPort: number): Promise<Proxy> {
  let mode: ProxyMode = 'up';
  let delayMs = 0;
  const pairs = new Set<[Socket, Socket]>();
  const pipe = (from: Socket, to: Socket) => {
    let last = 0;
    from.on('data', (chunk: Buffer) => {
      if (mode === 'cut') return;
      if (delayMs === 0 && last <= Date.now()) return void to.write(chunk);
      const at = Math.max(Date.now() + delayMs, last);
      last = at;
      setTimeout(() => !to.destroyed && to.write(chunk), at - Date.now());
    });
  };
  const server: Server = createServer((client) => {
    if (mode === 'cut') return void client.destroy();
    const upstream = new Socket();
    upstream.connect(targetPort, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    pipe(client, upstream);
    pipe(upstream, client);
    if (mode === 'blackhole') client.pause(), upstream.pause();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    setMode(next) {
      mode = next;
      for (const [a, b] of pairs) {
        if (next === 'cut') a.destroy(), b.destroy();
        else if (next === 'blackhole') a.pause(), b.pause();
        else a.resume(), b.resume();
      }
    },
    setDelay(ms) {
      delayMs = ms;
    },
    async close() {
      for (const [a, b] of pairs) a.destroy(), b.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A service process's environment as one region of a JetStream deployment on `nats`. */
export function jetstreamEnv(nats: NatsRegions, regions: readonly string[], region: string): Record<string, string> {
  return {
    SERVICE_REGIONS: regions.join(','),
    SERVICE_REGION_TRANSPORT: 'jetstream',
    SERVICE_REGION: region,
    SERVICE_NATS_URL: nats.servers.get(region)?.url as string,
    SERVICE_NATS_PULL_EXPIRES: '2s',
    // The tests compare every region's log entry by entry: the origin keeps all of it.
    SERVICE_WAL_COMPACT_INTERVAL_MS: '0',
  };
}

export interface NatsRegions {
  servers: Map<string, NatsServer>;
  /** the proxy on each replica region's leafnode link to the hub */
  proxies: Map<string, Proxy>;
  /** waits until the hub has a leafnode from every replica region */
  joined(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Each leaf has its own proxy in front of the one hub, so the hub can advertise none of them: it advertises
 * a closed port instead, and a leaf redials only its configured URL, its proxy (SCALE.md §5.3).
 */
const CLOSED_PORT = '127.0.0.1:1';

/** The origin (regions[0]) is the hub; every other region's server is a leaf dialling it through its own proxy. */
export async function startNatsRegions(regions: readonly string[], dir: string): Promise<NatsRegions> {
  const [origin, ...replicas] = regions as [string, ...string[]];
  const servers = new Map<string, NatsServer>();
  const proxies = new Map<string, Proxy>();
  const leafPort = await freePort();
  servers.set(origin, await startNatsServer({ region: origin, port: await freePort(), httpPort: await freePort(), storeDir: join(dir, origin), leafPort, leafAdvertise: CLOSED_PORT }, dir));
  for (const r of replicas) {
    const proxy = await startProxy(leafPort);
    proxies.set(r, proxy);
    servers.set(r, await startNatsServer({ region: r, port: await freePort(), httpPort: await freePort(), storeDir: join(dir, r), hubUrl: `nats-leaf://127.0.0.1:${proxy.port}` }, dir));
  }
  const hub = servers.get(origin) as NatsServer;
  const joined = async (timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const leafz = await hub.monitor('/leafz');
        if ((leafz.leafnodes ?? 0) >= replicas.length) return;
      } catch {
        // the hub is restarting
      }
      if (Date.now() > deadline) throw new Error(`leafnodes did not join the hub within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await joined();
  return {
    servers,
    proxies,
    joined,
    async stop() {
      for (const p of proxies.values()) await p.close();
      for (const s of servers.values()) await s.kill('SIGTERM');
    },
  };
}

/** A region's JetStream cluster of three nats-servers on loopback (routes between them), with its meta leader elected. */
export async function startNatsCluster(region: string, dir: string, extra: Partial<NatsServerPlan> = {}): Promise<NatsServer[]> {
  const routes = [await freePort(), await freePort(), await freePort()];
  const plans: NatsServerPlan[] = [];
  for (const [i, port] of routes.entries()) plans.push({ region, name: `${region}-nats-${i + 1}`, port: await freePort(), httpPort: await freePort(), storeDir: join(dir, `${region}-nats-${i + 1}`), cluster: { port, routes }, ...extra });
  // Started together: a server of a cluster waits for its peers before JetStream is up.
  const servers = await Promise.all(plans.map((plan) => startNatsServer(plan, join(dir, plan.name as string))));
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await servers[0]?.monitor('/jsz'))?.meta_cluster?.leader) return servers;
    } catch {
      // not answering yet
    }
    if (Date.now() > deadline) throw new Error(`the JetStream cluster of ${region} elected no meta leader within 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
