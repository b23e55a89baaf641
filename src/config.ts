// Configuration: every setting with its documented default, validated once at start.
import { availableParallelism } from 'node:os';
import { addressList } from './lib/address-list.js';
import { loadRegionTransport, RegionTransportError, type RegionTransportConfig } from './lib/region-transport.js';

export const REGION_NAMES = ['us-iowa', 'europe-belgium', 'asia-japan', 'europe-england', 'australia-sydney'] as const;
export type RegionName = (typeof REGION_NAMES)[number];
export const TOKEN_ALGS = ['ES256', 'RS256', 'EdDSA'] as const;
export type TokenAlg = (typeof TOKEN_ALGS)[number];

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
  /** SERVICE_REGION_TRANSPORT and its settings: how regions reach each other (simulated when absent) */
  regionTransport?: RegionTransportConfig;
  durability: 'sync' | 'nosync';
  allowFallbackHttp: boolean;
  /** SERVICE_CONSOLE: the administrators' console at /console (default on) */
  console: boolean;
  bodyLimit: number;
  snapshotInterval: number;
  mailboxLimit: number;
  corsOrigins: string[];
  /** SERVICE_TRUSTED_PROXIES: reverse proxies (addresses, CIDR blocks) whose X-Forwarded-For gives the client's address */
  trustedProxies: string[];
  /** how much of each organization's event log is kept (SERVICE_EVENT_RETENTION) */
  eventRetention: EventRetention;
  /** how often the pruning job runs, ms */
  eventPruneIntervalMs: number;
  /** DELETE /organizations: stored keys removed per LMDB transaction, and the wait between two, ms */
  orgDeletion: { batchKeys: number; pauseMs: number };
  /** how often WAL entries every snapshot and replica region covers are removed, ms; 0 never (SERVICE_WAL_COMPACT_INTERVAL_MS) */
  walCompactIntervalMs: number;
  /** how often each organization's event-chain checkpoint is signed and stored when its head moved; 0 never */
  eventCheckpointIntervalMs: number;
  /** bytes a live WebSocket subscriber may have unsent before it is cut off as a slow consumer */
  wsMaxBuffer: number;
  /** SERVICE_WEBHOOK_ALLOW_INSECURE: http, loopback and private webhook targets are allowed (tests, local development) */
  webhookAllowInsecure: boolean;
  /** RFC 9449 9: DPoP proofs must carry a nonce this server issued (SERVICE_OAUTH_DPOP_NONCE) */
  dpopNonce: boolean;
  /** event webhook deliveries: back-off base and cap in ms, and attempts per event before it is dead-lettered */
  webhookRetry: WebhookRetry;
  /** repeated failed sign-ins per handle and per client IP, counted in a sliding window */
  authThrottle: { windowMs: number; perHandle: number; perIp: number };
  /** the browser side: POST /actions/sdk and POST /persons/anonymous rates per window, anonymous persons' lifetime (s) */
  browser: { rateWindowMs: number; sdkPerIp: number; sdkPerOrg: number; anonymousPerIp: number; anonymousTtl: number; anonymousSweepMs: number; mitmRateWindowMs: number; mitmPerKey: number; mitmPerToken: number };
  /** SSO sign-ins in flight (started, not yet called back) held at most per organization, and per organization and client address */
  ssoPending: { perOrg: number; perAddress: number };
  /** signing algorithm of new identity-token keys */
  tokenAlg: TokenAlg;
  /** identity-token lifetime, seconds */
  tokenTtl: number;
  /** worker threads that sign identity tokens; 0 signs on the main thread */
  signingThreads: number;
  /** SERVICE_SMTP_URL: smtp:// or smtps:// (credentials in the URL) for password-reset messages; unset sends none */
  smtpUrl?: string;
  /** SERVICE_SMTP_FROM: the sender address of those messages */
  smtpFrom: string;
  /** SERVICE_PASSWORD_RESET_TTL: seconds a password-reset link lives */
  passwordResetTtl: number;
  /** SERVICE_SMS_URL: http(s) URL that receives each text message (one-time codes and links), signed; unset sends none */
  smsUrl?: string;
  /** SERVICE_ONE_TIME_CODE_TTL: seconds a one-time code or link (by email or SMS) lives */
  oneTimeCodeTtl: number;
  /** SERVICE_CLOUD_SNAPSHOT_INTERVAL: seconds between inventories of each cloud connection; 0 turns them off */
  cloudSnapshotInterval: number;
  /** SERVICE_BILLING_INTERVAL: seconds between billing counts (the seed: hourly); 0 turns them off */
  billingInterval: number;
  /** SERVICE_SECRETS_KEY: 32 bytes that seal the stored signing keys and cursor secret; unset stores them in the clear */
  secretsKey?: Buffer;
  /** SERVICE_SECRETS_KEY_PREVIOUS: the key being replaced; secrets it sealed are sealed again with secretsKey at start */
  secretsKeyPrevious?: Buffer;
}

