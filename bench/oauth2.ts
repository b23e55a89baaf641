// How fast does the authorization server issue access tokens by client_credentials, beside mint-token on the
// same service and beside panva's oidc-provider doing the same grant with JWT access tokens (ES256)? Three ways
// of asking on each server: client_secret_basic, private_key_jwt (RFC 7523: a fresh ES256 assertion per request)
// and client_secret_basic with a DPoP proof (RFC 9449: a fresh proof per request, the token bound to its key).
// Each assertion and proof is new (its own jti), signed by the load generator before each timed run (a pool
// sized from the rate seen before, iat and exp inside every server's window), the same for both servers: the
// generator shares the machine's cores with the servers, so signing while sending would measure it, not them.
// One service process serves all of its measurements; oidc-provider runs in its own process. Each is
// measured in a closed loop over keep-alive connections, all in turn for several rounds; the table
// shows each one's median round, the JSON every round.
//   npm run bench -- oauth2 [--duration 2] [--connections 50] [--rounds 3]
import { generateKeyPairSync, randomUUID, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { numberFlag, runIfMain } from './lib/cli.js';
import { encodeRequest } from './lib/connection.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { createPersons } from './lib/persons.js';
import { count, environment, environmentLine, formatTable, ms, writeResults, type Column } from './lib/report.js';
import { SERVICE_AUTH, startServer, startService, type ServerProcess } from './lib/server-process.js';
import { BENCH_CLIENT, BENCH_KEY_CLIENT_ID } from './lib/oidc-provider-client.js';

const USAGE = `usage: npm run bench -- oauth2 [options]   (or: npx tsx bench/oauth2.ts [options])
  --duration <s>      seconds per measured run (default 2)
  --connections <n>   keep-alive connections of the load generator (default 50)
  --warmup <s>        unmeasured seconds before each run (default 1)
  --rounds <n>        rounds, taking the seven cases in turn (default 3)
  --only <names>      only these measurements, comma-separated (e.g. oauth2,oauth2Dpop; default all seven)
  --profile           write a CPU profile of the service to bench/results/profiles/
  --help              this text
Prints a table and ratios, and writes the figures to bench/results/oauth2-<time>.json.`;

interface Options {
  duration: number;
  connections: number;
  warmup: number;
  rounds: number;
  profile: boolean;
  only: string[] | undefined;
}

function options(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '2' },
      connections: { type: 'string', default: '50' },
      warmup: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '3' },
      profile: { type: 'boolean', default: false },
      only: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  return {
    duration: numberFlag('duration', values.duration, 0.1, USAGE),
    connections: Math.round(numberFlag('connections', values.connections, 1, USAGE)),
    warmup: numberFlag('warmup', values.warmup, 0, USAGE),
    rounds: Math.round(numberFlag('rounds', values.rounds, 1, USAGE)),
    profile: values.profile,
    only: values.only?.split(',').map((n) => n.trim()),
  };
}

type Feature = 'basic' | 'privateKeyJwt' | 'dpop';
type Name = 'mint' | 'oauth2' | 'oauth2PrivateKeyJwt' | 'oauth2Dpop' | 'oidcProvider' | 'oidcProviderPrivateKeyJwt' | 'oidcProviderDpop';
const LABELS: Record<Name, string> = {
  mint: 'POST /persons/{id}/mint-token (sync)',
  oauth2: 'POST /oauth2/tokens client_credentials, client_secret_basic',
  oauth2PrivateKeyJwt: 'POST /oauth2/tokens client_credentials, private_key_jwt',
  oauth2Dpop: 'POST /oauth2/tokens client_credentials, basic + DPoP',
  oidcProvider: 'oidc-provider client_credentials, client_secret_basic',
  oidcProviderPrivateKeyJwt: 'oidc-provider client_credentials, private_key_jwt',
  oidcProviderDpop: 'oidc-provider client_credentials, basic + DPoP',
};
/** Each feature's measurement on the service and on oidc-provider. */
const FEATURES: Record<Feature, { ours: Name; theirs: Name; label: string }> = {
  basic: { ours: 'oauth2', theirs: 'oidcProvider', label: 'client_secret_basic' },
  privateKeyJwt: { ours: 'oauth2PrivateKeyJwt', theirs: 'oidcProviderPrivateKeyJwt', label: 'private_key_jwt' },
  dpop: { ours: 'oauth2Dpop', theirs: 'oidcProviderDpop', label: 'DPoP' },
};

