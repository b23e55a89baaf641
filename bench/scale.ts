// How cost grows with size: one organization of N persons, and M organizations of P persons each (every person with
// an email handle, two groups and a small attribute bucket). For each: heap per person after a full GC, resident
// memory, data dir size, start-to-serving time after a clean stop, after kill -9 and with no snapshot (the WAL
// replay rate), the longest event-loop block while persons are created one by one at that size (a periodic
// snapshot), and GET /persons/{id} and mint-token at that size beside an organization with nothing in it, in
// the same process: that one measured alone before the fill, then the two in turns (rounds, the order swapped each
// round), each measurement starting only once the service is quiet (no snapshot still packing), so that the
// ratio large/empty is of the same process in the same state. The bulk of the persons go in through POST /persons/bulk-import (the fastest path a client
// has: 1,000 rows share one WAL entry), the tail one POST /persons each.
//   npm run bench -- scale [--persons 20000] [--orgs 50] [--org-persons 100] [--tail 10000] [--writers 32] [--duration 2] [--rounds 3]
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { spawnNode, type NodeProcess } from '../test/support/process.js';
import { removeDir, tempDir } from '../test/support/server.js';
import { openStore } from '../src/wal/store.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { Connection, encodeRequest } from './lib/connection.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { cpuSeconds } from './lib/process-cpu.js';
import { environment, environmentLine, formatTable, ms, writeResults, type Column } from './lib/report.js';
import { SERVICE_AUTH } from './lib/server-process.js';

const USAGE = `usage: npm run bench -- scale [options]   (or: npx tsx bench/scale.ts [options])
  --persons N       persons of the one large organization (default 20000; the issue's size is 1000000; 0 skips it)
  --orgs M          organizations of the many-organizations case (default 50; the issue's size is 10000; 0 skips it)
  --org-persons P   persons in each of those (default 100)
  --tail T          persons created one POST /persons each after the bulk import, at size (default 10000, the
                    snapshot interval, so one periodic snapshot falls in it); half as many again before kill -9
  --writers N       HTTP connections creating persons (default 32)
  --duration S      seconds of each GET and mint measurement (default 2)
  --rounds R        rounds of reads and mints, the large organization and the empty one in turns (default 3)
  --keep DIR        fill DIR (which must not exist) and leave it behind, cleanly stopped, e.g. to profile a start
                    (one case at a time)`;

interface Settings {
  persons: number;
  orgs: number;
  orgPersons: number;
  tail: number;
  writers: number;
  seconds: number;
  rounds: number;
  keep?: string;
}

const HOST = '127.0.0.1';
const LISTENING = /^listening on http:\/\/[^\s]+:(\d+)/;
const GROUPS = Array.from({ length: 20 }, (_, i) => `team-${i}`);
const PROBES = 200;
/** rows of one bulk-import file: well under the 1 MB body limit (about 110 bytes a row) */
const FILE_ROWS = 5000;

interface Booted {
  proc: NodeProcess;
  url: string;
  port: number;
  /** the service's own start (open the store, recover, listen), as src/main.ts reports it */
  startMs: number;
  /** from the process's beginning to serving: node and tsx loading the sources included */
  processMs: number;
  /** WAL entries start-up replayed */
  replayed: number;
}

const STARTED = /started in (\d+) ms \((\d+) ms after the process began\): (\d+) organizations, (\d+) WAL entries replayed/;

async function bootService(dataDir: string): Promise<Booted> {
  const proc = await spawnNode({
    script: 'src/main.ts',
    nodeArgs: ['--expose-gc', '--import', './bench/lib/heap-probe.mjs'],
    env: { SERVICE_HOST: HOST, SERVICE_PORT: '0', SERVICE_DATA_DIR: dataDir, SERVICE_ROOT_ORG_ID: SERVICE_AUTH['Service-OrgID'] as string, SERVICE_ROOT_API_KEY: SERVICE_AUTH['Service-API-Key'] as string },
    ready: LISTENING,
    timeoutMs: 30 * 60_000,
  });
  const port = Number(proc.ready[1]);
  const m = STARTED.exec(proc.output());
  if (!m) throw new Error(`src/main.ts did not say how long it took to start; its output:\n${proc.output()}`);
  return { proc, port, url: `http://${HOST}:${port}`, startMs: Number(m[1]), processMs: Number(m[2]), replayed: Number(m[4]) };
}