export interface WebhookRetry {
  baseMs: number;
  maxMs: number;
  limit: number;
}

/** Keep the newest `count` events, or the events younger than `ms`, of each organization. */
export type EventRetention = { kind: 'count'; count: number } | { kind: 'age'; ms: number };

export const DEFAULT_EVENT_RETENTION: EventRetention = { kind: 'count', count: 1_000_000 };

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

const AGE_UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `100000` keeps that many events per organization; `7d`, `24h`, `30m`, `90s` keep the events younger than that. */
export function parseRetention(raw: string | undefined): EventRetention {
  if (raw === undefined || raw === '') return DEFAULT_EVENT_RETENTION;
  const count = /^\d+$/.exec(raw);
  if (count) {
    const n = Number(raw);
    if (n < 1 || !Number.isSafeInteger(n)) throw new ConfigError(`SERVICE_EVENT_RETENTION must keep at least 1 event, got "${raw}"`);
    return { kind: 'count', count: n };
  }
  const age = /^(\d+)([smhd])$/.exec(raw);
  if (!age) throw new ConfigError(`SERVICE_EVENT_RETENTION must be a count (100000) or an age (7d, 24h, 30m, 90s), got "${raw}"`);
  const ms = Number(age[1]) * (AGE_UNITS[age[2] as string] as number);
  if (ms < 1000 || !Number.isSafeInteger(ms)) throw new ConfigError(`SERVICE_EVENT_RETENTION must be at least 1s, got "${raw}"`);
  return { kind: 'age', ms };
}

function webhookRetry(env: Env): WebhookRetry {
  const baseMs = integer(env, 'SERVICE_WEBHOOK_RETRY_BASE_MS', 1000, 1, 3_600_000);
  const maxMs = integer(env, 'SERVICE_WEBHOOK_RETRY_MAX_MS', 300_000, 1, 86_400_000);
  if (maxMs < baseMs) throw new ConfigError(`SERVICE_WEBHOOK_RETRY_MAX_MS (${maxMs}) must not be below SERVICE_WEBHOOK_RETRY_BASE_MS (${baseMs})`);
  return { baseMs, maxMs, limit: integer(env, 'SERVICE_WEBHOOK_RETRY_LIMIT', 10, 1, 1000) };
}

