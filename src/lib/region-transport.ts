// How regions reach each other (SERVICE_REGION_TRANSPORT): the simulated in-process links (default) or NATS
// JetStream between region processes, with the settings SCALE.md's measurements proved necessary.
import { hostname } from 'node:os';

/** How a process proves itself to its region's nats-servers, and how it checks them (SERVICE_NATS_CREDS, SERVICE_NATS_TLS_*). */
export interface NatsSecurity {
  /** user and password, or a .creds file (an NKey seed and user JWT) */
  auth?: { user: string; pass: string } | { credsFile: string };
  /** the CA that signed the servers' certificates, and this process's own certificate when the servers ask for one */
  tls?: { caFile: string; certFile?: string; keyFile?: string };
}

export type RegionTransportConfig =
  | { kind: 'simulated' }
  | {
      kind: 'jetstream';
      /** this process's region: the origin (the first of SERVICE_REGIONS) or one of the replicas */
      region: string;
      /** this region's own nats-server, or its cluster's servers separated by commas */
      natsUrl: string;
      /** copies the region's cluster keeps of the WAL stream (and a replica region of its mirror): 1 or 3 */
      replicas: number;
      /** how long the origin's WAL stream keeps a message: the longest partition a replica rides out, ms */
      retentionMs: number;
      /** pull request expiry: how soon a consumer notices a dead link (the client's 30 s default stalls recovery) */
      pullExpiresMs: number;
      /** client ping interval; three missed pings close a stale connection */
      pingMs: number;
      /** the origin's public address, named when a replica refuses a write */
      originUrl?: string;
      security: NatsSecurity;
      /**
       * SERVICE_COMMIT: `quorum` (the default where a cluster is configured) acknowledges a write once the region's R3
       * commit stream stores it, and lets several processes share the region (one writer per organization, write
       * leases); `local` acknowledges after the local flush, this process being the region's one writer, as before
       */
      commit: 'local' | 'quorum';
      /** SERVICE_PROCESS_NAME: this process's name in its region, the lease holder's name (default host name and port) */
      processName: string;
      /** SERVICE_PUBLIC_URL: where clients reach this process, the Location of the 307 other processes answer */
      publicUrl?: string;
      /** SERVICE_LEASE_TTL and SERVICE_LEASE_RENEW, ms */
      leaseTtlMs: number;
      leaseRenewMs: number;
    };

type Env = Record<string, string | undefined>;

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function duration(env: Env, name: string, fallback: string, minMs: number): number {
  const raw = env[name] || fallback;
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(raw);
  const ms = m ? Number(m[1]) * (m[2] === 'ms' ? 1 : (UNITS[m[2] as string] as number)) : NaN;
  if (!Number.isSafeInteger(ms) || ms < minMs) throw new RegionTransportError(`${name} must be a duration such as 500ms, 5s, 10m, 7d of at least ${minMs} ms, got "${raw}"`);
  return ms;
}

export class RegionTransportError extends Error {}

function natsSecurity(env: Env): NatsSecurity {
  const out: NatsSecurity = {};
  const creds = env['SERVICE_NATS_CREDS'];
  if (creds) {
    const colon = creds.indexOf(':');
    // A path to a .creds file never starts with "user:"; a password may hold colons after the first.
    if (colon > 0 && !creds.includes('/')) out.auth = { user: creds.slice(0, colon), pass: creds.slice(colon + 1) };
    else if (creds.endsWith('.creds')) out.auth = { credsFile: creds };
    else throw new RegionTransportError('SERVICE_NATS_CREDS must be user:password or the path of a .creds file (NKey seed and user JWT)');
  }
  const caFile = env['SERVICE_NATS_TLS_CA'];
  const certFile = env['SERVICE_NATS_TLS_CERT'];
  const keyFile = env['SERVICE_NATS_TLS_KEY'];
  if ((certFile === undefined) !== (keyFile === undefined)) throw new RegionTransportError('SERVICE_NATS_TLS_CERT and SERVICE_NATS_TLS_KEY go together');
  if (certFile !== undefined && !caFile) throw new RegionTransportError('SERVICE_NATS_TLS_CERT needs SERVICE_NATS_TLS_CA');
  if (caFile) out.tls = { caFile, ...(certFile ? { certFile, keyFile: keyFile as string } : {}) };
  return out;
}