interface Memory {
  heapUsed: number;
  rss: number;
  external: number;
  arrayBuffers: number;
  /** the longest event-loop block since the previous probe */
  loopMaxMs: number;
}

/** The service's memory after a full GC, printed by bench/lib/heap-probe.mjs on SIGUSR2. */
async function memory(b: Booted): Promise<Memory> {
  const before = b.proc.output().length;
  b.proc.child.kill('SIGUSR2');
  for (let i = 0; i < 600; i++) {
    const m = /heap-probe (\{.*\})/.exec(b.proc.output().slice(before));
    if (m) return JSON.parse(m[1] as string) as Memory;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no heap-probe line within 30 s');
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? dirBytes(join(dir, e.name)) : statSync(join(dir, e.name)).size;
  return n;
}

async function call(url: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, { method, headers: { ...headers, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

function personBody(i: number, tag: string): string {
  return JSON.stringify({
    handles: [{ type: 'email_address', value: `${tag}-${i}@example.com` }],
    groups: [GROUPS[i % GROUPS.length], GROUPS[(i * 7 + 3) % GROUPS.length] === GROUPS[i % GROUPS.length] ? GROUPS[(i + 1) % GROUPS.length] : GROUPS[(i * 7 + 3) % GROUPS.length]],
    attributes: { end_user_read_write: { plan: i % 3 === 0 ? 'pro' : 'free', seats: i % 50 } },
  });
}

const csvField = (v: string) => `"${v.replace(/"/g, '""')}"`;

function personRow(i: number, tag: string): string {
  const p = JSON.parse(personBody(i, tag)) as { handles: Array<{ value: string }>; groups: string[]; attributes: unknown };
  return [p.handles[0]?.value as string, p.groups.join(','), JSON.stringify(p.attributes)].map(csvField).join(',');
}

const BOUNDARY = 'scale-bench-boundary';

/** A multipart/form-data POST /persons/bulk-import of persons `from` … `to` - 1. */
function importRequest(from: number, to: number, tag: string, auth: Record<string, string>): Buffer {
  const rows: string[] = ['"service:emails","service:groups","service:attributes"'];
  for (let i = from; i < to; i++) rows.push(personRow(i, tag));
  const body = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="persons"; filename="persons.csv"\r\nContent-Type: text/csv\r\n\r\n${rows.join('\n')}\n\r\n--${BOUNDARY}--\r\n`;
  return encodeRequest(HOST, { method: 'POST', path: '/persons/bulk-import', headers: { ...auth, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` }, body });
}

/**
 * Sends `requests` (built lazily, index by index) over `writers` keep-alive connections, each expecting
 * `status`; reports progress every `every` requests. Returns the seconds it took.
 */
async function send(port: number, count: number, writers: number, status: number, what: string, every: number, request: (i: number) => Buffer): Promise<number> {
  const started = performance.now();
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: Math.min(writers, count) }, async () => {
      const conn = new Connection(HOST, port);
      await conn.ready;
      while (next < count) {
        const i = next++;
        const got = await conn.send(request(i));
        if (got !== status) throw new Error(`${what} ${i}: status ${got}`);
        if (++done % every === 0) console.error(`  ${what}: ${done} of ${count}, ${Math.round((performance.now() - started) / 1000)} s`);
      }
      conn.close();
    }),
  );
  return (performance.now() - started) / 1000;
}

/** Imports persons 0 … count - 1 into one organization, FILE_ROWS a file, a few files at once. */
async function bulkImport(port: number, count: number, tag: string, auth: Record<string, string>): Promise<number> {
  const files = Math.ceil(count / FILE_ROWS);
  const seconds = await send(port, files, 4, 200, `bulk import ${tag}`, 20, (f) => importRequest(f * FILE_ROWS, Math.min(count, (f + 1) * FILE_ROWS), tag, auth));
  return Math.round(count / seconds);
}

