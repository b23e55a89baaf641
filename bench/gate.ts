// What Gate adds over calling the upstream directly: p50/p99 and requests per second with no plugin, with
// validate-jwt (keys cached), with enrichment (token-translation-upgrade on a cache hit), events on and off,
// beside http-proxy doing the same proxying as the reference; and the events per second POST /gate/events
// ingests. Every server is its own process; closed loop over keep-alive connections.
//   npm run bench -- gate [--seconds 3] [--connections 16]
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent } from 'undici';
import { stringify } from 'yaml';
import { heartbeat } from '../src/gate/events.js';
import { spawnNode, type NodeProcess } from '../test/support/process.js';
import { removeDir, tempDir } from '../test/support/server.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { cpuSeconds } from './lib/process-cpu.js';
import { encodeRequest } from './lib/connection.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { environment, environmentLine, formatTable, ms, writeResults } from './lib/report.js';
import { SERVICE_AUTH, startServer, startService, type ServerProcess } from './lib/server-process.js';

const USAGE = `usage: npm run bench -- gate [options]   (or: npx tsx bench/gate.ts [options])
  --seconds N       measured seconds per case, after 1 s of warm-up (default 3)
  --connections N   keep-alive connections of the load generator (default 16)
  --only TEXT       run only the cases whose name contains TEXT (the direct and http-proxy cases always run: they are the baselines)
  --baseline DIR    also run the no-plugin cases through the Gate of another checkout (DIR/src/gate/main.ts),
                    e.g. \`git archive <commit> src package.json tsconfig.json | tar -x -C DIR\` with DIR/node_modules linked
  --profile         run each Gate with --cpu-prof; profiles in bench/results/profiles/gate-<case>/
                    (summarize with: npm run bench -- profile-summary <file>)`;

interface Row {
  name: string;
  rps: number;
  p50_us: number;
  p99_us: number;
  added_p50_us: number;
  added_p99_us: number;
  vs_no_plugin: number;
  vs_http_proxy: number;
  /** CPU time of the proxy (or upstream) process per request, microseconds */
  cpu_us_per_request: number | undefined;
  /** CPU of the identity service over the case, % of one core (events ingested, JWKS, mint) */
  service_cpu_percent: number;
  errors: number;
}