interface Target {
  server: ServerProcess;
  /** the bytes of request i: the same bytes each time, or a fresh assertion or proof in each */
  request(i: number): Buffer;
  /** a target whose requests differ: signs the next run's `count` requests now, outside the timed part */
  prepare?(count: number): void;
  /** requests of the last run signed while sending, the pool having run out (0 when the pool was big enough) */
  signedLive?(): number;
}

/** A compact JWS signed with an EC P-256 key (ES256), built here so that each request costs the generator one signature. */
export function es256(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject): string {
  const input = `${Buffer.from(JSON.stringify({ alg: 'ES256', ...header })).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

/** The client's key pair for private_key_jwt, and the DPoP key pair: made for this run. */
function keyPair(): { privateKey: KeyObject; jwk: JsonWebKey } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, jwk: publicKey.export({ format: 'jwk' }) };
}

const nowS = () => Math.floor(Date.now() / 1000);
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** RFC 7523 2.2 client assertion: iss = sub = client_id, aud the issuer, a new jti each time. */
function assertionBody(clientId: string, audience: string, key: KeyObject): string {
  const iat = nowS();
  const jwt = es256({ typ: 'JWT' }, { iss: clientId, sub: clientId, aud: audience, jti: randomUUID(), iat, exp: iat + 60 }, key);
  return `grant_type=client_credentials&scope=invoices.read&client_id=${encodeURIComponent(clientId)}&client_assertion_type=${encodeURIComponent(JWT_BEARER)}&client_assertion=${jwt}`;
}

/** RFC 9449 4.2 proof for POST to `htu`, a new jti each time. */
function dpopProof(htu: string, key: KeyObject, jwk: JsonWebKey): string {
  return es256({ typ: 'dpop+jwt', jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } }, { htm: 'POST', htu, jti: randomUUID(), iat: nowS() }, key);
}

const FORM = 'application/x-www-form-urlencoded';
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** The service's client_secret_basic client, registered through the API: its Authorization header. */
async function oauthRequest(url: string): Promise<string> {
  const res = await fetch(`${url}/oauth2/clients`, {
    method: 'POST',
    headers: { ...SERVICE_AUTH, 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'bench', scopes: ['invoices.read'], grant_types: ['client_credentials'] }),
  });
  if (res.status !== 201) throw new Error(`creating the OAuth client: ${res.status} ${await res.text()}`);
  const { client_id, client_secret } = ((await res.json()) as { result: { client_id: string; client_secret: string } }).result;
  return basic(client_id, client_secret);
}

/** The service's private_key_jwt client, registered with the public half of `jwk`. */
async function oauthKeyClient(url: string, jwk: JsonWebKey): Promise<string> {
  const res = await fetch(`${url}/oauth2/clients`, {
    method: 'POST',
    headers: { ...SERVICE_AUTH, 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'bench-jwt', scopes: ['invoices.read'], grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...jwk, alg: 'ES256', use: 'sig' }] } }),
  });
  if (res.status !== 201) throw new Error(`creating the private_key_jwt client: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { result: { client_id: string } }).result.client_id;
}

interface Ask {
  headers(): Record<string, string>;
  body(): string;
  /** each request is signed anew (an assertion or a proof) */
  fresh?: true;
}

/**
 * Requests to `path` as `ask` makes them, after one checked by fetch: a JWT access token (typ at+jwt), and
 * with `dpop` a DPoP-bound one (token_type DPoP, cnf.jkt). `host` is the Host header, which oidc-provider takes
 * the request's URL (a proof's htu) from.
 */