/** Creates `count` persons over `writers` keep-alive connections; `auth(i)` names the organization of person i. */
async function populate(port: number, count: number, writers: number, tag: string, auth: (i: number) => Record<string, string>): Promise<number> {
  const seconds = await send(port, count, writers, 201, `creating persons of ${tag}`, 100_000, (i) => encodeRequest(HOST, { method: 'POST', path: '/persons', headers: { ...auth(i), 'Content-Type': 'application/json' }, body: personBody(i, tag) }));
  return Math.round(count / seconds);
}

async function createGroups(url: string, auth: Record<string, string>): Promise<void> {
  for (const name of GROUPS) await call(url, 'POST', '/groups', auth, { name });
}

/** Probe persons created with fetch, to read their IDs: PROBES of them in the organization given. */
async function probes(url: string, auth: Record<string, string>, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < PROBES; i++) ids.push((await call(url, 'POST', '/persons', auth, JSON.parse(personBody(i, tag)))).result.person_id as string);
  return ids;
}

async function newOrg(url: string, name: string): Promise<Record<string, string>> {
  const r = (await call(url, 'POST', '/organizations/suborganizations', SERVICE_AUTH as Record<string, string>, { sub_org_name: name })).result as { id: string; api_key: string };
  return { 'Service-OrgID': r.id, 'Service-API-Key': r.api_key };
}

interface Probe {
  get: LoadResult;
  mint: LoadResult;
}

/** One side's figures: closed-loop rates and p99s (ms). */
interface Rates {
  get_rps: number;
  get_p99_ms: number;
  mint_rps: number;
  mint_p99_ms: number;
}

/** The CPU share below which the service counts as quiet, and the window it is read over. */
const QUIET_SHARE = 0.05;
const QUIET_WINDOW_MS = 1000;

/**
 * Waits until the service has used under QUIET_SHARE of a core over QUIET_WINDOW_MS (no periodic snapshot still
 * packing, no commit still flushing); answers the seconds it waited. Gives up after ten minutes, saying so.
 */
async function quiet(b: Booted): Promise<number> {
  const pid = b.proc.child.pid as number;
  const started = performance.now();
  for (;;) {
    const before = cpuSeconds(pid);
    await new Promise((r) => setTimeout(r, QUIET_WINDOW_MS));
    const after = cpuSeconds(pid);
    if (before === undefined || after === undefined) return 0;
    if (after - before < QUIET_SHARE * (QUIET_WINDOW_MS / 1000)) return Math.round(performance.now() - started - QUIET_WINDOW_MS) / 1000;
    if (performance.now() - started > 10 * 60_000) {
      console.error('  the service did not fall quiet within 10 minutes; measuring anyway');
      return (performance.now() - started) / 1000;
    }
  }
}

async function measure(b: Booted, auth: Record<string, string>, ids: readonly string[], seconds: number): Promise<Probe> {
  const gets = ids.map((id) => encodeRequest(HOST, { method: 'GET', path: `/persons/${id}`, headers: auth }));
  const mints = ids.map((id) => encodeRequest(HOST, { method: 'POST', path: `/persons/${id}/mint-token`, headers: auth }));
  const common = { url: b.url, connections: 16, durationMs: seconds * 1000, warmupMs: 500, serverPid: b.proc.child.pid as number };
  await quiet(b);
  const get = await runLoad({ ...common, request: (i) => gets[i % gets.length] as Buffer });
  // Each mint is a WAL entry: a periodic snapshot may start in this window; the next measurement waits it out.
  await quiet(b);
  const mint = await runLoad({ ...common, request: (i) => mints[i % mints.length] as Buffer });
  return { get, mint };
}

const p99 = (r: LoadResult) => Math.round(r.latency.p99_us) / 1000;
const rates = (p: Probe): Rates => ({ get_rps: Math.round(p.get.rps), get_p99_ms: p99(p.get), mint_rps: Math.round(p.mint.rps), mint_p99_ms: p99(p.mint) });

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? (v[mid] as number) : ((v[mid - 1] as number) + (v[mid] as number)) / 2;
}

/** Each figure's median over the rounds. */
function medians(rounds: Rates[]): Rates {
  const of = (k: keyof Rates) => median(rounds.map((r) => r[k]));
  return { get_rps: Math.round(of('get_rps')), get_p99_ms: of('get_p99_ms'), mint_rps: Math.round(of('mint_rps')), mint_p99_ms: of('mint_p99_ms') };
}

