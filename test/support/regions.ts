// Helpers for tests with several regions: a three-region server (on the system clock or a manual one), the
// operator endpoint, bounded polling, and reading a local or replica LMDB log after the service has stopped.
import { createManualClock, type ManualClock } from '../../src/lib/manual-clock.js';
import type { RegionWaiter } from '../../src/regions/waiters.js';
import { createWal } from '../../src/wal/log.js';
import { openStore } from '../../src/wal/store.js';
import { startTestServer, type TestServer } from './server.js';

export const OPERATOR_KEY = 'operator-key-0123456789abcdef';
export const THREE_REGIONS = { SERVICE_REGIONS: 'europe-belgium,us-iowa,asia-japan' };
export const ALL_REGIONS = { 'Service-Required-Consistency': 'all_regions' };
export const allRegions = (timeoutSeconds: number) => ({ ...ALL_REGIONS, 'Service-Required-Consistency-Timeout': String(timeoutSeconds) });

export function startRegionServer(env: Record<string, string> = {}, dataDir?: string): Promise<TestServer> {
  return startTestServer({ ...THREE_REGIONS, ...env }, { operatorKey: OPERATOR_KEY }, dataDir);
}

/** How long a test waits for what must happen "eventually": long enough for a busy machine, short enough to fail. */
export const EVENTUALLY_MS = 30_000;

export interface ClockedRegionServer {
  server: TestServer;
  /** links, the simulated network and consistency waits run on it; it moves only when the test moves it */
  clock: ManualClock;
  /** the service's consistency waits, to see how many are outstanding */
  waiter: RegionWaiter;
}

/**
 * A three-region server on a manual clock that starts at the wall clock's now. With no simulated latency,
 * shipping and acknowledgements need no clock time, so only what the test times (a wait's timeout, a stall)
 * depends on the clock, and a busy machine only makes it slower, never earlier or later on the clock.
 */
export async function startClockedRegionServer(env: Record<string, string> = {}): Promise<ClockedRegionServer> {
  const clock = createManualClock(Date.now());
  const server = await startTestServer({ ...THREE_REGIONS, ...env }, { operatorKey: OPERATOR_KEY, clock });
  const waiter = server.service.regions.consistency as RegionWaiter;
  if (typeof waiter.pending !== 'function') throw new Error('the consistency waiter does not count its waits');
  return { server, clock, waiter };
}

/** Resolves as `p` does; fails with `what` if it has not settled after `timeoutMs` of real time. */
export async function within<T>(p: Promise<T>, what: string, timeoutMs = EVENTUALLY_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

export async function setLink(base: string, region: string, body: unknown, key = OPERATOR_KEY): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/ops/regions/${region}`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json', 'Service-Operator-Key': key },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

export interface RegionHealth {
  name: string;
  state: string;
  lag_entries: number;
}

export async function regionHealth(base: string): Promise<RegionHealth[]> {
  const res = await fetch(`${base}/health`);
  const body = (await res.json()) as { result: { regions: RegionHealth[] } };
  return body.result.regions;
}

/** Polls until `check` returns true; fails with `what` after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function caughtUp(base: string): Promise<boolean> {
  return regionHealth(base).then((rs) => rs.every((r) => r.state === 'local' || (r.state === 'streaming' && r.lag_entries === 0)));
}

/** Every organization's log in a stopped data dir: org → [offset, record as hex] in key order. */
export async function readLog(dataDir: string, storeName: string): Promise<Map<string, Array<[number, string]>>> {
  const store = openStore(dataDir, storeName, false);
  try {
    const wal = createWal(store, () => {});
    const out = new Map<string, Array<[number, string]>>();
    for (const org of wal.organizations()) {
      out.set(org, wal.records(org, 0, Number.MAX_SAFE_INTEGER).map((r): [number, string] => [r.offset, r.record.toString('hex')]));
    }
    return out;
  } finally {
    await store.close();
  }
}
