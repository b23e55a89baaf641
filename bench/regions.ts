// Cost of consistency levels: latency and throughput of PUT /organizations/attributes/{bucket} with
// local_region and all_regions, over three regions at 0 ms and 25 ms simulated one-way latency, with a
// single-region run as the baseline. The service runs as its own process so the load has the other core.
// With nats-server on PATH, the same rows again over JetStream: three nats-servers (leafnodes through our
// delay proxies), the origin's service process and two replica region processes, and two sustained rows, each
// timed until every region applied what was written (entries/s, batched): end to end (many HTTP writers at
// local_region, so the origin's front bounds it) and the transport (the origin's service in this process, its
// writes issued straight to the organization's actor: group commit, one stream message per batch and
// organization, mirrors, the replicas' consumers and LMDB apply; what SCALE.md §3.2 measured).
//   npm run bench -- regions [--duration 2] [--warmup 1] [--connections 32] [--sustained-connections 256]
//                            [--transport-writes 4096] [--only latency|sustained|transport]
import { parseArgs } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { streamName } from '../src/regions/jetstream/wire.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { encodeRequest } from './lib/connection.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { environment, environmentLine, formatTable, ms, writeResults, type Column } from './lib/report.js';
import { SERVICE_AUTH, startService, type ServiceProcess } from './lib/server-process.js';
import { natsAvailable, startNatsRegions } from '../test/support/nats.js';
import { removeDir, ROOT_ORG, startTestServer, tempDir } from '../test/support/server.js';

const USAGE = `usage: npm run bench -- regions [options]   (or: npx tsx bench/regions.ts [options])
  --duration S      measured seconds per row (default 2; --seconds is the same)
  --warmup S        unmeasured seconds before each row (default 1)
  --connections N   keep-alive connections, one request in flight on each (default 32)
  --sustained-connections N   writers of the end-to-end sustained JetStream row (default 256)
  --transport-writes N        writes in flight in the transport row (default 4096)
  --only ROWS       latency (the consistency rows), sustained (both JetStream entries/s rows) or transport
                    (only the transport's entries/s row); default all`;

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

interface Deployment {
  service: ServiceProcess;
  /** jetstream: the replica regions' processes */
  replicas: ServiceProcess[];
  /** jetstream: messages stored in the origin's WAL stream so far */
  streamMessages?(): Promise<number>;
  stop(): Promise<void>;
}

