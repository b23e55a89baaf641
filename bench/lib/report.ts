// Benchmark output: an aligned table for people, a line on what the figures depend on, and a JSON file under
// bench/results/<name>-<timestamp>.json for comparing runs.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

export interface Column<R> {
  title: string;
  value(row: R): string | number;
  /** numbers are right-aligned by default, text left-aligned */
  align?: 'left' | 'right';
}

export function formatTable<R>(columns: Column<R>[], rows: R[]): string {
  const cells = rows.map((r) => columns.map((c) => String(c.value(r))));
  const widths = columns.map((c, i) => Math.max(c.title.length, ...cells.map((row) => (row[i] as string).length)));
  const right = columns.map((c) => c.align === 'right' || (c.align !== 'left' && rows.length > 0 && typeof c.value(rows[0] as R) === 'number'));
  const line = (values: string[]) => values.map((v, i) => (right[i] ? v.padStart(widths[i] as number) : v.padEnd(widths[i] as number))).join('  ').trimEnd();
  return [line(columns.map((c) => c.title)), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** The server's and the load generator's CPU over a closed-loop run, as the HTTP benchmarks show them. */
export function cpuColumns<R extends { serverCpuPercent?: number | undefined; serverCpuUsPerRequest?: number | undefined; clientCpuPercent: number }>(): Column<R>[] {
  return [
    { title: 'server cpu', value: (r) => (r.serverCpuPercent === undefined ? '-' : `${r.serverCpuPercent}%`), align: 'right' },
    { title: 'server µs/req', value: (r) => r.serverCpuUsPerRequest ?? '-', align: 'right' },
    { title: 'client cpu', value: (r) => `${r.clientCpuPercent}%`, align: 'right' },
  ];
}

/** Milliseconds from microseconds, with enough digits for loopback latencies; '-' when there is no figure. */
export function ms(us: number | undefined): string {
  if (us === undefined || !Number.isFinite(us)) return '-';
  return (us / 1000).toFixed(us < 10_000 ? 3 : 1);
}

/** A ratio as a percentage with one decimal; '-' where there is none. */
export function pct(ratio: number | null | undefined): string {
  return ratio === null || ratio === undefined ? '-' : `${(ratio * 100).toFixed(1)}%`;
}

/** A count with thousands separators, '-' when there is none. */
export function count(n: number | undefined, digits = 0): string {
  if (n === undefined || !Number.isFinite(n)) return '-';
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export type Environment = Record<string, string | number | undefined>;

/** What the numbers depend on, recorded beside them; take it at the start, before the run loads the machine. */
export function environment(): Environment {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // not a git checkout: the results still stand, without the commit
  }
  return { node: process.version, platform: `${process.platform} ${process.arch}`, cpus: cpus().length, cpu_model: cpus()[0]?.model, loadavg_1m: loadavg()[0], commit };
}

/** The environment as one line under a table. */
export function environmentLine(env: Environment): string {
  return `${env['cpus']} cpus (${env['cpu_model']}), load average ${Number(env['loadavg_1m']).toFixed(2)} at the start (other work on the machine moves absolute figures), node ${env['node']}, commit ${env['commit']}`;
}

/** Writes bench/results/<name>-<timestamp>.json with the environment and returns its path. */
export function writeResults(name: string, env: Environment, data: Record<string, unknown>): string {
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const at = new Date().toISOString();
  const path = `${dir}${name}-${at.replace(/[:.]/g, '-')}.json`;
  writeFileSync(path, JSON.stringify({ bench: name, at, environment: env, ...data }, null, 2) + '\n');
  return path;
}