/** SERVICE_OPERATOR_KEY: undefined leaves the operator endpoints off; as long as a root API key at least. */
export function loadOperatorKey(env: Env): string | undefined {
  const key = env['SERVICE_OPERATOR_KEY'] || undefined;
  if (key !== undefined && !/^[\x21-\x7e]{16,512}$/.test(key)) {
    throw new ConfigError(`SERVICE_OPERATOR_KEY must be 16-512 visible ASCII characters (no spaces), got ${key.length} characters`);
  }
  return key;
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
  // The front accepts Service-API-Key values of visible ASCII only: a key with anything else could not be presented.
  if (rootApiKey !== undefined && !/^[\x21-\x7e]{16,512}$/.test(rootApiKey)) {
    throw new ConfigError('SERVICE_ROOT_API_KEY must be 16-512 visible ASCII characters (no spaces)');
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

  const tokenAlg = env['SERVICE_TOKEN_ALG'] || 'ES256';
  if (!(TOKEN_ALGS as readonly string[]).includes(tokenAlg)) {
    throw new ConfigError(`SERVICE_TOKEN_ALG must be one of ${TOKEN_ALGS.join(', ')}, got "${tokenAlg}"`);
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
    regionTransport: regionTransport(env, regions),
    durability,
    allowFallbackHttp: flag(env, 'SERVICE_ALLOW_FALLBACK_HTTP'),
    console: env['SERVICE_CONSOLE'] === undefined || env['SERVICE_CONSOLE'] === '' || flag(env, 'SERVICE_CONSOLE'),
    bodyLimit: integer(env, 'SERVICE_BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    snapshotInterval: integer(env, 'SERVICE_SNAPSHOT_INTERVAL', 10_000, 1, 10_000_000),
    mailboxLimit: integer(env, 'SERVICE_MAILBOX_LIMIT', 10_000, 1, 10_000_000),
    corsOrigins: list(env['SERVICE_CORS_ORIGINS']),
    trustedProxies: trustedProxies(env['SERVICE_TRUSTED_PROXIES']),
    eventRetention: parseRetention(env['SERVICE_EVENT_RETENTION']),
    eventPruneIntervalMs: integer(env, 'SERVICE_EVENT_PRUNE_INTERVAL_MS', 60_000, 10, 86_400_000),
    walCompactIntervalMs: integer(env, 'SERVICE_WAL_COMPACT_INTERVAL_MS', 10_000, 0, 86_400_000),
    eventCheckpointIntervalMs: integer(env, 'SERVICE_EVENT_CHECKPOINT_INTERVAL_MS', 300_000, 0, 86_400_000),
    orgDeletion: {
      batchKeys: integer(env, 'SERVICE_ORG_DELETE_BATCH', 1000, 1, 1_000_000),
      pauseMs: integer(env, 'SERVICE_ORG_DELETE_PAUSE_MS', 0, 0, 3_600_000),
    },
    // At least 64 KiB, so that one large event frame always fits an empty buffer.
    wsMaxBuffer: integer(env, 'SERVICE_WS_MAX_BUFFER', 4 * 1024 * 1024, 64 * 1024, 1024 * 1024 * 1024),
    webhookAllowInsecure: flag(env, 'SERVICE_WEBHOOK_ALLOW_INSECURE'),
    dpopNonce: flag(env, 'SERVICE_OAUTH_DPOP_NONCE'),
    webhookRetry: webhookRetry(env),
    authThrottle: {
      windowMs: integer(env, 'SERVICE_AUTH_THROTTLE_WINDOW', 300, 1, 86_400) * 1000,
      perHandle: integer(env, 'SERVICE_AUTH_THROTTLE_PER_HANDLE', 10, 1, 1_000_000),
      perIp: integer(env, 'SERVICE_AUTH_THROTTLE_PER_IP', 100, 1, 1_000_000),
    },
    browser: {
      rateWindowMs: integer(env, 'SERVICE_BROWSER_RATE_WINDOW', 10, 1, 86_400) * 1000,
      sdkPerIp: integer(env, 'SERVICE_SDK_RATE_PER_IP', 1000, 1, 100_000_000),
      sdkPerOrg: integer(env, 'SERVICE_SDK_RATE_PER_ORG', 100_000, 1, 100_000_000),
      anonymousPerIp: integer(env, 'SERVICE_ANONYMOUS_RATE_PER_IP', 100, 1, 100_000_000),
      anonymousTtl: integer(env, 'SERVICE_ANONYMOUS_TTL', 2_592_000, 1, 366 * 86_400),
      anonymousSweepMs: integer(env, 'SERVICE_ANONYMOUS_SWEEP_INTERVAL_MS', 60_000, 10, 86_400_000),
      mitmRateWindowMs: integer(env, 'SERVICE_MITM_RATE_WINDOW', 60, 1, 86_400) * 1000,
      mitmPerKey: integer(env, 'SERVICE_MITM_RATE_PER_KEY', 5, 1, 1_000_000),
      mitmPerToken: integer(env, 'SERVICE_MITM_RATE_PER_TOKEN', 100, 1, 1_000_000),
    },
    ssoPending: {
      perOrg: integer(env, 'SERVICE_SSO_PENDING_PER_ORG', 10_000, 1, 10_000_000),
      perAddress: integer(env, 'SERVICE_SSO_PENDING_PER_ADDRESS', 1_000, 1, 10_000_000),
    },
    tokenAlg: tokenAlg as TokenAlg,
    // At most a year: a retired signing key stays published until the last token it signed expires.
    tokenTtl: integer(env, 'SERVICE_TOKEN_TTL', 86_400, 1, 366 * 86_400),
    // One thread is enough to keep up with the main thread; on a single core it would only add hops.
    signingThreads: integer(env, 'SERVICE_SIGNING_THREADS', availableParallelism() > 1 ? 1 : 0, 0, 64),
    ...smtp(env, host),
    passwordResetTtl: integer(env, 'SERVICE_PASSWORD_RESET_TTL', 3600, 60, 30 * 86_400),
    ...smsUrl(env),
    oneTimeCodeTtl: integer(env, 'SERVICE_ONE_TIME_CODE_TTL', 600, 60, 3600),
    cloudSnapshotInterval: integer(env, 'SERVICE_CLOUD_SNAPSHOT_INTERVAL', 3600, 0, 30 * 86_400),
    billingInterval: integer(env, 'SERVICE_BILLING_INTERVAL', 3600, 0, 30 * 86_400),
    ...secretsKey(env),
  };
}

function smtp(env: Env, host: string): { smtpUrl?: string; smtpFrom: string } {
  const url = env['SERVICE_SMTP_URL'] || undefined;
  if (url !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') || parsed.hostname === '') {
      throw new ConfigError('SERVICE_SMTP_URL must be smtp://host:port or smtps://host:port (credentials in the URL)');
    }
  }
  const from = env['SERVICE_SMTP_FROM'] || `no-reply@${host === '127.0.0.1' || host === '0.0.0.0' ? 'localhost' : host}`;
  if (!/^[^\s@<>"]+@[^\s@<>"]+$/.test(from)) throw new ConfigError(`SERVICE_SMTP_FROM must be an address (name@domain), got "${from}"`);
  return { ...(url !== undefined && { smtpUrl: url }), smtpFrom: from };
}

function smsUrl(env: Env): { smsUrl?: string } {
  const url = env['SERVICE_SMS_URL'] || undefined;
  if (url === undefined) return {};
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) throw new ConfigError(`SERVICE_SMS_URL must be an http:// or https:// URL, got "${url}"`);
  return { smsUrl: url };
}