async function tokenTarget(server: ServerProcess, path: string, ask: Ask, dpop: boolean): Promise<Target> {
  const check = await fetch(`${server.url}${path}`, { method: 'POST', headers: { ...ask.headers(), 'Content-Type': FORM }, body: ask.body() });
  const answer = (await check.json()) as { access_token?: string; token_type?: string };
  if (check.status !== 200 || typeof answer.access_token !== 'string') throw new Error(`${path}: ${check.status} ${JSON.stringify(answer)}`);
  const [header, payload] = answer.access_token.split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
  if (header.typ !== 'at+jwt') throw new Error(`${path}: the access token's typ is ${header.typ}, not at+jwt`);
  if (dpop && (answer.token_type !== 'DPoP' || typeof payload.cnf?.jkt !== 'string')) throw new Error(`${path}: not a DPoP-bound token (token_type ${answer.token_type}, cnf ${JSON.stringify(payload.cnf)})`);
  const host = `127.0.0.1:${server.port}`;
  const make = () => encodeRequest(host, { method: 'POST', path, headers: { ...ask.headers(), 'Content-Type': FORM }, body: ask.body() });
  if (!ask.fresh) {
    const same = make();
    return { server, request: () => same };
  }
  let pool: Buffer[] = [];
  let live = 0;
  return {
    server,
    prepare(count) {
      pool = Array.from({ length: count }, make);
      live = 0;
    },
    request: (i) => pool[i] ?? (live++, make()),
    signedLive: () => live,
  };
}

/** Requests a pool holds: the run's seconds at `least` requests a second, or twice the best rate seen so far if more. */
function poolSize(seen: LoadResult[] | undefined, o: Options, least: number): number {
  const rate = Math.max(least, ...(seen ?? []).map((r) => 2 * r.rps));
  return Math.ceil(rate * (o.warmup + o.duration)) + o.connections;
}

const PLAIN_BODY = 'grant_type=client_credentials&scope=invoices.read';
const plain = (authorization: string): Ask => ({ headers: () => ({ Authorization: authorization }), body: () => PLAIN_BODY });
const withDpop = (authorization: string, htu: string, key: { privateKey: KeyObject; jwk: JsonWebKey }): Ask => ({
  headers: () => ({ Authorization: authorization, DPoP: dpopProof(htu, key.privateKey, key.jwk) }),
  body: () => PLAIN_BODY,
  fresh: true,
});
const keyJwt = (clientId: string, audience: string, key: KeyObject): Ask => ({ headers: () => ({}), body: () => assertionBody(clientId, audience, key), fresh: true });

/** Signatures made before each run of a target, per second of it at least: above any rate measured on two cores. */
const POOL_RATE = 15_000;

