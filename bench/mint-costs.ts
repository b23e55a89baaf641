// What one mint costs a pinned server, by count rather than by time, so that it holds on a busy machine:
// heap bytes allocated and promoted per request and the mark-compacts (from V8's --trace-gc-nvp), the server's
// CPU time per request, and with --strace the system calls per request (strace -c -f over the measured window).
// Each server runs on core 0 (taskset), the load generator on core 1, as in `npm run bench -- mint --pin`.
// The measured window is bracketed by forced GCs (bench/lib/gc-mark.mjs), so its heap bytes are exact, not
// rounded to whole scavenges. With --baseline-ref the service at an earlier git ref is measured too.
//   npm run bench -- mint-costs [--duration 3] [--connections 100] [--servers minimal,real] [--strace] [--baseline-ref R]
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { checkoutBaseline, type Baseline } from './lib/baseline.js';
import { numberFlag, runIfMain } from './lib/cli.js';
import { encodeRequest } from './lib/connection.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { createPersons } from './lib/persons.js';
import { join } from 'node:path';
import { REPO_ROOT } from '../test/support/process.js';
import { environment, environmentLine, writeResults } from './lib/report.js';
import { SERVICE_AUTH, startServer, startService, type ServerProcess } from './lib/server-process.js';

const USAGE = `usage: npm run bench -- mint-costs [options]
  --duration <s>      seconds of the measured closed loop (default 3)
  --warmup <s>        unmeasured seconds before it (default 1)
  --connections <n>   keep-alive connections (default 100)
  --persons <n>       persons minted for, in turn (default 64)
  --servers <list>    minimal,real,nosync (default minimal,real)
  --strace            also count system calls per request (strace -c -f; slows the server, so its rate is not comparable)
  --baseline-ref <r>  also the real service as it was at git ref r (unpacked into a temporary directory), after the others`;

const SERVERS = ['minimal', 'real', 'nosync'] as const;
type ServerName = (typeof SERVERS)[number];

/** Sums of one window of --trace-gc-nvp lines. */
interface GcCounts {
  allocated: number;
  promoted: number;
  scavenges: number;
  markCompacts: number;
  pauseMs: number;
}

/** `trace` ends with the forced GC of the closing mark: its bytes count, its collection and pause do not. */
function gcCounts(trace: string): GcCounts {
  const c: GcCounts = { allocated: 0, promoted: 0, scavenges: 0, markCompacts: 0, pauseMs: 0 };
  const lines = trace.split('\n').filter((line) => / gc=(\w+) /.test(line));
  const forced = lines.pop();
  if (forced !== undefined) c.allocated += Number(/ allocated=(\d+)/.exec(forced)?.[1] ?? 0);
  for (const line of lines) {
    const gc = / gc=(\w+) /.exec(line);
    if (!gc) continue;
    if (gc[1] === 's') c.scavenges++;
    else c.markCompacts++;
    c.allocated += Number(/ allocated=(\d+)/.exec(line)?.[1] ?? 0);
    c.promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
    c.pauseMs += Number(/pause=([\d.]+)/.exec(line)?.[1] ?? 0);
  }
  return c;
}

/** strace -c's table, per call name. */
function straceCounts(table: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of table.split('\n')) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line);
    if (m && m[2] !== 'total') out[m[2] as string] = Number(m[1]);
  }
  return out;
}

