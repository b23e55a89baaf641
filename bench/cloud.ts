// What the service adds to a cloud change, beside the provider's own time for the same calls: IAM roles created
// and deleted through the service against a real moto_server, and the same IAM calls made directly with
// @aws-sdk/client-iam against the same moto, in alternating rounds; then the time to snapshot an account of
// --roles roles through POST /cloud/connections/{id}/snapshots, beside listing them directly.
//   npm run bench -- cloud [--duration 3] [--rounds 3] [--concurrency 1] [--roles 10000]
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import {
  CreateRoleCommand,
  DeleteRoleCommand,
  GetRoleCommand,
  IAMClient,
  ListAttachedRolePoliciesCommand,
  ListInstanceProfilesForRoleCommand,
  ListRolePoliciesCommand,
  ListRolesCommand,
} from '@aws-sdk/client-iam';
import { findMotoServer, MOTO_MISSING, startMoto, type Moto } from '../test/support/moto.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { Histogram, type LatencySummary } from './lib/histogram.js';
import { cpuSeconds } from './lib/process-cpu.js';
import { count, environment, environmentLine, formatTable, ms, writeResults, type Column } from './lib/report.js';
import { SERVICE_AUTH, startService, type ServerProcess } from './lib/server-process.js';

const USAGE = `usage: npm run bench -- cloud [options]   (or: npx tsx bench/cloud.ts [options])
  --duration <s>      seconds per measured run (default 3)
  --warmup <s>        unmeasured seconds before each run (default 1)
  --rounds <n>        rounds, each the service then the SDK directly (default 3)
  --concurrency <n>   create/delete loops running at once, each on its own roles (default 1)
  --durability <d>    the service's SERVICE_DURABILITY, sync or nosync (default sync: each event's commit is fsynced)
  --roles <n>         roles in the account the snapshot inventories, created directly in parallel (default 10000)
  --help              this text
Needs moto_server (moto 5, the pyenv Python). Prints a table and ratios, and writes bench/results/cloud-<time>.json.`;

interface Options {
  duration: number;
  warmup: number;
  rounds: number;
  concurrency: number;
  durability: 'sync' | 'nosync';
  roles: number;
}

function options(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '3' },
      warmup: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '3' },
      concurrency: { type: 'string', default: '1' },
      durability: { type: 'string', default: 'sync' },
      roles: { type: 'string', default: '10000' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  if (values.durability !== 'sync' && values.durability !== 'nosync') throw new Error(`--durability must be sync or nosync, got "${values.durability}"\n${USAGE}`);
  return {
    durability: values.durability,
    duration: numberFlag('duration', values.duration, 0.1, USAGE),
    warmup: numberFlag('warmup', values.warmup, 0, USAGE),
    rounds: Math.round(numberFlag('rounds', values.rounds, 1, USAGE)),
    concurrency: Math.round(numberFlag('concurrency', values.concurrency, 1, USAGE)),
    roles: Math.round(numberFlag('roles', values.roles, 0, USAGE)),
  };
}

/** The loops' account and the snapshot's account are kept apart in moto by x-moto-account-id. */
const LOOP_ACCOUNT = '111111111111';
const SNAPSHOT_ACCOUNT = '222222222222';
const ACCESS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'bench-secret-access-key-not-a-real-one';
const TRUST = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }] });

function iamOf(moto: Moto, account: string): IAMClient {
  const client = new IAMClient({ endpoint: moto.url, region: 'us-east-1', credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET }, maxAttempts: 1 });
  client.middlewareStack.add(
    (next) => async (args) => {
      (args.request as { headers: Record<string, string> }).headers['x-moto-account-id'] = account;
      return next(args);
    },
    { step: 'build' },
  );
  return client;
}

/** One change: a role created, or deleted. Each side does it with the provider calls the service makes. */
interface Side {
  create(name: string): Promise<void>;
  delete(name: string): Promise<void>;
}

