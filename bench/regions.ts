// Cost of consistency levels: latency and throughput of PUT /organizations/attributes/{bucket} with
// local_region and all_regions, over three regions at 0 ms and 25 ms simulated one-way latency, with a
// single-region run as the baseline. The service runs as its own process so the load has the other core.
//   npx tsx bench/regions.ts [--seconds 5] [--connections 32]
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runLoad, type LoadResult } from './lib/regions-load.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, connections: { type: 'string', default: '32' } } });
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const ORG = 'bench-org';
const KEY = 'bench-key-0123456789abcdef';

interface Row extends LoadResult {
  regions: number;
  latency_ms: number;
  consistency: 'local_region' | 'all_regions';
}

async function startService(regions: string, latencyMs: number): Promise<{ child: ChildProcess; origin: string; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'identity-bench-regions-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, SERVICE_PORT: '0', SERVICE_DATA_DIR: dataDir, SERVICE_REGIONS: regions, SERVICE_REPLICATION_LATENCY_MS: String(latencyMs), SERVICE_ROOT_ORG_ID: ORG, SERVICE_ROOT_API_KEY: KEY },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const origin = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (m) resolve(m[1] as string);
    });
    child.on('exit', (code) => reject(new Error(`service exited with ${code}: ${output}`)));
  });
  return { child, origin, dataDir };
}

async function measure(origin: string, consistency: Row['consistency'], durationMs: number): Promise<LoadResult> {
  return runLoad({
    origin,
    connections,
    durationMs,
    // A different value each time: replacing a set with an equal one changes nothing and ships nothing.
    request: (i) => ({
      method: 'PUT',
      path: '/organizations/attributes/end_user_read_write',
      headers: { 'content-type': 'application/json', 'service-orgid': ORG, 'service-api-key': KEY, 'service-required-consistency': consistency },
      body: JSON.stringify({ counter: i, note: 'bench' }),
    }),
  });
}

const scenarios: Array<{ regions: string; latencyMs: number; levels: Row['consistency'][] }> = [
  { regions: 'europe-belgium', latencyMs: 0, levels: ['local_region'] },
  { regions: 'europe-belgium,us-iowa,asia-japan', latencyMs: 0, levels: ['local_region', 'all_regions'] },
  { regions: 'europe-belgium,us-iowa,asia-japan', latencyMs: 25, levels: ['local_region', 'all_regions'] },
];

const rows: Row[] = [];
for (const s of scenarios) {
  const service = await startService(s.regions, s.latencyMs);
  try {
    for (const level of s.levels) {
      await measure(service.origin, level, 1000); // warm-up
      const r = await measure(service.origin, level, seconds * 1000);
      rows.push({ regions: s.regions.split(',').length, latency_ms: s.latencyMs, consistency: level, ...r });
      process.stderr.write(`done: ${s.regions.split(',').length} region(s), ${s.latencyMs} ms, ${level}\n`);
    }
  } finally {
    const exited = once(service.child, 'exit');
    service.child.kill('SIGTERM');
    await exited;
    rmSync(service.dataDir, { recursive: true, force: true });
  }
}

const fmt = (n: number, d = 1) => n.toFixed(d);
const baseline = rows[0] as Row;
console.log(`\nPUT /organizations/attributes/{bucket}: ${connections} keep-alive connections, ${seconds} s per row, durable commits\n`);
console.log('| regions | link latency | consistency | req/s | vs 1 region | p50 ms | p99 ms | max ms | errors |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.regions} | ${r.latency_ms} ms | ${r.consistency} | ${fmt(r.rps, 0)} | ${fmt(r.rps / baseline.rps, 2)}x | ${fmt(r.p50_ms, 2)} | ${fmt(r.p99_ms, 2)} | ${fmt(r.max_ms, 1)} | ${r.errors} |`);
}

mkdirSync('bench/results', { recursive: true });
const file = join('bench/results', `regions-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(file, JSON.stringify({ bench: 'regions', at: new Date().toISOString(), node: process.version, connections, seconds, rows }, null, 2));
console.log(`\nwritten to ${file}`);
