// How fast does the authorization server issue access tokens by client_credentials, beside mint-token on the
// same service and beside panva's oidc-provider doing the same grant with JWT access tokens (ES256)?
// One service process serves both of its measurements; oidc-provider runs in its own process. Each is
// measured in a closed loop over keep-alive connections, the three in turn for several rounds; the table
// shows each one's median round, the JSON every round.
//   npm run bench -- oauth2 [--duration 2] [--connections 50] [--rounds 3]
import { parseArgs } from 'node:util';
import { numberFlag, runIfMain } from './lib/cli.js';
import { encodeRequest } from './lib/connection.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { createPersons } from './lib/persons.js';
import { count, environment, environmentLine, formatTable, ms, writeResults, type Column } from './lib/report.js';
import { SERVICE_AUTH, startServer, startService, type ServerProcess } from './lib/server-process.js';
import { BENCH_CLIENT } from './lib/oidc-provider-client.js';

const USAGE = `usage: npm run bench -- oauth2 [options]   (or: npx tsx bench/oauth2.ts [options])
  --duration <s>      seconds per measured run (default 2)
  --connections <n>   keep-alive connections of the load generator (default 50)
  --warmup <s>        unmeasured seconds before each run (default 1)
  --rounds <n>        rounds, taking the three servers in turn (default 3)
  --help              this text
Prints a table and ratios, and writes the figures to bench/results/oauth2-<time>.json.`;

interface Options {
  duration: number;
  connections: number;
  warmup: number;
  rounds: number;
}

function options(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '2' },
      connections: { type: 'string', default: '50' },
      warmup: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '3' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  return {
    duration: numberFlag('duration', values.duration, 0.1, USAGE),
    connections: Math.round(numberFlag('connections', values.connections, 1, USAGE)),
    warmup: numberFlag('warmup', values.warmup, 0, USAGE),
    rounds: Math.round(numberFlag('rounds', values.rounds, 1, USAGE)),
  };
}

type Name = 'mint' | 'oauth2' | 'oidcProvider';
const LABELS: Record<Name, string> = {
  mint: 'POST /persons/{id}/mint-token (sync)',
  oauth2: 'POST /oauth2/tokens client_credentials',
  oidcProvider: 'oidc-provider client_credentials, JWT',
};

interface Target {
  server: ServerProcess;
  requests: Buffer[];
}

const FORM = 'application/x-www-form-urlencoded';
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** The service's client: registered through the API, and checked to get a token before the measured runs. */
async function oauthRequest(url: string): Promise<Buffer> {
  const res = await fetch(`${url}/oauth2/clients`, {
    method: 'POST',
    headers: { ...SERVICE_AUTH, 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'bench', scopes: ['invoices.read'], grant_types: ['client_credentials'] }),
  });
  if (res.status !== 201) throw new Error(`creating the OAuth client: ${res.status} ${await res.text()}`);
  const { client_id, client_secret } = ((await res.json()) as { result: { client_id: string; client_secret: string } }).result;
  return tokenRequest(url, '/oauth2/tokens', basic(client_id, client_secret));
}

async function tokenRequest(url: string, path: string, authorization: string): Promise<Buffer> {
  const body = 'grant_type=client_credentials&scope=invoices.read';
  const check = await fetch(`${url}${path}`, { method: 'POST', headers: { Authorization: authorization, 'Content-Type': FORM }, body });
  const answer = (await check.json()) as { access_token?: string };
  if (check.status !== 200 || typeof answer.access_token !== 'string') throw new Error(`${path}: ${check.status} ${JSON.stringify(answer)}`);
  const typ = JSON.parse(Buffer.from(answer.access_token.split('.')[0] as string, 'base64url').toString()).typ;
  if (typ !== 'at+jwt') throw new Error(`${path}: the access token's typ is ${typ}, not at+jwt`);
  return encodeRequest('127.0.0.1', { method: 'POST', path, headers: { Authorization: authorization, 'Content-Type': FORM }, body });
}