async function spawnGate(dir: string, name: string, doc: unknown, profile: boolean, root = '.'): Promise<{ proc: NodeProcess; url: string }> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, stringify(doc));
  const nodeArgs = profile ? ['--cpu-prof', `--cpu-prof-dir=bench/results/profiles/gate-${name}`] : [];
  const proc = await spawnNode({ script: join(root, 'src/gate/main.ts'), args: ['--config', file], nodeArgs, ready: /gate listening on [^:]+:(\d+)/, timeoutMs: 60_000 });
  return { proc, url: `http://127.0.0.1:${proc.ready[1]}` };
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { seconds: { type: 'string', default: '3' }, connections: { type: 'string', default: '16' }, only: { type: 'string' }, baseline: { type: 'string' }, profile: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) return console.log(USAGE);
  const seconds = numberFlag('seconds', values.seconds, 0.5, USAGE);
  const connections = Math.floor(numberFlag('connections', values.connections, 1, USAGE));
  const env = environment();
  const dir = tempDir('gate-bench-');
  const servers: ServerProcess[] = [];
  const procs: NodeProcess[] = [];
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  let mapper: http.Server | undefined;
  try {
    const service = await startService();
    servers.push(service);
    const upstream = await startServer('bench/hello-server.ts');
    servers.push(upstream);
    const post = async (path: string, body: unknown) => {
      const r = await agent.request({ origin: service.url, path, method: 'POST', headers: { ...service.auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: r.statusCode, body: (await r.body.json()) as any };
    };
    const person = (await post('/persons', { handles: [{ type: 'email_address', value: 'bench@example.com' }] })).body.result.person_id as string;
    const token = (await post(`/persons/${person}/mint-token`, {})).body.result as string;
    mapper = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ person_id: person, custom_claims: { plan: 'gold' } })));
    });
    mapper.listen(0, '127.0.0.1');
    await once(mapper, 'listening');
    const mapUrl = `http://127.0.0.1:${(mapper.address() as AddressInfo).port}/map`;

    const svc = { base_url: service.url, org_id: SERVICE_AUTH['Service-OrgID'], api_key: SERVICE_AUTH['Service-API-Key'] };
    const gateDoc = (plugins: unknown[], events: boolean) => ({
      gate: { port: 0, host: '127.0.0.1', default: { target: upstream.url }, plugins, service: svc, events: { enabled: events } },
    });
    const jwt = { id: 'jwt', type: 'validate-jwt' };
    const enrich = { id: 'enrich', type: 'token-translation-upgrade', parameters: { map_token_endpoint: mapUrl, header_with_token: 'X-Legacy-Token' } };
    const start = (name: string, doc: unknown, root?: string) => async () => {
      const g = await spawnGate(dir, name, doc, values.profile, root);
      procs.push(g.proc);
      return { url: g.url, pid: g.proc.child.pid as number };
    };
    const reference = await startServer('bench/http-proxy-server.ts', { env: { UPSTREAM: upstream.url } });
    servers.push(reference);

    const auth = { Authorization: `Bearer ${token}` };
    const fixed = (s: ServerProcess) => async () => ({ url: s.url, pid: s.pid });
    const all: Array<{ name: string; url: () => Promise<{ url: string; pid: number }>; headers?: Record<string, string> }> = [
      { name: 'upstream directly', url: fixed(upstream) },
      { name: 'http-proxy (reference)', url: fixed(reference) },
      { name: 'gate, no plugin, events off', url: start('none-off', gateDoc([], false)) },
      { name: 'gate, no plugin, events on', url: start('none-on', gateDoc([], true)) },
      ...(values.baseline === undefined
        ? []
        : [
            { name: 'baseline gate, no plugin, events off', url: start('base-none-off', gateDoc([], false), values.baseline) },
            { name: 'baseline gate, no plugin, events on', url: start('base-none-on', gateDoc([], true), values.baseline) },
          ]),
      { name: 'gate, validate-jwt, events off', url: start('jwt-off', gateDoc([jwt], false)), headers: auth },
      { name: 'gate, validate-jwt, events on', url: start('jwt-on', gateDoc([jwt], true)), headers: auth },
      { name: 'gate, enrichment (cache hit), events off', url: start('enrich-off', gateDoc([enrich], false)), headers: { 'X-Legacy-Token': 'legacy-bench' } },
      { name: 'gate, enrichment (cache hit), events on', url: start('enrich-on', gateDoc([enrich], true)), headers: { 'X-Legacy-Token': 'legacy-bench' } },
    ];
    const cases = all.filter((c, i) => i <= 1 || values.only === undefined || c.name.includes(values.only));
    const results: Array<{ name: string; result: LoadResult; serviceCpu: number }> = [];
    for (const c0 of cases) {
      const c = { ...c0, ...(await c0.url()) };
      const host = new URL(c.url).host;
      const bytes = encodeRequest(host, { method: 'GET', path: '/api/items', headers: c.headers ?? {} });
      // The service's CPU over the case (warm-up included): what ingesting the case's events costs it.
      const t0 = performance.now();
      const cpu0 = cpuSeconds(service.pid) ?? 0;
      const result = await runLoad({ url: c.url, request: () => bytes, connections, durationMs: seconds * 1000, warmupMs: 1000, serverPid: c.pid });
      const serviceCpu = ((cpuSeconds(service.pid) ?? 0) - cpu0) / ((performance.now() - t0) / 1000);
      results.push({ name: c.name, result, serviceCpu });
    }
    const direct = results[0]!.result.latency;
    const noPlugin = results.find((r) => r.name === 'gate, no plugin, events off')?.result.rps ?? Number.NaN;
    const reference_ = results.find((r) => r.name === 'http-proxy (reference)')!.result.rps;
    const rows: Row[] = results.map(({ name, result, serviceCpu }) => ({
      name,
      rps: Math.round(result.rps),
      p50_us: result.latency.p50_us,
      p99_us: result.latency.p99_us,
      added_p50_us: result.latency.p50_us - direct.p50_us,
      added_p99_us: result.latency.p99_us - direct.p99_us,
      vs_no_plugin: result.rps / noPlugin,
      vs_http_proxy: result.rps / reference_,
      cpu_us_per_request: result.serverCpuUsPerRequest,
      service_cpu_percent: Math.round(serviceCpu * 100),
      errors: result.errors,
    }));

    // Ingest: batches of 200 heartbeats with fresh ids, 4 senders at once.
    const ingestMs = seconds * 1000;
    let ingested = 0;
    const until = performance.now() + ingestMs;
    const origin = { orgId: svc.org_id ?? '' };
    const sender = async () => {
      while (performance.now() < until) {
        const batch = Array.from({ length: 200 }, (_, i) => heartbeat(origin, 'a0000000-0000-4000-8000-000000000000', i + 1, Date.now()));
        const r = await post('/gate/events', batch);
        if (r.status === 202) ingested += r.body.result.accepted as number;
      }
    };
    const t0 = performance.now();
    await Promise.all([sender(), sender(), sender(), sender()]);
    const ingestRate = Math.round(ingested / ((performance.now() - t0) / 1000));

    console.log(
      formatTable<Row>(
        [
          { title: 'case', value: (r) => r.name, align: 'left' },
          { title: 'req/s', value: (r) => r.rps },
          { title: 'p50 ms', value: (r) => ms(r.p50_us), align: 'right' },
          { title: 'p99 ms', value: (r) => ms(r.p99_us), align: 'right' },
          { title: 'added p50', value: (r) => ms(r.added_p50_us), align: 'right' },
          { title: 'added p99', value: (r) => ms(r.added_p99_us), align: 'right' },
          { title: 'vs gate no plugin', value: (r) => `${(r.vs_no_plugin * 100).toFixed(0)}%`, align: 'right' },
          { title: 'vs http-proxy', value: (r) => `${(r.vs_http_proxy * 100).toFixed(0)}%`, align: 'right' },
          { title: 'proxy CPU µs/req', value: (r) => (r.cpu_us_per_request === undefined ? '-' : r.cpu_us_per_request.toFixed(1)), align: 'right' },
          { title: 'service CPU', value: (r) => `${r.service_cpu_percent}%`, align: 'right' },
          { title: 'errors', value: (r) => r.errors },
        ],
        rows,
      ),
    );
    const rpsOf = (name: string) => rows.find((r) => r.name === name)?.rps;
    for (const kind of ['gate, no plugin', 'gate, validate-jwt', 'gate, enrichment (cache hit)', 'baseline gate, no plugin']) {
      const off = rpsOf(`${kind}, events off`);
      const on = rpsOf(`${kind}, events on`);
      if (off !== undefined && on !== undefined) console.log(`events on costs ${kind}: ${(((off - on) / off) * 100).toFixed(0)}% of throughput`);
    }
    console.log(`\nPOST /gate/events ingest: ${ingestRate} events/s (batches of 200, 4 senders)`);
    console.log(`targets: validate-jwt adds <= 0.3 ms at p50; validate-jwt throughput >= 50% of no plugin; gate with no plugin at least`);
    console.log(`as fast as http-proxy at p50 and in req/s; events on cost <= 10% of throughput (the service's CPU, on the same`);
    console.log(`machine, ingests them: see its column). "proxy CPU µs/req" is the proxy process alone, steadier than req/s on a busy machine.`);
    console.log(`\n${environmentLine(env)}`);
    console.log(`results: ${writeResults('gate', env, { seconds, connections, rows, ingest_events_per_s: ingestRate })}`);
  } finally {
    for (const p of procs) await p.kill('SIGTERM').catch(() => p.kill('SIGKILL'));
    for (const s of servers.reverse()) await s.stop().catch(() => {});
    mapper?.close();
    await agent.close();
    removeDir(dir);
  }
}

runIfMain(import.meta.url, main);