/** CPU ticks (user + system) of each thread of a process so far, by thread name: which thread does the work. */
function threadTicks(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // Node's own threads (V8's, libuv's pool where LMDB commits) share the name "node": the main thread is told apart.
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const name = tid === String(pid) ? 'main' : comm === 'node' ? 'other node threads' : comm;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out[name] = (out[name] ?? 0) + Number(fields[11]) + Number(fields[12]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** Write-class system calls (write, pwrite64, writev: LMDB's page writes, eventfd wake-ups; not socket sends) so far. */
function writeCalls(pid: number): number {
  try {
    return Number(/syscw: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

/** The service's WAL commit and entry counters (GET /metrics); zeros for the minimal server, which has none. */
async function walCounters(url: string, service: boolean): Promise<{ commits: number; entries: number }> {
  if (!service) return { commits: 0, entries: 0 };
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name}(?:\\{\\})? (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { commits: read('wal_commits_total'), entries: read('wal_entries_total') };
}

/** Forces a GC in the server and waits for its mark line; answers the output's length after it. */
async function gcMark(server: ServerProcess): Promise<number> {
  const from = server.output().length;
  process.kill(server.pid, 'SIGUSR2');
  for (let waited = 0; waited < 10_000; waited += 20) {
    const at = server.output().indexOf('gc-mark\n', from);
    if (at >= 0) return at + 'gc-mark\n'.length;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`no gc-mark from the server within 10 s (pid ${server.pid})`);
}

async function withStrace<T>(pid: number, run: () => Promise<T>): Promise<{ result: T; calls: Record<string, number> }> {
  const strace = spawn('strace', ['-c', '-f', ...(process.env['STRACE_CALLS'] ? ['--seccomp-bpf', '-e', `trace=${process.env['STRACE_CALLS']}`] : []), '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let table = '';
  strace.stderr.on('data', (b: Buffer) => (table += b.toString()));
  await new Promise((r) => setTimeout(r, 500));
  const result = await run();
  const exited = new Promise((r) => strace.once('close', r));
  strace.kill('SIGINT');
  await exited;
  return { result, calls: straceCounts(table) };
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '3' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '100' },
      persons: { type: 'string', default: '64' },
      servers: { type: 'string', default: 'minimal,real' },
      strace: { type: 'boolean', default: false },
      'baseline-ref': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return console.log(USAGE);
  const duration = numberFlag('duration', values.duration, 0.1, USAGE);
  const warmup = numberFlag('warmup', values.warmup, 0, USAGE);
  const connections = Math.round(numberFlag('connections', values.connections, 1, USAGE));
  const persons = Math.round(numberFlag('persons', values.persons, 1, USAGE));
  const names = values.servers.split(',').map((s) => s.trim()) as ServerName[];
  for (const n of names) if (!SERVERS.includes(n)) throw new Error(`--servers: unknown "${n}" (${SERVERS.join(', ')})`);
  const env = environment();
  let baseline: Baseline | undefined;
  if (values['baseline-ref'] !== undefined) baseline = checkoutBaseline(values['baseline-ref']);
  const runs: Array<ServerName | 'baseline'> = baseline ? [...names, 'baseline'] : names;
  const before = execFileSync('taskset', ['-c', '-p', String(process.pid)], { encoding: 'utf8' }).trim().split(': ').pop() as string;
  execFileSync('taskset', ['-a', '-c', '-p', '1', String(process.pid)], { stdio: 'ignore' });
  const results: Record<string, unknown> = {};
  try {
    for (const name of runs) {
      const nodeArgs = ['--trace-gc-nvp', '--expose-gc', '--import', join(REPO_ROOT, 'bench/lib/gc-mark.mjs')];
      let server: ServerProcess;
      let ids: string[];
      if (name === 'minimal') {
        server = await startServer('bench/minimal-mint-server.ts', { env: { SERVICE_SIGNING_THREADS: '0' }, nodeArgs, cores: '0' });
        ids = Array.from({ length: persons }, (_, i) => `01938f6e-7d3c-7000-8000-${String(i).padStart(12, '0')}`);
      } else {
        const s = await startService({ SERVICE_DURABILITY: name === 'nosync' ? 'nosync' : 'sync' }, { nodeArgs, cores: '0', ...(name === 'baseline' ? { root: (baseline as Baseline).root } : {}) });
        server = s;
        ids = await createPersons(s, persons);
      }
      try {
        const requests = ids.map((id) => encodeRequest('127.0.0.1', { method: 'POST', path: `/persons/${id}/mint-token`, headers: { ...SERVICE_AUTH } }));
        const load = (ms: number) => runLoad({ url: server.url, request: (i) => requests[i % requests.length] as Buffer, connections, durationMs: ms, serverPid: server.pid });
        console.error(`  ${name}: ${warmup} s warm-up, ${duration} s measured`);
        await load(warmup * 1000);
        const mark = await gcMark(server);
        const ticksBefore = threadTicks(server.pid);
        const writesBefore = writeCalls(server.pid);
        const walBefore = await walCounters(server.url, name !== 'minimal');
        let r: LoadResult;
        let calls: Record<string, number> | undefined;
        if (values.strace) ({ result: r, calls } = await withStrace(server.pid, () => load(duration * 1000)));
        else r = await load(duration * 1000);
        const ticksAfter = threadTicks(server.pid);
        const writes = writeCalls(server.pid) - writesBefore;
        const walAfter = await walCounters(server.url, name !== 'minimal');
        const commits = walAfter.commits - walBefore.commits;
        // µs of CPU per request by thread name (USER_HZ is 100: one tick is 10 ms)
        const threads = Object.fromEntries(Object.entries(ticksAfter).map(([k, v]) => [k, Number((((v - (ticksBefore[k] ?? 0)) * 10_000) / r.requests).toFixed(1))]).filter(([, v]) => (v as number) > 0));
        const end = await gcMark(server);
        const gc = gcCounts(server.output().slice(mark, end));
        const per = (n: number) => n / r.requests;
        const perCall = calls && Object.fromEntries(Object.entries(calls).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Number(per(v).toFixed(3))]));
        results[name] = { requests: r.requests, rps: r.rps, errors: r.errors, cpuUsPerRequest: r.serverCpuUsPerRequest, gc, heapBytesPerRequest: per(gc.allocated), promotedBytesPerRequest: per(gc.promoted), syscallsPerRequest: perCall, threadCpuUsPerRequest: threads, writeCallsPerRequest: writes / r.requests, walCommits: commits, requestsPerCommit: commits > 0 ? r.requests / commits : undefined };
        console.log(
          `${(name === 'baseline' ? `${name} (${baseline?.ref})` : name).padEnd(8)} ${Math.round(r.rps)} req/s, ${r.errors} errors, CPU ${r.serverCpuUsPerRequest?.toFixed(1)} µs/req, heap ${Math.round(per(gc.allocated))} B/req allocated, ` +
            `${Math.round(per(gc.promoted))} B/req promoted, ${gc.scavenges} scavenges, ${gc.markCompacts} mark-compacts (${gc.pauseMs.toFixed(0)} ms of GC pauses)`,
        );
        console.log(`         CPU µs per request by thread: ${Object.entries(threads).map(([k, v]) => `${k} ${v}`).join(', ')}; write-class syscalls per request ${(writes / r.requests).toFixed(3)}${commits > 0 ? `; ${commits} WAL commits, ${(r.requests / commits).toFixed(1)} requests per commit` : ''}`);
        if (perCall) console.log(`         syscalls per request: ${Object.entries(perCall).slice(0, 14).map(([k, v]) => `${k} ${v}`).join(', ')}`);
      } finally {
        await server.stop();
      }
    }
  } finally {
    execFileSync('taskset', ['-a', '-c', '-p', before, String(process.pid)], { stdio: 'ignore' });
    baseline?.remove();
  }
  console.log(environmentLine(env));
  const base = baseline && { ref: baseline.ref, commit: baseline.commit };
  console.log(`figures: ${writeResults('mint-costs', env, { options: { duration, warmup, connections, persons, servers: names, strace: values.strace, ...(base ? { baseline: base } : {}) }, results })}`);
}

runIfMain(import.meta.url, main);