/** The origin's service to load, and everything else the scenario started, stopped after its rows. */
async function deploy(scenario: Scenario): Promise<Deployment> {
  if (scenario.transport === 'simulated') {
    const service = await startService({ SERVICE_REGIONS: scenario.regions, SERVICE_REPLICATION_LATENCY_MS: String(scenario.latencyMs) });
    return { service, replicas: [], stop: () => service.stop() };
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
  const streamMessages = async () => {
    const nc = await connect({ servers: nats.servers.get(regions[0] as string)?.url as string });
    try {
      return (await (await jetstreamManager(nc)).streams.info(streamName(regions[0] as string))).state.messages;
    } finally {
      await nc.close();
    }
  };
  return {
    service,
    replicas,
    streamMessages,
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

interface SustainedRow {
  /** http: writers over the origin's front; actor: writes issued to the origin's actor in this process */
  driven: 'http' | 'actor';
  /** HTTP connections, or writes kept in flight at the actor */
  connections: number;
  /** writes answered 2xx over the window, and their rate at the origin */
  written: number;
  origin_rps: number;
  errors: number;
  /** entries every region applied from the window's start until the last replica caught up */
  applied_everywhere: number;
  /** from the window's start until every region had applied everything written in it */
  elapsed_ms: number;
  entries_per_s: number;
  /** WAL stream messages over the same span: entries per message is the batching */
  messages: number;
}

const ORG = SERVICE_AUTH['Service-OrgID'] as string;

/** The lowest offset of the root organization applied across the replica regions. */
async function appliedEverywhere(replicas: ServiceProcess[], org = ORG): Promise<number> {
  const offsets = await Promise.all(
    replicas.map(async (r) => {
      const res = await fetch(`${r.url}/replica/organizations/${org}`);
      return res.status === 200 ? ((await res.json()) as { result: { offset: number } }).result.offset : 0;
    }),
  );
  return Math.min(...offsets);
}

async function caughtUp(service: ServiceProcess, timeoutMs = 180_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const body = (await (await fetch(`${service.url}/health`)).json()) as { result: { regions: Array<{ state: string; lag_entries: number }> } };
    if (body.result.regions.every((r) => r.state === 'local' || r.lag_entries === 0)) return;
    if (performance.now() > deadline) throw new Error(`the replica regions did not catch up within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Many writers at local_region for the window, then the wait until every region applied all of it: the
 * entries/s is what the whole pipeline (origin commit, one stream message per group-commit batch and
 * organization, mirror, replica apply and flush, ack) sustains end to end, not what the origin answers.
 */
async function sustained(deployment: Deployment, s: { durationMs: number; warmupMs: number; connections: number }): Promise<SustainedRow> {
  const { service, replicas } = deployment;
  if (s.warmupMs > 0) await measure(service, 'local_region', { ...s, durationMs: s.warmupMs, warmupMs: 0 });
  await caughtUp(service);
  const floor0 = await appliedEverywhere(replicas);
  const messages0 = (await deployment.streamMessages?.()) ?? 0;
  const t0 = performance.now();
  const load = await measure(service, 'local_region', { ...s, warmupMs: 0 });
  await caughtUp(service);
  const elapsed = performance.now() - t0;
  const applied = (await appliedEverywhere(replicas)) - floor0;
  return {
    driven: 'http',
    connections: s.connections,
    written: load.requests - load.errors,
    origin_rps: load.rps,
    errors: load.errors,
    applied_everywhere: applied,
    elapsed_ms: Math.round(elapsed),
    entries_per_s: Math.round(applied / (elapsed / 1000)),
    messages: ((await deployment.streamMessages?.()) ?? 0) - messages0,
  };
}

/**
 * The transport alone, as SCALE.md §3.2 measured it: the origin's service runs in this process and its
 * writes go straight to the root organization's actor, `inFlight` at a time, so no HTTP front bounds them.
 * Everything after the actor is the real path: group commit to the LMDB WAL, the links, one stream message
 * per (group-commit batch, organization), the mirrors, the replica processes' consumers, LMDB apply and
 * flush, and their acknowledgements. Timed like the end-to-end row, until every region applied it all.
 */
async function transportSustained(s: { durationMs: number; warmupMs: number }, inFlight: number): Promise<SustainedRow> {
  const regions = THREE.split(',');
  const origin = regions[0] as string;
  const dir = tempDir('identity-bench-nats-');
  const nats = await startNatsRegions(regions, dir);
  const env = (region: string) => ({ SERVICE_REGIONS: THREE, SERVICE_REGION_TRANSPORT: 'jetstream', SERVICE_REGION: region, SERVICE_NATS_URL: nats.servers.get(region)?.url as string });
  const replicas: ServiceProcess[] = [];
  let server: Awaited<ReturnType<typeof startTestServer>> | undefined;
  try {
    for (const region of regions.slice(1)) replicas.push(await startService(env(region)));
    server = await startTestServer({ ...env(origin), SERVICE_HOST: '127.0.0.1' }, { warn: (m) => console.error(`  origin: ${m}`) });
    const { service } = server;
    const actor = service.registry.get(ROOT_ORG);
    if (!actor) throw new Error('the root organization is missing');
    const settled = async (timeoutMs = 180_000) => {
      const deadline = performance.now() + timeoutMs;
      while (!service.regions.views().every((r) => r.state === 'local' || r.lag_entries === 0)) {
        if (performance.now() > deadline) throw new Error(`the replica regions did not catch up within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    let counter = 0;
    let errors = 0;
    const write = () => actor.execute({ kind: 'SetAttributes', bucket: 'end_user_read_write', attributes: { counter: counter++, note: 'bench' }, replace: true }).then(
      () => {},
      () => void errors++,
    );
    /** `inFlight` writers, each issuing its next write when the last is durable locally, for `ms`. */
    const drive = async (ms: number) => {
      const until = performance.now() + ms;
      let written = 0;
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (performance.now() < until) {
            await write();
            written++;
          }
        }),
      );
      return written;
    };
    if (s.warmupMs > 0) await drive(s.warmupMs);
    await settled();
    const streamMessages = async () => {
      const nc = await connect({ servers: nats.servers.get(origin)?.url as string });
      try {
        return (await (await jetstreamManager(nc)).streams.info(streamName(origin))).state.messages;
      } finally {
        await nc.close();
      }
    };
    const floor0 = await appliedEverywhere(replicas, ROOT_ORG);
    const messages0 = await streamMessages();
    const errors0 = errors;
    const t0 = performance.now();
    const written = await drive(s.durationMs);
    const writeMs = performance.now() - t0;
    await settled();
    const elapsed = performance.now() - t0;
    const applied = (await appliedEverywhere(replicas, ROOT_ORG)) - floor0;
    return {
      driven: 'actor',
      connections: inFlight,
      written: written - (errors - errors0),
      origin_rps: Math.round(written / (writeMs / 1000)),
      errors: errors - errors0,
      applied_everywhere: applied,
      elapsed_ms: Math.round(elapsed),
      entries_per_s: Math.round(applied / (elapsed / 1000)),
      messages: (await streamMessages()) - messages0,
    };
  } finally {
    await server?.stop();
    for (const r of replicas) await r.stop();
    await nats.stop();
    removeDir(dir);
    if (server) removeDir(server.dataDir);
  }
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      seconds: { type: 'string' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '32' },
      'sustained-connections': { type: 'string', default: '256' },
      'transport-writes': { type: 'string', default: '4096' },
      only: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const s = {
    durationMs: numberFlag('duration', values.duration ?? values.seconds ?? '2', 0.1, USAGE) * 1000,
    warmupMs: numberFlag('warmup', values.warmup, 0, USAGE) * 1000,
    connections: Math.floor(numberFlag('connections', values.connections, 1, USAGE)),
  };
  const only = values.only;
  if (only !== undefined && only !== 'latency' && only !== 'sustained' && only !== 'transport') throw new Error(`--only takes latency, sustained or transport, got "${only}"\n${USAGE}`);
  const sustainedConnections = Math.floor(numberFlag('sustained-connections', values['sustained-connections'], 1, USAGE));
  const transportWrites = Math.floor(numberFlag('transport-writes', values['transport-writes'], 1, USAGE));
  const env = environment();
  const rows: Row[] = [];
  for (const scenario of only === 'sustained' || only === 'transport' ? [] : SCENARIOS) {
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
  const baseline = rows[0] as Row | undefined;
  for (const r of rows) r.vsOneRegion = baseline ? r.rps / baseline.rps : NaN;

  const sustainedRows: SustainedRow[] = [];
  if (only !== 'latency' && natsAvailable) {
    if (only !== 'transport') {
      const deployment = await deploy({ transport: 'jetstream', regions: THREE, latencyMs: 0, levels: ['local_region'] });
      try {
        const row = await sustained(deployment, { ...s, connections: sustainedConnections });
        sustainedRows.push(row);
        console.error(`  jetstream sustained over HTTP, ${sustainedConnections} writers: ${row.entries_per_s} entries/s applied in every region`);
      } finally {
        await deployment.stop();
      }
    }
    const row = await transportSustained(s, transportWrites);
    sustainedRows.push(row);
    console.error(`  jetstream transport, ${transportWrites} writes in flight at the actor: ${row.entries_per_s} entries/s applied in every region`);
  } else if (only !== 'latency') console.error('  jetstream sustained row skipped: nats-server is not on PATH');

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
  if (rows.length > 0) {
    console.log(`\nPUT /organizations/attributes/{bucket}: ${s.connections} keep-alive connections, ${s.durationMs / 1000} s per row, durable commits\n`);
    console.log(formatTable(columns, rows));
  }
  if (sustainedRows.length > 0) {
    const sustainedColumns: Column<SustainedRow>[] = [
      { title: 'measures', value: (r) => (r.driven === 'http' ? 'end to end (HTTP front)' : 'transport (writes at the actor)') },
      { title: 'writers', value: (r) => r.connections },
      { title: 'written', value: (r) => r.written },
      { title: 'origin writes/s', value: (r) => r.origin_rps },
      { title: 'errors', value: (r) => r.errors },
      { title: 'applied everywhere', value: (r) => r.applied_everywhere },
      { title: 'until caught up', value: (r) => `${(r.elapsed_ms / 1000).toFixed(1)} s`, align: 'right' },
      { title: 'entries/s (all regions)', value: (r) => r.entries_per_s },
      { title: 'stream msgs', value: (r) => r.messages },
      { title: 'entries/msg', value: (r) => (r.messages ? (r.applied_everywhere / r.messages).toFixed(1) : '-'), align: 'right' },
    ];
    console.log(`\nJetStream, 3 regions, 0 ms links: local_region attribute writes for ${s.durationMs / 1000} s, timed until every region applied them (end to end: PUTs from ${sustainedConnections} HTTP writers; transport: ${transportWrites} writes in flight at the origin's actor, in process)\n`);
    console.log(formatTable(sustainedColumns, sustainedRows));
  }
  console.log(`\n${environmentLine(env)}`);
  console.log(`written to ${writeResults('regions', env, { settings: { ...s, sustainedConnections, transportWrites, only }, rows, sustained: sustainedRows })}`);
}

runIfMain(import.meta.url, main);