interface Side {
  b: Booted;
  auth: Record<string, string>;
  ids: readonly string[];
}

/** The large organization and the empty one in turns, the order swapped each round: each round's two are neighbours in time. */
async function inTurns(large: Side, empty: Side, s: Settings): Promise<Array<{ large: Rates; empty: Rates }>> {
  const out: Array<{ large: Rates; empty: Rates }> = [];
  for (let r = 0; r < s.rounds; r++) {
    const order = r % 2 === 0 ? [large, empty] : [empty, large];
    const got = new Map<Side, Rates>();
    for (const side of order) got.set(side, rates(await measure(side.b, side.auth, side.ids, s.seconds)));
    const round = { large: got.get(large) as Rates, empty: got.get(empty) as Rates };
    console.error(`  round ${r + 1}: GET ${round.large.get_rps}/${round.empty.get_rps} rps, mint ${round.large.mint_rps}/${round.empty.mint_rps} rps (large/empty)`);
    out.push(round);
  }
  return out;
}

/** WAL entries stored, across organizations: what a start without snapshots replays. */
async function walEntries(dataDir: string): Promise<number> {
  const store = openStore(dataDir, 'local', false);
  try {
    return store.wal.getKeysCount();
  } finally {
    await store.close();
  }
}

async function dropSnapshots(dataDir: string): Promise<void> {
  const store = openStore(dataDir, 'local', true);
  try {
    await store.snapshots.clearAsync();
  } finally {
    await store.close();
  }
}

interface Row {
  case: string;
  persons: number;
  orgs: number;
  /** how the bulk went in: persons/s through POST /persons/bulk-import */
  bulk_import_per_s: number;
  /** persons/s of the tail, one POST /persons each, at size */
  create_per_s: number;
  /** the longest event-loop block while the bulk import ran, and while the tail ran (its periodic snapshot) */
  loop_max_ms: { bulk: number; tail: number };
  /** SIGTERM to exit: the final snapshot of each organization is written in it */
  stop_s: number;
  heap_mb: number;
  heap_bytes_per_person: number;
  rss_mb: number;
  rss_bytes_per_person: number;
  data_dir_mb: number;
  empty_start_s: number;
  clean_start_s: number;
  kill9_start_s: number;
  nosnapshot_start_s: number;
  /** the same starts from the process's beginning, node and tsx loading included */
  process_start_s: Record<'empty' | 'clean' | 'kill9' | 'nosnapshot', number>;
  /** WAL entries each start replayed after the snapshots */
  replayed: Record<'clean' | 'kill9' | 'nosnapshot', number>;
  wal_entries: number;
  replay_entries_per_s: number;
  /** persons rebuilt per second by the start without snapshots */
  replay_persons_per_s: number;
  /** medians over the rounds, the large organization (at size) and the empty one taking turns */
  get_rps: number;
  get_rps_empty: number;
  get_p99_ms: number;
  get_p99_ms_empty: number;
  mint_rps: number;
  mint_rps_empty: number;
  mint_p99_ms: number;
  mint_p99_ms_empty: number;
  /** large / empty, of the medians: rates (target ≥ 0.9) and p99s */
  ratios: { get_rps: number; mint_rps: number; get_p99: number; mint_p99: number };
  /** the empty organization alone in the process, before the fill: what it costs in an empty service */
  empty_before_fill: Rates;
  /** every round's figures, in order */
  rounds: Array<{ large: Rates; empty: Rates }>;
  /** seconds the service took to fall quiet after the tail (its periodic snapshot packing) */
  settle_after_tail_s: number;
}

