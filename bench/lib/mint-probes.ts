// Measurements made in the benchmark's own process: the signing ceiling of one core, and how long a
// durable LMDB commit takes on this disk right now (what bounds durable minting when the disk is slow).
import { importPKCS8, SignJWT } from 'jose';
import type { TokenAlg } from '../../src/config.js';
import { systemClock } from '../../src/lib/clock.js';
import { identityClaims } from '../../src/tokens/claims.js';
import { openKeyRing } from '../../src/tokens/keys.js';
import { createTokenIssuer } from '../../src/tokens/sign.js';
import { createWal } from '../../src/wal/log.js';
import { openTempStore } from './temp-store.js';
import { Histogram, type LatencySummary } from './histogram.js';

/** Runs fn back to back on this thread for `seconds`; returns operations per second. */
async function loop(seconds: number, fn: () => unknown): Promise<number> {
  const started = performance.now();
  const end = started + seconds * 1000;
  let n = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 50; i++) await fn();
    n += 50;
  }
  return n / ((performance.now() - started) / 1000);
}

/**
 * Whole identity tokens per second on one core: claims as the service builds them, then the service's
 * node:crypto signer; and jose's SignJWT on the same claims and key, for reference.
 */
export async function signingCeiling(alg: TokenAlg, seconds: number): Promise<{ node: number; jose: number }> {
  const meta = new Map<string, unknown>();
  const keys = await openKeyRing({ meta: { getMeta: <T>(k: string) => meta.get(k) as T | undefined, putMeta: async (k, v) => void meta.set(k, v) }, name: 'k', alg, ttl: 86400, clock: systemClock });
  const issuer = createTokenIssuer({ keys, issuer: 'http://127.0.0.1:8080', ttl: 86400, clock: systemClock });
  const person = { person_id: '01938f6e-7d3c-7000-8000-000000000000', region: 'europe-belgium', groups: [] };
  const claims = () => identityClaims({ org: 'bench-org', person, authenticated_methods: ['api'], first_token: false });
  const node = await loop(seconds, () => issuer.issue(claims()).token);
  const key = await importPKCS8(keys.current().privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, alg);
  const jose = await loop(seconds, () =>
    new SignJWT(claims()).setProtectedHeader({ alg, typ: 'JWT', kid: keys.current().kid }).setIssuedAt().setExpirationTime('1d').setJti(crypto.randomUUID()).sign(key),
  );
  return { node, jose };
}

/** Latency (µs) of one durable WAL append of one small entry at a time, through the service's own WAL. */
export async function durableCommitLatency(seconds: number): Promise<LatencySummary & { commits: number }> {
  const temp = openTempStore('mint-bench-disk-', true);
  try {
    const wal = createWal(temp.store, () => {});
    const record = wal.encodeEntry({ at: Date.now(), changes: [{ t: 'TokenIssued', person_id: '01938f6e-7d3c-7000-8000-000000000000', jti: crypto.randomUUID() }], ev: 1 });
    const event = wal.encodeEvent({ token_id: crypto.randomUUID(), pad: 'x'.repeat(400) });
    const latency = new Histogram();
    const end = performance.now() + seconds * 1000;
    for (let offset = 1; performance.now() < end; offset++) {
      const t = performance.now();
      await wal.append([{ org: 'probe', offset, record, events: [{ offset, record: event }] }]);
      latency.record((performance.now() - t) * 1000);
    }
    return { ...latency.summary(), commits: latency.count };
  } finally {
    await temp.close();
  }
}