/** Through the service: POST …/aws/roles and DELETE …/aws/roles/{name}, each answered after its event commits. */
function serviceSide(service: ServerProcess, connection: string): Side {
  const base = `${service.url}/cloud/connections/${connection}/aws/roles`;
  const call = async (method: string, path: string, body: unknown, want: number) => {
    const r = await fetch(`${base}${path}`, { method, headers: { ...SERVICE_AUTH, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await r.text();
    if (r.status !== want) throw new Error(`${method} ${path || '/'}: ${r.status} ${text}`);
  };
  return {
    create: (name) => call('POST', '', { role_name: name, assume_role_policy_doc: TRUST }, 201),
    delete: (name) => call('DELETE', `/${name}`, undefined, 204),
  };
}

/**
 * Directly with the SDK, the same calls src/cloud/aws.ts makes for these two requests (for a role with no
 * policies or instance profiles): CreateRole then the read-back of GetRole, ListRolePolicies and
 * ListAttachedRolePolicies; GetRole, ListInstanceProfilesForRole, ListAttachedRolePolicies, ListRolePolicies and
 * DeleteRole. So the difference is what the service itself adds: HTTP, validation, the queue and the commit.
 * `fresh`: a new client per change, destroyed after it, as the service does (src/cloud/aws-changes.ts), so its
 * connection to the provider is opened anew for each change; this variant shows how much of the gap that is.
 */
function directSide(newClient: () => IAMClient, fresh: boolean): Side {
  const shared = fresh ? undefined : newClient();
  const using = async (f: (iam: IAMClient) => Promise<void>) => {
    const iam = shared ?? newClient();
    try {
      await f(iam);
    } finally {
      if (!shared) iam.destroy();
    }
  };
  return {
    create: (name) =>
      using(async (iam) => {
        await iam.send(new CreateRoleCommand({ RoleName: name, Path: '/', AssumeRolePolicyDocument: TRUST }));
        await iam.send(new GetRoleCommand({ RoleName: name }));
        await iam.send(new ListRolePoliciesCommand({ RoleName: name }));
        await iam.send(new ListAttachedRolePoliciesCommand({ RoleName: name }));
      }),
    delete: (name) =>
      using(async (iam) => {
        await iam.send(new GetRoleCommand({ RoleName: name }));
        await iam.send(new ListInstanceProfilesForRoleCommand({ RoleName: name }));
        await iam.send(new ListAttachedRolePoliciesCommand({ RoleName: name }));
        await iam.send(new ListRolePoliciesCommand({ RoleName: name }));
        await iam.send(new DeleteRoleCommand({ RoleName: name }));
      }),
  };
}

type SideName = 'service' | 'direct' | 'directFresh';
const SIDES: SideName[] = ['service', 'direct', 'directFresh'];
const LABELS: Record<SideName, string> = { service: 'through the service', direct: 'SDK directly, same calls', directFresh: 'SDK directly, new client per change' };

interface RunResult {
  /** changes (creates + deletes) per second */
  changes_per_s: number;
  changes: number;
  errors: number;
  failures: string[];
  /** the service process's CPU per change, warm-up included (service side only) */
  server_cpu_us_per_change?: number;
  /** this process's CPU per change, warm-up included: the SDK's own work on the direct sides */
  bench_cpu_us_per_change: number;
  all: LatencySummary;
  create: LatencySummary;
  delete: LatencySummary;
}

let serial = 0;

/** `concurrency` closed loops of create-then-delete, each on a fresh role name; warm-up first, unmeasured. */
async function run(label: string, side: Side, o: Options, serverPid?: number): Promise<RunResult> {
  console.error(`  ${label}: ${o.warmup} s warm-up, ${o.duration} s of create + delete in ${o.concurrency} loop(s)`);
  const hist = { all: new Histogram(), create: new Histogram(), delete: new Histogram() };
  let changes = 0;
  let errors = 0;
  let done = 0;
  const failures: string[] = [];
  const start = performance.now();
  const measureFrom = start + o.warmup * 1000;
  const end = measureFrom + o.duration * 1000;
  // a change counts when it starts inside the measured window (the last ones may finish just after it)
  const timed = async (kind: 'create' | 'delete', f: () => Promise<void>) => {
    const t0 = performance.now();
    const measuring = t0 >= measureFrom && t0 < end;
    try {
      await f();
    } catch (error) {
      if (measuring) errors++;
      if (failures.length < 5) failures.push(error instanceof Error ? error.message : String(error));
      return;
    }
    done++;
    if (!measuring) return;
    const us = (performance.now() - t0) * 1000;
    hist[kind].record(us);
    hist.all.record(us);
    changes++;
  };
  const loop = async (l: number) => {
    while (performance.now() < end) {
      const name = `bench-${process.pid}-${l}-${serial++}`;
      await timed('create', () => side.create(name));
      await timed('delete', () => side.delete(name));
    }
  };
  const cpu0 = cpuSeconds(serverPid);
  const own0 = process.cpuUsage();
  await Promise.all(Array.from({ length: o.concurrency }, (_, l) => loop(l)));
  const cpu1 = cpuSeconds(serverPid);
  const own = process.cpuUsage(own0);
  const seconds = (performance.now() - measureFrom) / 1000;
  if (errors > 0) console.error(`    ${label}: ${errors} errors; ${failures.join('; ')}`);
  const server_cpu_us_per_change = cpu0 !== undefined && cpu1 !== undefined && done > 0 ? ((cpu1 - cpu0) * 1e6) / done : undefined;
  const bench_cpu_us_per_change = done > 0 ? (own.user + own.system) / done : 0;
  return { changes_per_s: changes / seconds, changes, errors, failures, bench_cpu_us_per_change, ...(server_cpu_us_per_change === undefined ? {} : { server_cpu_us_per_change }), all: hist.all.summary(), create: hist.create.summary(), delete: hist.delete.summary() };
}

/**
 * moto, many requests at once, now and then answers one with an HTML error page (the SDK then reports an XML
 * parse error): a role is tried up to 3 times, and one that exists after a failed try counts as created.
 */
async function createRetried(iam: IAMClient, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await iam.send(new CreateRoleCommand({ RoleName: name, AssumeRolePolicyDocument: TRUST }));
      return;
    } catch (error) {
      if (attempt > 1 && (error as { name?: string }).name === 'EntityAlreadyExistsException') return;
      const message = error instanceof Error ? error.message : String(error);
      if (attempt >= 3) throw new Error(`creating role ${name}: ${message}`);
      console.error(`    creating role ${name} failed (${message.slice(0, 80)}), trying again`);
    }
  }
}

/** Creates `n` roles directly, `parallel` at a time. */
async function createRoles(iam: IAMClient, n: number, parallel: number): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  let last = t0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      await createRetried(iam, `inventory-${String(i).padStart(6, '0')}`);
      if (performance.now() - last > 10_000) {
        last = performance.now();
        console.error(`    ${i + 1} of ${n} roles created`);
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return (performance.now() - t0) / 1000;
}

async function connect(service: ServerProcess, moto: Moto, name: string, account: string): Promise<string> {
  const r = await fetch(`${service.url}/cloud/connections`, {
    method: 'POST',
    headers: { ...SERVICE_AUTH, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, type: 'aws', config: { account_id: account, endpoint: moto.url }, credentials: { access_key_id: ACCESS_KEY, secret_access_key: SECRET } }),
  });
  const text = await r.text();
  if (r.status !== 201) throw new Error(`POST /cloud/connections: ${r.status} ${text}`);
  return (JSON.parse(text) as { result: { connection_id: string } }).result.connection_id;
}