/** Fills one data dir through `fill`, then takes every figure of the row from it. */
async function runCase(name: string, persons: number, orgs: number, s: Settings, fill: (b: Booted) => Promise<{ createPerS: number; auth: Record<string, string>; ids: string[]; authOf?: (i: number) => Record<string, string> }>): Promise<Row> {
  const dataDir = s.keep ?? tempDir('identity-scale-');
  let current: Booted | undefined;
  const boot = async (dir: string) => (current = await bootService(dir));
  try {
    let b = await boot(dataDir);
    const emptyStart = b;
    const empty = await memory(b);
    // The organization with nothing in it, in the same process: the reference for reads and mints.
    const emptyAuth = await newOrg(b.url, 'empty');
    await createGroups(b.url, emptyAuth);
    const emptyIds = await probes(b.url, emptyAuth, 'empty');
    console.error(`  ${name}: reads and mints of the empty organization before the fill`);
    const beforeFill = rates(await measure(b, emptyAuth, emptyIds, s.seconds));
    const filled = await fill(b);
    const afterFill = await memory(b);
    // One POST /persons each, at size: each is its own WAL entry, so a periodic snapshot of the whole
    // organization falls in this stretch, and the probe after it reports the longest block of the loop.
    console.error(`  ${name}: ${s.tail} persons one by one`);
    const tailPerS = s.tail > 0 ? await populate(b.port, s.tail, s.writers, 'tail', filled.authOf ?? (() => filled.auth)) : 0;
    const full = await memory(b);
    console.error(`  ${name}: waiting for the service to fall quiet`);
    const settle = await quiet(b);
    console.error(`  ${name}: reads and mints, ${s.rounds} rounds, the large organization and the empty one in turns`);
    const rounds = await inTurns({ b, auth: filled.auth, ids: filled.ids }, { b, auth: emptyAuth, ids: emptyIds }, s);
    const atSize = medians(rounds.map((r) => r.large));
    const atEmpty = medians(rounds.map((r) => r.empty));
    const stopping = performance.now();
    await b.proc.kill('SIGTERM', 30 * 60_000);
    const stopS = (performance.now() - stopping) / 1000;
    const dataBytes = dirBytes(dataDir);

    console.error(`  ${name}: restarts`);
    b = await boot(dataDir);
    const clean = b;
    // kill -9 with entries since the last snapshot (the stop's): the restart loads it and replays them.
    const since = Math.floor(s.tail / 2);
    if (since > 0) await populate(b.port, since, s.writers, 'since', filled.authOf ?? (() => filled.auth));
    await b.proc.kill('SIGKILL');
    b = await boot(dataDir);
    const killed = b;
    await b.proc.kill('SIGTERM', 30 * 60_000);
    const entries = await walEntries(dataDir);
    await dropSnapshots(dataDir);
    b = await boot(dataDir);
    const noSnapshot = b;
    await b.proc.kill('SIGTERM', 120_000);

    const mb = (n: number) => Math.round((n / 1048576) * 10) / 10;
    const ratio = (a: number, e: number) => Math.round((a / Math.max(e, 1e-9)) * 1000) / 1000;
    return {
      case: name,
      persons,
      orgs,
      bulk_import_per_s: filled.createPerS,
      create_per_s: tailPerS,
      loop_max_ms: { bulk: afterFill.loopMaxMs, tail: full.loopMaxMs },
      stop_s: Math.round(stopS * 100) / 100,
      heap_mb: mb(full.heapUsed),
      heap_bytes_per_person: Math.round((full.heapUsed - empty.heapUsed) / (persons + s.tail)),
      rss_mb: mb(full.rss),
      rss_bytes_per_person: Math.round((full.rss - empty.rss) / (persons + s.tail)),
      data_dir_mb: mb(dataBytes),
      empty_start_s: emptyStart.startMs / 1000,
      clean_start_s: clean.startMs / 1000,
      kill9_start_s: killed.startMs / 1000,
      nosnapshot_start_s: noSnapshot.startMs / 1000,
      process_start_s: { empty: emptyStart.processMs / 1000, clean: clean.processMs / 1000, kill9: killed.processMs / 1000, nosnapshot: noSnapshot.processMs / 1000 },
      replayed: { clean: clean.replayed, kill9: killed.replayed, nosnapshot: noSnapshot.replayed },
      wal_entries: entries,
      // Start-up beyond an empty dir's is the replay (and the index rebuilds that go with it).
      replay_entries_per_s: Math.round(noSnapshot.replayed / Math.max(0.001, (noSnapshot.startMs - emptyStart.startMs) / 1000)),
      replay_persons_per_s: Math.round((persons + 2 * PROBES + s.tail + Math.floor(s.tail / 2)) / Math.max(0.001, (noSnapshot.startMs - emptyStart.startMs) / 1000)),
      get_rps: atSize.get_rps,
      get_rps_empty: atEmpty.get_rps,
      get_p99_ms: atSize.get_p99_ms,
      get_p99_ms_empty: atEmpty.get_p99_ms,
      mint_rps: atSize.mint_rps,
      mint_rps_empty: atEmpty.mint_rps,
      mint_p99_ms: atSize.mint_p99_ms,
      mint_p99_ms_empty: atEmpty.mint_p99_ms,
      ratios: { get_rps: ratio(atSize.get_rps, atEmpty.get_rps), mint_rps: ratio(atSize.mint_rps, atEmpty.mint_rps), get_p99: ratio(atSize.get_p99_ms, atEmpty.get_p99_ms), mint_p99: ratio(atSize.mint_p99_ms, atEmpty.mint_p99_ms) },
      empty_before_fill: beforeFill,
      rounds,
      settle_after_tail_s: settle,
    };
  } finally {
    // A failure half way must not leave a service running (its pipes would keep this process alive).
    await current?.proc.kill('SIGKILL');
    if (s.keep === undefined) removeDir(dataDir);
  }
}

