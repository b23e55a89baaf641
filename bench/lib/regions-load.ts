// A small closed-loop HTTP load generator: a fixed number of keep-alive connections, each sending its
// next request as soon as the previous answer is read, for a fixed time. Records every latency.
import { Pool } from 'undici';

export interface LoadRequest {
  method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  origin: string;
  connections: number;
  durationMs: number;
  /** the i-th request overall */
  request(i: number): LoadRequest;
}

export interface LoadResult {
  requests: number;
  errors: number;
  /** statuses seen, with counts */
  statuses: Record<string, number>;
  seconds: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const pool = new Pool(options.origin, { connections: options.connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let next = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + options.durationMs;

  const worker = async () => {
    while (performance.now() < deadline) {
      const req = options.request(next++);
      const t0 = performance.now();
      try {
        const res = await pool.request({ method: req.method, path: req.path, headers: req.headers, body: req.body ?? null });
        await res.body.dump();
        latencies.push(performance.now() - t0);
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (res.statusCode >= 300) errors++;
      } catch {
        errors++;
        statuses['network'] = (statuses['network'] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();

  const sorted = Float64Array.from(latencies).sort();
  return {
    requests: latencies.length,
    errors,
    statuses,
    seconds,
    rps: latencies.length / seconds,
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    max_ms: sorted.length > 0 ? (sorted[sorted.length - 1] as number) : NaN,
  };
}