interface SnapshotResult {
  roles: number;
  create_s: number;
  /** POST /cloud/connections/{id}/snapshots, answered after the snapshot's commit */
  service_s: number;
  /** ListRoles (and ListUsers) pages of 1000 directly: the provider's share of the snapshot */
  direct_s: number;
  answer: Record<string, unknown>;
}

async function snapshot(service: ServerProcess, moto: Moto, roles: number): Promise<SnapshotResult> {
  const iam = iamOf(moto, SNAPSHOT_ACCOUNT);
  console.error(`  creating ${roles} roles directly, 16 at a time`);
  const create_s = await createRoles(iam, roles, 16);
  const connection = await connect(service, moto, 'inventory', SNAPSHOT_ACCOUNT);
  console.error('  POST /cloud/connections/{id}/snapshots');
  const t0 = performance.now();
  const r = await fetch(`${service.url}/cloud/connections/${connection}/snapshots`, { method: 'POST', headers: { ...SERVICE_AUTH } });
  const text = await r.text();
  const service_s = (performance.now() - t0) / 1000;
  if (r.status !== 201) throw new Error(`POST snapshots: ${r.status} ${text}`);
  const answer = (JSON.parse(text) as { result: Record<string, unknown> }).result;
  if (answer['non_human_identities'] !== roles) throw new Error(`the snapshot counted ${String(answer['non_human_identities'])} roles, not ${roles}: ${text}`);
  console.error('  the same listing directly');
  const t1 = performance.now();
  let listed = 0;
  let Marker: string | undefined;
  do {
    const page = await iam.send(new ListRolesCommand({ Marker, MaxItems: 1000 })).catch((error: unknown) => {
      throw new Error(`ListRoles directly: ${error instanceof Error ? error.message : String(error)}`);
    });
    listed += page.Roles?.length ?? 0;
    Marker = page.IsTruncated ? page.Marker : undefined;
  } while (Marker);
  const direct_s = (performance.now() - t1) / 1000;
  if (listed !== roles) throw new Error(`ListRoles listed ${listed} roles, not ${roles}`);
  return { roles, create_s, service_s, direct_s, answer };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export async function main(argv: string[]): Promise<void> {
  const o = options(argv);
  if (!o) return console.log(USAGE);
  if (!findMotoServer()) throw new Error(MOTO_MISSING);
  const env = environment();
  const rounds: Record<SideName, RunResult[]> = { service: [], direct: [], directFresh: [] };
  let snap: SnapshotResult | undefined;
  console.error(`cloud benchmark: ${o.rounds} rounds of ${o.duration} s, ${o.concurrency} loop(s); snapshot of ${o.roles} roles`);
  const moto = await startMoto();
  let service: ServerProcess | undefined;
  try {
    service = await startService({ SERVICE_DURABILITY: o.durability, SERVICE_WEBHOOK_ALLOW_INSECURE: '1', SERVICE_CLOUD_SNAPSHOT_INTERVAL: '0', SERVICE_BILLING_INTERVAL: '0' });
    const sides: Record<SideName, Side> = {
      service: serviceSide(service, await connect(service, moto, 'loops', LOOP_ACCOUNT)),
      direct: directSide(() => iamOf(moto, LOOP_ACCOUNT), false),
      directFresh: directSide(() => iamOf(moto, LOOP_ACCOUNT), true),
    };
    for (let round = 1; round <= o.rounds; round++) {
      // rotate which side goes first, so none always runs first or after the same one
      const order = SIDES.map((_, i) => SIDES[(i + round - 1) % SIDES.length] as SideName);
      for (const name of order) rounds[name].push(await run(`${LABELS[name]} (round ${round} of ${o.rounds})`, sides[name], o, name === 'service' ? service.pid : undefined));
    }
    if (o.roles > 0) snap = await snapshot(service, moto, o.roles);
  } finally {
    await service?.stop();
    await moto.stop();
  }

  type Row = [string, RunResult];
  const rows: Row[] = [];
  for (let i = 0; i < o.rounds; i++) for (const name of SIDES) rows.push([`${LABELS[name]}, round ${i + 1}`, rounds[name][i] as RunResult]);
  const columns: Column<Row>[] = [
    { title: 'create + delete role', value: ([label]) => label, align: 'left' },
    { title: 'changes/s', value: ([, r]) => count(r.changes_per_s, 1), align: 'right' },
    { title: 'p50 ms', value: ([, r]) => ms(r.all.p50_us), align: 'right' },
    { title: 'p99 ms', value: ([, r]) => ms(r.all.p99_us), align: 'right' },
    { title: 'create p50', value: ([, r]) => ms(r.create.p50_us), align: 'right' },
    { title: 'delete p50', value: ([, r]) => ms(r.delete.p50_us), align: 'right' },
    { title: 'errors', value: ([, r]) => count(r.errors), align: 'right' },
    { title: 'service CPU µs/change', value: ([, r]) => count(r.server_cpu_us_per_change), align: 'right' },
    { title: 'bench CPU µs/change', value: ([, r]) => count(r.bench_cpu_us_per_change), align: 'right' },
  ];
  console.log(`\ncloud benchmark: create + delete role against moto, ${o.concurrency} loop(s), durability ${o.durability}, ${o.duration} s runs, ${o.rounds} rounds\n`);
  console.log(formatTable(columns, rows));

  // the service's added latency at p50, as a share of the provider's own p50 for the same calls, per round
  const added = rounds.service.map((s, i) => {
    const d = rounds.direct[i] as RunResult;
    return (s.all.p50_us - d.all.p50_us) / d.all.p50_us;
  });
  const addedFresh = rounds.service.map((s, i) => {
    const d = rounds.directFresh[i] as RunResult;
    return (s.all.p50_us - d.all.p50_us) / d.all.p50_us;
  });
  const ratios = {
    added_p50_per_round: added,
    added_p50_median: median(added),
    added_p50_over_fresh_client_per_round: addedFresh,
    added_p50_over_fresh_client_median: median(addedFresh),
    service_over_direct_changes_per_s: median(rounds.service.map((s, i) => s.changes_per_s / (rounds.direct[i] as RunResult).changes_per_s)),
  };
  console.log('');
  console.log(`added latency at p50 (service − direct) / direct: ${added.map(pct).join(', ')}; median ${pct(ratios.added_p50_median)}   (target ≤ 10%)`);
  console.log(`the same over a new client per change:            ${addedFresh.map(pct).join(', ')}; median ${pct(ratios.added_p50_over_fresh_client_median)}`);
  console.log(`changes/s, service / direct (median of rounds):   ${pct(ratios.service_over_direct_changes_per_s)}`);
  if (snap) {
    console.log('');
    console.log(`snapshot of ${count(snap.roles)} roles: POST /cloud/connections/{id}/snapshots ${snap.service_s.toFixed(2)} s; ListRoles directly ${snap.direct_s.toFixed(2)} s; (creating them: ${snap.create_s.toFixed(1)} s, ${count(snap.roles / snap.create_s, 0)} roles/s)`);
  }
  console.log(`\n${environmentLine(env)}`);
  console.log(`figures: ${writeResults('cloud', env, { options: o, rounds, ratios, snapshot: snap })}`);
}

runIfMain(import.meta.url, main);