function oneOrg(s: Settings): Promise<Row> {
  return runCase(`one organization of ${s.persons} persons`, s.persons, 1, s, async (b) => {
    const auth = await newOrg(b.url, 'large');
    await createGroups(b.url, auth);
    const createPerS = await bulkImport(b.port, s.persons, 'large', auth);
    return { createPerS, auth, ids: await probes(b.url, auth, 'probe') };
  });
}

function manyOrgs(s: Settings): Promise<Row> {
  const persons = s.orgs * s.orgPersons;
  return runCase(`${s.orgs} organizations of ${s.orgPersons} persons`, persons, s.orgs, s, async (b) => {
    const auths: Array<Record<string, string>> = new Array(s.orgs);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(8, s.orgs) }, async () => {
        while (next < s.orgs) {
          const o = next++;
          auths[o] = await newOrg(b.url, `org-${o}`);
          if ((o + 1) % 1000 === 0) console.error(`  ${o + 1} organizations`);
        }
      }),
    );
    const groups = auths.flatMap((auth) => GROUPS.map((name) => ({ auth, name })));
    await send(b.port, groups.length, s.writers, 201, 'groups', 50_000, (i) => {
      const g = groups[i] as (typeof groups)[number];
      return encodeRequest(HOST, { method: 'POST', path: '/groups', headers: { ...g.auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: g.name }) });
    });
    // One file per organization, several organizations importing at once.
    const seconds = await send(b.port, s.orgs, s.writers, 200, 'bulk import', 1000, (o) => importRequest(o * s.orgPersons, (o + 1) * s.orgPersons, 'many', auths[o] as Record<string, string>));
    const last = auths.at(-1) as Record<string, string>;
    // The tail goes round the organizations, as traffic to many small ones would.
    return { createPerS: Math.round(persons / seconds), auth: last, ids: await probes(b.url, last, 'probe'), authOf: (i: number) => auths[i % auths.length] as Record<string, string> };
  });
}

function settings(argv: string[]): Settings | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      persons: { type: 'string', default: '20000' },
      orgs: { type: 'string', default: '50' },
      'org-persons': { type: 'string', default: '100' },
      tail: { type: 'string', default: '10000' },
      writers: { type: 'string', default: '32' },
      duration: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '3' },
      keep: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  return {
    persons: Math.floor(numberFlag('persons', values.persons, 0, USAGE)),
    orgs: Math.floor(numberFlag('orgs', values.orgs, 0, USAGE)),
    orgPersons: Math.floor(numberFlag('org-persons', values['org-persons'], 1, USAGE)),
    tail: Math.floor(numberFlag('tail', values.tail, 0, USAGE)),
    writers: Math.floor(numberFlag('writers', values.writers, 1, USAGE)),
    seconds: numberFlag('duration', values.duration, 0.5, USAGE),
    rounds: Math.floor(numberFlag('rounds', values.rounds, 1, USAGE)),
    ...(values.keep !== undefined && { keep: values.keep }),
  };
}

