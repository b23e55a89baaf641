// Cost of consistency levels: latency and throughput of PUT /organizations/attributes/{bucket} with
// local_region and all_regions, over three regions at 0 ms and 25 ms simulated one-way latency, with a
// single-region run as the baseline. The service runs as its own process so the load has the other core.
// With nats-server on PATH, the same rows again over JetStream: three nats-servers (leafnodes through our
// delay proxies), the origin's service process and two replica region processes.
//   npm run bench -- regions [--duration 2] [--warmup 1] [--connections 32]
import { parseArgs } from 'node:util';
import { numberFlag, runIfMain } from './lib/cli.js';
import { encodeRequest } from './lib/connection.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { environment, environmentLine, formatTable, ms, writeResults, type Column } from './lib/report.js';
import { startService, type ServiceProcess } from './lib/server-process.js';
import { natsAvailable, startNatsRegions } from '../test/support/nats.js';
import { removeDir, tempDir } from '../test/support/server.js';

const USAGE = `usage: npm run bench -- regions [options]   (or: npx tsx bench/regions.ts [options])
  --duration S      measured seconds per row (default 2; --seconds is the same)
  --warmup S        unmeasured seconds before each row (default 1)
  --connections N   keep-alive connections, one request in flight on each (default 32)`;

type Consistency = 'local_region' | 'all_regions';

type TransportKind = 'simulated' | 'jetstream';

interface Row extends LoadResult {
  transport: TransportKind;
  regions: number;
  link_latency_ms: number;
  consistency: Consistency;
  /** requests/s as a share of the single-region row */
  vsOneRegion?: number;
}

interface Scenario {
  transport: TransportKind;
  regions: string;
  latencyMs: number;
  levels: Consistency[];
}

const THREE = 'europe-belgium,us-iowa,asia-japan';
const SCENARIOS: Scenario[] = [
  { transport: 'simulated', regions: 'europe-belgium', latencyMs: 0, levels: ['local_region'] },
  { transport: 'simulated', regions: THREE, latencyMs: 0, levels: ['local_region', 'all_regions'] },
  { transport: 'simulated', regions: THREE, latencyMs: 25, levels: ['local_region', 'all_regions'] },
  ...(natsAvailable
    ? ([
        { transport: 'jetstream', regions: THREE, latencyMs: 0, levels: ['local_region', 'all_regions'] },
        { transport: 'jetstream', regions: THREE, latencyMs: 25, levels: ['local_region', 'all_regions'] },
      ] satisfies Scenario[])
    : []),
];

/** The origin's service to load, and everything else the scenario started, stopped after its rows. */
async function deploy(scenario: Scenario): Promise<{ service: ServiceProcess; stop(): Promise<void> }> {
  if (scenario.transport === 'simulated') {
    const service = await startService({ SERVICE_REGIONS: scenario.regions, SERVICE_REPLICATION_LATENCY_MS: String(scenario.latencyMs) });
    return { service, stop: () => service.stop() };
  }
  const regions = scenario.regions.split(',');
  const dir = tempDir('identity-bench-nats-');
  const nats = await startNatsRegions(regions, dir);
  // Each leafnode link passes one proxy: its delay is the one-way latency in both directions.
  for (const proxy of nats.proxies.values()) proxy.setDelay(scenario.latencyMs);
  const env = (region: string) => ({ SERVICE_REGIONS: scenario.regions, SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_REGION: region, SERVICE_NATS_URL: nats.servers.get(region)?.url as string });
  const replicas: ServiceProcess[] = [];
  for (const region of regions.slice(1)) replicas.push(await startService(env(region)));
  const service = await startService(env(regions[0] as string));
  return {
    service,
    async stop() {
      await service.stop();
      for (const r of replicas) await r.stop();
      await nats.stop();
      removeDir(dir);
    },
  };
}

function measure(service: ServiceProcess, consistency: Consistency, s: { durationMs: number; warmupMs: number; connections: number }): Promise<LoadResult> {
  const headers = { ...service.auth, 'Content-Type': 'application/json', 'Service-Required-Consistency': consistency };
  return runLoad({
    url: service.url,
    connections: s.connections,
    durationMs: s.durationMs,
    warmupMs: s.warmupMs,
    serverPid: service.pid,
    // A different value each time: replacing a set with an equal one changes nothing and ships nothing.
    request: (i) => encodeRequest('127.0.0.1', { method: 'PUT', path: '/organizations/attributes/end_user_read_write', headers, body: JSON.stringify({ counter: i, note: 'bench' }) }),
  });
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      seconds: { type: 'string' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '32' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const s = {
    durationMs: numberFlag('duration', values.duration ?? values.seconds ?? '2', 0.1, USAGE) * 1000,
    warmupMs: numberFlag('warmup', values.warmup, 0, USAGE) * 1000,
    connections: Math.floor(numberFlag('connections', values.connections, 1, USAGE)),
  };
  const env = environment();
  const rows: Row[] = [];
  for (const scenario of SCENARIOS) {
    const regions = scenario.regions.split(',').length;
    const deployment = await deploy(scenario);
    try {
      for (const level of scenario.levels) {
        const r = await measure(deployment.service, level, s);
        rows.push({ transport: scenario.transport, regions, link_latency_ms: scenario.latencyMs, consistency: level, ...r });
        console.error(`  ${scenario.transport}, ${regions} region(s), ${scenario.latencyMs} ms, ${level}: ${r.rps} req/s${r.errors ? `, ${r.errors} errors ${JSON.stringify(r.statuses)} ${r.failures.join('; ')}` : ''}`);
      }
    } finally {
      await deployment.stop();
    }
  }
  const baseline = rows[0] as Row;
  for (const r of rows) r.vsOneRegion = r.rps / baseline.rps;

  const columns: Column<Row>[] = [
    { title: 'transport', value: (r) => r.transport },
    { title: 'regions', value: (r) => r.regions },
    { title: 'link latency', value: (r) => `${r.link_latency_ms} ms`, align: 'right' },
    { title: 'consistency', value: (r) => r.consistency },
    { title: 'req/s', value: (r) => r.rps },
    { title: 'vs 1 region', value: (r) => `${(r.vsOneRegion ?? NaN).toFixed(2)}x`, align: 'right' },
    { title: 'p50 ms', value: (r) => ms(r.latency.p50_us), align: 'right' },
    { title: 'p99 ms', value: (r) => ms(r.latency.p99_us), align: 'right' },
    { title: 'max ms', value: (r) => ms(r.latency.max_us), align: 'right' },
    { title: 'errors', value: (r) => r.errors },
    { title: 'server µs/req', value: (r) => r.serverCpuUsPerRequest ?? '-', align: 'right' },
  ];
  console.log(`\nPUT /organizations/attributes/{bucket}: ${s.connections} keep-alive connections, ${s.durationMs / 1000} s per row, durable commits\n`);
  console.log(formatTable(columns, rows));
  console.log(`\n${environmentLine(env)}`);
  console.log(`written to ${writeResults('regions', env, { settings: s, rows })}`);
}

runIfMain(import.meta.url, main);