/** `127.0.0.1,10.0.0.0/8,::1`: checked here, so that a typo stops the start instead of trusting nobody. */
function trustedProxies(raw: string | undefined): string[] {
  const entries = list(raw);
  try {
    addressList(entries);
  } catch (error) {
    throw new ConfigError(`SERVICE_TRUSTED_PROXIES: ${(error as Error).message}`);
  }
  return entries;
}

function regionTransport(env: Env, regions: string[]): RegionTransportConfig {
  try {
    return loadRegionTransport(env, regions);
  } catch (error) {
    if (error instanceof RegionTransportError) throw new ConfigError(error.message);
    throw error;
  }
}

function secretsKey(env: Env): { secretsKey?: Buffer; secretsKeyPrevious?: Buffer } {
  const key = key32(env, 'SERVICE_SECRETS_KEY');
  const previous = key32(env, 'SERVICE_SECRETS_KEY_PREVIOUS');
  if (previous && !key) throw new ConfigError('SERVICE_SECRETS_KEY_PREVIOUS is set without SERVICE_SECRETS_KEY, the key that replaces it');
  return { ...(key && { secretsKey: key }), ...(previous && { secretsKeyPrevious: previous }) };
}

/** 32 bytes as 64 hex digits or 43 base64url characters (44 base64 with padding), e.g. `openssl rand -hex 32`. */
function key32(env: Env, name: string): Buffer | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : /^[A-Za-z0-9+/_-]{43}=?$/.test(raw) ? Buffer.from(raw, 'base64url') : undefined;
  if (key?.length !== 32) throw new ConfigError(`${name} must be 32 bytes as 64 hex digits or 43 base64url characters (e.g. openssl rand -hex 32)`);
  return key;
}
