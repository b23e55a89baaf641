// Configuration: every setting with its documented default, validated once at start.
export const REGION_NAMES = ['us-iowa', 'europe-belgium', 'asia-japan', 'europe-england', 'australia-sydney'] as const;
export type RegionName = (typeof REGION_NAMES)[number];

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  issuer: string;
  rootOrgId: string | undefined;
  rootApiKey: string | undefined;
  regions: RegionName[];
  /** simulated one-way latency and jitter of every replication link, in ms */
  replicationLatencyMs: number;
  replicationJitterMs: number;
  durability: 'sync' | 'nosync';
  allowFallbackHttp: boolean;
  bodyLimit: number;
  snapshotInterval: number;
  mailboxLimit: number;
  corsOrigins: string[];
  /** SERVICE_WEBHOOK_ALLOW_INSECURE: http, loopback and private webhook targets are allowed (tests, local development) */
  webhookAllowInsecure: boolean;
  /** repeated failed sign-ins per handle and per client IP, counted in a sliding window */
  authThrottle: { windowMs: number; perHandle: number; perIp: number };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function flag(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(`${name} must be 1 or 0, got "${raw}"`);
}

function list(raw: string | undefined): string[] {
  return (raw ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
}

export function loadConfig(env: Env): Config {
  const host = env['SERVICE_HOST'] || '127.0.0.1';
  const port = integer(env, 'SERVICE_PORT', 8080, 0, 65535);

  const rootOrgId = env['SERVICE_ROOT_ORG_ID'] || undefined;
  if (rootOrgId !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(rootOrgId)) {
    throw new ConfigError('SERVICE_ROOT_ORG_ID must be 1-64 characters of A-Z a-z 0-9 _ -');
  }
  const rootApiKey = env['SERVICE_ROOT_API_KEY'] || undefined;
  if (rootApiKey !== undefined && rootApiKey.length < 16) {
    throw new ConfigError('SERVICE_ROOT_API_KEY must be at least 16 characters');
  }

  const regions = list(env['SERVICE_REGIONS'] || 'europe-belgium');
  for (const r of regions) {
    if (!(REGION_NAMES as readonly string[]).includes(r)) {
      throw new ConfigError(`SERVICE_REGIONS: unknown region "${r}" (known: ${REGION_NAMES.join(', ')})`);
    }
  }
  if (new Set(regions).size !== regions.length) throw new ConfigError('SERVICE_REGIONS names a region twice');

  const durability = env['SERVICE_DURABILITY'] || 'sync';
  if (durability !== 'sync' && durability !== 'nosync') {
    throw new ConfigError(`SERVICE_DURABILITY must be sync or nosync, got "${durability}"`);
  }

  return {
    host,
    port,
    dataDir: env['SERVICE_DATA_DIR'] || './data',
    issuer: (env['SERVICE_ISSUER'] || `http://${host}:${port}`).replace(/\/$/, ''),
    rootOrgId,
    rootApiKey,
    regions: regions as RegionName[],
    replicationLatencyMs: integer(env, 'SERVICE_REPLICATION_LATENCY_MS', 0, 0, 60_000),
    replicationJitterMs: integer(env, 'SERVICE_REPLICATION_JITTER_MS', 0, 0, 60_000),
    durability,
    allowFallbackHttp: flag(env, 'SERVICE_ALLOW_FALLBACK_HTTP'),
    bodyLimit: integer(env, 'SERVICE_BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    snapshotInterval: integer(env, 'SERVICE_SNAPSHOT_INTERVAL', 10_000, 1, 10_000_000),
    mailboxLimit: integer(env, 'SERVICE_MAILBOX_LIMIT', 10_000, 1, 10_000_000),
    corsOrigins: list(env['SERVICE_CORS_ORIGINS']),
    webhookAllowInsecure: flag(env, 'SERVICE_WEBHOOK_ALLOW_INSECURE'),
    authThrottle: {
      windowMs: integer(env, 'SERVICE_AUTH_THROTTLE_WINDOW', 300, 1, 86_400) * 1000,
      perHandle: integer(env, 'SERVICE_AUTH_THROTTLE_PER_HANDLE', 10, 1, 1_000_000),
      perIp: integer(env, 'SERVICE_AUTH_THROTTLE_PER_IP', 100, 1, 1_000_000),
    },
  };
}