export async function main(argv: string[]): Promise<void> {
  const s = settings(argv);
  if (!s) return console.log(USAGE);
  if (s.keep !== undefined && s.persons > 0 && s.orgs > 0) throw new Error('--keep takes one case: give --persons 0 or --orgs 0');
  if (s.keep !== undefined && existsSync(s.keep)) throw new Error(`--keep ${s.keep}: it exists already`);
  const env = environment();
  const rows: Row[] = [];
  if (s.persons > 0) rows.push(await oneOrg(s));
  if (s.orgs > 0) rows.push(await manyOrgs(s));

  const sec = (v: number) => v.toFixed(2);
  const ratio = (a: number, b: number) => `${Math.round((a / b) * 100)}%`;
  const columns: Column<Row>[] = [
    { title: 'case', value: (r) => r.case },
    { title: 'heap_B/person', value: (r) => r.heap_bytes_per_person },
    { title: 'heap_MB', value: (r) => r.heap_mb },
    { title: 'import/s', value: (r) => r.bulk_import_per_s },
    { title: 'loop max ms bulk/tail', value: (r) => `${r.loop_max_ms.bulk}/${r.loop_max_ms.tail}` },
    { title: 'stop_s', value: (r) => sec(r.stop_s) },
    { title: 'rss_MB', value: (r) => r.rss_mb },
    { title: 'data_MB', value: (r) => r.data_dir_mb },
    { title: 'service start_s empty/clean/kill9/nosnap', value: (r) => `${sec(r.empty_start_s)}/${sec(r.clean_start_s)}/${sec(r.kill9_start_s)}/${sec(r.nosnapshot_start_s)}` },
    { title: 'replayed clean/kill9/nosnap', value: (r) => `${r.replayed.clean}/${r.replayed.kill9}/${r.replayed.nosnapshot}` },
    { title: 'replay entries/s (persons/s)', value: (r) => `${r.replay_entries_per_s} (${r.replay_persons_per_s})` },
    { title: 'GET rps (vs empty)', value: (r) => `${r.get_rps} (${ratio(r.get_rps, r.get_rps_empty)})` },
    { title: 'GET p99 (empty)', value: (r) => `${ms(r.get_p99_ms * 1000)} (${ms(r.get_p99_ms_empty * 1000)})`, align: 'right' },
    { title: 'mint rps (vs empty)', value: (r) => `${r.mint_rps} (${ratio(r.mint_rps, r.mint_rps_empty)})` },
    { title: 'mint p99 (empty)', value: (r) => `${ms(r.mint_p99_ms * 1000)} (${ms(r.mint_p99_ms_empty * 1000)})`, align: 'right' },
  ];
  const x = (v: number) => `${v.toFixed(2)}×`;
  const ratioColumns: Column<Row>[] = [
    { title: 'case', value: (r) => r.case },
    { title: 'GET rps large/empty', value: (r) => x(r.ratios.get_rps) },
    { title: 'mint rps large/empty', value: (r) => x(r.ratios.mint_rps) },
    { title: 'GET p99 large/empty', value: (r) => x(r.ratios.get_p99) },
    { title: 'mint p99 large/empty', value: (r) => x(r.ratios.mint_p99) },
    { title: 'empty before fill GET/mint rps', value: (r) => `${r.empty_before_fill.get_rps}/${r.empty_before_fill.mint_rps}` },
    { title: 'settle after tail s', value: (r) => sec(r.settle_after_tail_s) },
  ];
  console.log(`scale: persons with an email handle, two of ${GROUPS.length} groups and a two-attribute bucket; heap after a full GC, beyond the empty process's; reads and mints closed loop on 16 connections for ${s.seconds} s, beside an empty organization in the same process (medians of ${s.rounds} rounds)`);
  console.log(formatTable(columns, rows));
  console.log(`\nreads and mints: medians of ${s.rounds} rounds, the large organization and the empty one in turns, each measurement once the service was quiet (target: rates ≥ 0.90× the empty one's)`);
  console.log(formatTable(ratioColumns, rows));
  console.log(`\n${environmentLine(env)}`);
  console.log(`written to ${writeResults('scale', env, { settings: s, durability: 'sync', rows })}`);
}

runIfMain(import.meta.url, main);
