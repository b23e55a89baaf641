// Benchmark output: an aligned table for people, a JSON file under bench/results/ for comparing runs.
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
  const right = columns.map((c, i) => c.align === 'right' || (c.align !== 'left' && rows.length > 0 && typeof c.value(rows[0] as R) === 'number'));
  const line = (values: string[]) => values.map((v, i) => (right[i] ? v.padStart(widths[i] as number) : v.padEnd(widths[i] as number))).join('  ').trimEnd();
  return [line(columns.map((c) => c.title)), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** Milliseconds from microseconds, with enough digits for loopback latencies. */
export function ms(us: number): string {
  return (us / 1000).toFixed(us < 10_000 ? 3 : 1);
}

/** What the numbers depend on, recorded beside them. */
export function environment(): Record<string, unknown> {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // not a git checkout: the results still stand, without the commit
  }
  return { node: process.version, platform: `${process.platform} ${process.arch}`, cpus: cpus().length, cpu_model: cpus()[0]?.model, loadavg_1m: loadavg()[0], commit };
}

/** Writes bench/results/<name>-<timestamp>.json and returns its path. */
export function writeResults(name: string, data: unknown): string {
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const path = `${dir}${name}-${stamp}.json`;
  writeFileSync(path, JSON.stringify(data, null, 2) + '\n');
  return path;
}
