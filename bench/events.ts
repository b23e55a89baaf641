// Event fan-out: persons created as fast as possible over HTTP while 0, 1, 10 and 100 WebSocket subscribers
// receive the PersonCreated events; events per second delivered and latency from stamp to receipt.
// The service runs as a child process (src/main.ts, durable commits); writers and subscribers run here.
// Usage: npx tsx bench/events.ts [seconds per phase, default 5]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import WebSocket from 'ws';

const ORG = 'bench-org';
const KEY = 'bench-key-0123456789abcdef';
const SECONDS = Number(process.argv[2] ?? 5);
const WRITERS = 32;
const PHASES = [0, 1, 10, 100];
const WARM_UP_SECONDS = 2;
let phases = 0;

const now = () => performance.timeOrigin + performance.now();

/** Milliseconds since the epoch of an RFC 3339 UTC timestamp with up to nine fraction digits. */
function epochMs(ts: string): number {
  const dot = ts.indexOf('.', 19);
  const whole = Date.parse(`${ts.slice(0, 19)}Z`);
  return dot < 0 ? whole : whole + Number(`0${ts.slice(dot, -1)}`) * 1000;
}

async function startServer(dataDir: string): Promise<{ child: ChildProcess; base: string }> {
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    env: { ...process.env, SERVICE_PORT: '0', SERVICE_DATA_DIR: dataDir, SERVICE_ROOT_ORG_ID: ORG, SERVICE_ROOT_API_KEY: KEY },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the server did not start within 20 s:\n${out}`)), 20_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${out}`)));
  });
  child.stdout?.resume();
  return { child, base };
}

interface Sub {
  socket: WebSocket;
  received: number;
  lastOffset: number;
  gaps: number;
}

/** Subscribers read the offset and timestamp without parsing the whole frame, to keep the client side cheap. */
async function subscribe(base: string, latencies: number[], sampleEvery: number): Promise<Sub> {
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/events?types=PersonCreated_v1`, { headers: { 'Service-OrgID': ORG, 'Service-API-Key': KEY } });
  const sub: Sub = { socket, received: 0, lastOffset: 0, gaps: 0 };
  socket.on('message', (data: Buffer) => {
    const text = data.toString('latin1');
    const offset = Number(text.slice(10, text.indexOf(',', 10)));
    if (sub.lastOffset !== 0 && offset !== sub.lastOffset + 1) sub.gaps++;
    sub.lastOffset = offset;
    if (sub.received++ % sampleEvery === 0) {
      const at = text.indexOf('"timestamp":"') + 13;
      latencies.push(now() - epochMs(text.slice(at, text.indexOf('"', at))));
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return sub;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number);
}

async function phase(base: string, pool: Pool, subscribers: number, seconds = SECONDS) {
  const tag = phases++;
  const latencies: number[] = [];
  const subs = await Promise.all(Array.from({ length: subscribers }, () => subscribe(base, latencies, Math.max(1, subscribers))));
  let created = 0;
  let failed = 0;
  const started = now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; now() < until; i++) {
        const res = await pool.request({
          method: 'POST',
          path: '/persons',
          headers: { 'content-type': 'application/json', 'service-orgid': ORG, 'service-api-key': KEY },
          body: JSON.stringify({ handles: [{ type: 'email_address', value: `p${tag}-${w}-${i}@example.com` }] }),
        });
        await res.body.dump();
        if (res.statusCode === 201) created++;
        else failed++;
      }
    }),
  );
  const writeSeconds = (now() - started) / 1000;
  // Let the subscribers drain what is in flight (at most 10 s).
  const drainUntil = now() + 10_000;
  while (subs.some((s) => s.received < created) && now() < drainUntil) await new Promise((r) => setTimeout(r, 20));
  const deliverSeconds = (now() - started) / 1000;
  const delivered = subs.reduce((n, s) => n + s.received, 0);
  await Promise.all(subs.map((s) => new Promise<void>((resolve) => (s.socket.once('close', () => resolve()), s.socket.close()))));
  latencies.sort((a, b) => a - b);
  return {
    subscribers,
    persons_per_s: Math.round(created / writeSeconds),
    delivered_events_per_s: Math.round(delivered / deliverSeconds),
    per_subscriber_events_per_s: subscribers === 0 ? 0 : Math.round(delivered / subscribers / deliverSeconds),
    p50_ms: Number(percentile(latencies, 50).toFixed(2)),
    p99_ms: Number(percentile(latencies, 99).toFixed(2)),
    max_ms: Number((latencies.at(-1) ?? NaN).toFixed(2)),
    complete: subs.every((s) => s.received === created && s.gaps === 0),
    created,
    failed,
    latency_samples: latencies.length,
  };
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-events-'));
const { child, base } = await startServer(dataDir);
const pool = new Pool(base, { connections: WRITERS });
const rows = [];
try {
  // The first seconds of a fresh process (JIT, compile caches, LMDB growth) are not measured.
  await phase(base, pool, 1, WARM_UP_SECONDS);
  for (const n of PHASES) rows.push(await phase(base, pool, n));
} finally {
  await pool.close();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}

console.log(`event fan-out: ${WRITERS} HTTP writers creating persons for ${SECONDS} s per phase; latency = event timestamp (stamped as its batch is decided, before the durable commit) to receipt`);
console.table(rows.map(({ created: _c, failed: _f, latency_samples: _l, ...row }) => row));
const dir = new URL('./results/', import.meta.url);
mkdirSync(dir, { recursive: true });
const file = new URL(`events-fanout-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, dir);
writeFileSync(file, JSON.stringify({ bench: 'events fan-out', node: process.version, seconds: SECONDS, writers: WRITERS, durability: 'sync', rows }, null, 2));
console.log(`written ${fileURLToPath(file)}`);