async function closed(label: string, t: Target, o: Options, seen: LoadResult[] | undefined): Promise<LoadResult & { presigned?: number; signedLive?: number }> {
  const presigned = t.prepare ? poolSize(seen, o, POOL_RATE) : undefined;
  if (presigned !== undefined) t.prepare?.(presigned);
  console.error(`  ${label}: ${o.warmup} s warm-up, ${o.duration} s closed loop over ${o.connections} connections${presigned === undefined ? '' : `, ${presigned} requests signed before`}`);
  const r = await runLoad({ url: t.server.url, request: t.request, connections: o.connections, durationMs: o.duration * 1000, warmupMs: o.warmup * 1000, serverPid: t.server.pid });
  if (r.errors > 0) console.error(`    ${label}: ${r.errors} errors ${JSON.stringify(r.statuses)} ${r.failures.join('; ')}`);
  const live = t.signedLive?.();
  if (live) console.error(`    ${label}: the pool ran out; ${live} requests were signed while sending`);
  return { ...r, ...(presigned !== undefined && { presigned, signedLive: live ?? 0 }) };
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
    const profileDir = o.profile ? 'bench/results/profiles' : undefined;
    if (profileDir) mkdirSync(profileDir, { recursive: true });
    const service = await startService({ SERVICE_DURABILITY: 'sync' }, profileDir === undefined ? {} : { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] });
    if (profileDir) console.error(`  a CPU profile of the service goes to ${profileDir} (npm run bench -- profile-summary <file>)`);
    servers.push(service);
    const persons = await createPersons(service, 64);
    const clientKey = keyPair();
    const dpopKey = keyPair();
    const provider = await startServer('bench/oidc-provider-server.ts', { env: { BENCH_CLIENT_JWK: JSON.stringify(clientKey.jwk) } });
    servers.push(provider);
    const issuer = ((await (await fetch(`${service.url}/.well-known/openid-configuration`)).json()) as { issuer: string }).issuer;
    const secretAuth = await oauthRequest(service.url);
    const keyClient = await oauthKeyClient(service.url, clientKey.jwk);
    const providerAuth = basic(BENCH_CLIENT.client_id, BENCH_CLIENT.client_secret);
    const mintRequests = persons.map((id) => encodeRequest('127.0.0.1', { method: 'POST', path: `/persons/${id}/mint-token`, headers: { ...SERVICE_AUTH } }));
    const targets: Array<[Name, Target]> = [
      ['mint', { server: service, request: (i) => mintRequests[i % mintRequests.length] as Buffer }],
      ['oauth2', await tokenTarget(service, '/oauth2/tokens', plain(secretAuth), false)],
      ['oidcProvider', await tokenTarget(provider, '/token', plain(providerAuth), false)],
      ['oauth2PrivateKeyJwt', await tokenTarget(service, '/oauth2/tokens', keyJwt(keyClient, issuer, clientKey.privateKey), false)],
      ['oidcProviderPrivateKeyJwt', await tokenTarget(provider, '/token', keyJwt(BENCH_KEY_CLIENT_ID, provider.url, clientKey.privateKey), false)],
      ['oauth2Dpop', await tokenTarget(service, '/oauth2/tokens', withDpop(secretAuth, `${issuer}/oauth2/tokens`, dpopKey), true)],
      ['oidcProviderDpop', await tokenTarget(provider, '/token', withDpop(providerAuth, `${provider.url}/token`, dpopKey), true)],
    ];
    const chosen = targets.filter(([name]) => o.only === undefined || o.only.includes(name));
    for (let round = 1; round <= o.rounds; round++) {
      for (const [name, target] of chosen) (rounds[name] ??= []).push(await closed(`${LABELS[name]} (round ${round} of ${o.rounds})`, target, o, rounds[name]));
    }
  } finally {
    for (const s of servers) await s.stop();
  }

  const best = Object.fromEntries((Object.keys(LABELS) as Name[]).map((n) => [n, median(rounds[n])])) as Record<Name, LoadResult | undefined>;
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
  for (const [feature, f] of Object.entries(FEATURES)) {
    const ours = best[f.ours];
    const theirs = best[f.theirs];
    if (ours && theirs) ratios[`${feature}_ours_over_oidc_provider`] = ours.rps / theirs.rps;
  }
  console.log('\nper feature, ours / oidc-provider (target ≥ 3×):');
  for (const [feature, f] of Object.entries(FEATURES)) {
    const r = ratios[`${feature}_ours_over_oidc_provider`];
    if (r !== undefined) console.log(`  ${f.label.padEnd(20)} ${r.toFixed(2)}×`);
  }
  // DPoP's cost: the share of the plain client_secret_basic rate it loses, on each server
  for (const [side, dpop, basicRate] of [['ours', best.oauth2Dpop, best.oauth2], ['oidc_provider', best.oidcProviderDpop, best.oidcProvider]] as const) {
    if (dpop && basicRate) ratios[`dpop_cost_${side}`] = 1 - dpop.rps / basicRate.rps;
  }
  if (ratios['dpop_cost_ours'] !== undefined) console.log(`\nDPoP's cost against plain client_secret_basic, ours:          ${(ratios['dpop_cost_ours'] * 100).toFixed(1)}% fewer tokens/s   (target ≤ 30%)`);
  if (ratios['dpop_cost_oidc_provider'] !== undefined) console.log(`DPoP's cost against plain client_secret_basic, oidc-provider: ${(ratios['dpop_cost_oidc_provider'] * 100).toFixed(1)}% fewer tokens/s`);
  console.log(`\n${environmentLine(env)}`);
  console.log(`figures: ${writeResults('oauth2', env, { options: o, rounds, ratios })}`);
}

runIfMain(import.meta.url, main);