/** Reads SERVICE_REGION_TRANSPORT and, for jetstream, its settings; `regions` is SERVICE_REGIONS, origin first. */
export function loadRegionTransport(env: Env, regions: readonly string[]): RegionTransportConfig {
  const kind = env['SERVICE_REGION_TRANSPORT'] || 'simulated';
  if (kind === 'simulated') return { kind };
  if (kind !== 'jetstream') throw new RegionTransportError(`SERVICE_REGION_TRANSPORT must be simulated or jetstream, got "${kind}"`);
  const region = env['SERVICE_REGION'] || (regions[0] as string);
  if (!regions.includes(region)) throw new RegionTransportError(`SERVICE_REGION "${region}" is not one of SERVICE_REGIONS (${regions.join(', ')})`);
  const natsUrl = env['SERVICE_NATS_URL'] || 'nats://127.0.0.1:4222';
  if (!natsUrl.split(',').every((u) => /^(nats|tls):\/\/[^\s/,]+$/.test(u))) throw new RegionTransportError(`SERVICE_NATS_URL must look like nats://host:port, or several separated by commas (the region's cluster), got "${natsUrl}"`);
  const replicas = env['SERVICE_NATS_REPLICAS'] || '1';
  if (replicas !== '1' && replicas !== '3') throw new RegionTransportError(`SERVICE_NATS_REPLICAS must be 1 or 3 (copies of the WAL stream in the region's cluster), got "${replicas}"`);
  const originUrl = env['SERVICE_ORIGIN_URL'] || undefined;
  const cluster = replicas === '3' || natsUrl.includes(',');
  const commit = env['SERVICE_COMMIT'] || (cluster ? 'quorum' : 'local');
  if (commit !== 'local' && commit !== 'quorum') throw new RegionTransportError(`SERVICE_COMMIT must be local or quorum, got "${commit}"`);
  const leaseTtlMs = duration(env, 'SERVICE_LEASE_TTL', '5s', 500);
  const leaseRenewMs = duration(env, 'SERVICE_LEASE_RENEW', '1s', 50);
  if (leaseRenewMs * 2 > leaseTtlMs) throw new RegionTransportError(`SERVICE_LEASE_RENEW (${leaseRenewMs} ms) must be at most half of SERVICE_LEASE_TTL (${leaseTtlMs} ms), or one late renewal loses the lease`);
  const publicUrl = env['SERVICE_PUBLIC_URL'] || undefined;
  if (publicUrl !== undefined && !/^https?:\/\/[^\s/]+\/?$/.test(publicUrl)) throw new RegionTransportError(`SERVICE_PUBLIC_URL must look like https://host[:port], got "${publicUrl}"`);
  return {
    kind,
    region,
    natsUrl,
    replicas: Number(replicas),
    retentionMs: duration(env, 'SERVICE_NATS_RETENTION', '7d', 60_000),
    pullExpiresMs: duration(env, 'SERVICE_NATS_PULL_EXPIRES', '5s', 1000),
    pingMs: duration(env, 'SERVICE_NATS_PING', '2s', 100),
    ...(originUrl ? { originUrl } : {}),
    security: natsSecurity(env),
    commit,
    processName: env['SERVICE_PROCESS_NAME'] || `${hostname()}:${env['SERVICE_PORT'] || '8080'}`,
    ...(publicUrl ? { publicUrl: publicUrl.replace(/\/$/, '') } : {}),
    leaseTtlMs,
    leaseRenewMs,
  };
}