async function closed(label: string, t: Target, o: Options): Promise<LoadResult> {
  console.error(`  ${label}: ${o.warmup} s warm-up, ${o.duration} s closed loop over ${o.connections} connections`);
  const r = await runLoad({ url: t.server.url, request: (i) => t.requests[i % t.requests.length] as Buffer, connections: o.connections, durationMs: o.duration * 1000, warmupMs: o.warmup * 1000, serverPid: t.server.pid });
  if (r.errors > 0) console.error(`    ${label}: ${r.errors} errors ${JSON.stringify(r.statuses)} ${r.failures.join('; ')}`);
  return r;
}

const median = (rounds: LoadResult[] | undefined) => (rounds && rounds.length > 0 ? [...rounds].sort((a, b) => a.rps - b.rps)[Math.floor(rounds.length / 2)] : undefined);

export async function main(argv: string[]): Promise<void> {
  const o = options(argv);
  if (!o) return console.log(USAGE);
  const env = environment();
  const servers: ServerProcess[] = [];
  const rounds: Partial<Record<Name, LoadResult[]>> = {};
  console.error(`oauth2 benchmark: ${o.connections} connections, ${o.duration} s per run, ${o.rounds} rounds`);
  try {
    const service = await startService({ SERVICE_DURABILITY: 'sync' });
    servers.push(service);
    const persons = await createPersons(service, 64);
    const provider = await startServer('bench/oidc-provider-server.ts');
    servers.push(provider);
    const targets: Array<[Name, Target]> = [
      ['mint', { server: service, requests: persons.map((id) => encodeRequest('127.0.0.1', { method: 'POST', path: `/persons/${id}/mint-token`, headers: { ...SERVICE_AUTH } })) }],
      ['oauth2', { server: service, requests: [await oauthRequest(service.url)] }],
      ['oidcProvider', { server: provider, requests: [await tokenRequest(provider.url, '/token', basic(BENCH_CLIENT.client_id, BENCH_CLIENT.client_secret))] }],
    ];
    for (let round = 1; round <= o.rounds; round++) {
      for (const [name, target] of targets) (rounds[name] ??= []).push(await closed(`${LABELS[name]} (round ${round} of ${o.rounds})`, target, o));
    }
  } finally {
    for (const s of servers) await s.stop();
  }

  const best = { mint: median(rounds.mint), oauth2: median(rounds.oauth2), oidcProvider: median(rounds.oidcProvider) };
  const columns: Column<[Name, LoadResult]>[] = [
    { title: '', value: ([n]) => LABELS[n], align: 'left' },
    { title: 'req/s', value: ([, r]) => count(r.rps), align: 'right' },
    { title: 'p50 ms', value: ([, r]) => ms(r.latency.p50_us), align: 'right' },
    { title: 'p99 ms', value: ([, r]) => ms(r.latency.p99_us), align: 'right' },
    { title: 'errors', value: ([, r]) => count(r.errors), align: 'right' },
    { title: 'server CPU µs/req', value: ([, r]) => count(r.serverCpuUsPerRequest, 1), align: 'right' },
  ];
  const rows = (Object.entries(best) as Array<[Name, LoadResult | undefined]>).filter((e): e is [Name, LoadResult] => e[1] !== undefined);
  console.log(`\noauth2 benchmark: ${o.connections} keep-alive connections, ${o.duration} s runs, median round of ${o.rounds}\n`);
  console.log(formatTable(columns, rows));
  const ratios: Record<string, number> = {};
  if (best.oauth2 && best.mint) ratios['oauth2_over_mint'] = best.oauth2.rps / best.mint.rps;
  if (best.oauth2 && best.oidcProvider) ratios['oauth2_over_oidc_provider'] = best.oauth2.rps / best.oidcProvider.rps;
  console.log('');
  if (ratios['oauth2_over_mint'] !== undefined) console.log(`client_credentials / mint-token:      ${(ratios['oauth2_over_mint'] * 100).toFixed(1)}%   (target ≥ 85%)`);
  if (ratios['oauth2_over_oidc_provider'] !== undefined) console.log(`client_credentials / oidc-provider:   ${ratios['oauth2_over_oidc_provider'].toFixed(2)}×   (target ≥ 4×)`);
  console.log(`\n${environmentLine(env)}`);
  console.log(`figures: ${writeResults('oauth2', env, { options: o, rounds, ratios })}`);
}

runIfMain(import.meta.url, main);
