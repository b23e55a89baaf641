// Builds the whole service from a configuration: store, WAL, organizations, front. main.ts and the tests use it.
import { createHmac, randomBytes } from 'node:crypto';
import { createPasswordHasher } from './auth/password-hash.js';
import { createIssuePipeline, type IssuePipeline } from './auth/issue.js';
import { createSignIn } from './auth/sign-in.js';
import { createDirectIdSignIn } from './auth/direct-id.js';
import { createTotp, TOTP_FAILURES_PER_WINDOW, type TotpService } from './auth/totp.js';
import { totpRoutes } from './http/handlers/totp.js';
import { oneTimeCodeRoutes } from './http/handlers/one-time-codes.js';
import { createOneTimeCodes, ONE_TIME_PER_ADDRESS, ONE_TIME_PER_HANDLE } from './auth/one-time-codes.js';
import { createSmsSender } from './auth/sms-sender.js';
import { createPasskeys, type PasskeyService } from './auth/webauthn.js';
import { webauthnRoutes } from './http/handlers/webauthn.js';
import { bulkImportRoutes } from './http/handlers/bulk-import.js';
import { acceptConsoleTokens, createConsoleTokens } from './console/auth.js';
import { createFirstAdministrator, type FirstAdministrator } from './console/administrators.js';
import { consoleBundle, type ConsoleBundle } from './console/build.js';
import { consoleRoutes } from './console/routes.js';
import { directIdRoutes } from './http/handlers/direct-id.js';
import { quotaRoutes } from './http/handlers/quota.js';
import { createLimiter } from './auth/throttle.js';
import { createSealer, type Sealer } from './lib/signed.js';
import type { Config } from './config.js';
import { createEventCodec, type EventCodec } from './events/codec.js';
import type { EventJson } from './events/event-json.js';
import { createChainer, fillChains } from './events/chain.js';
import { createEventLog, type EventLog } from './events/log.js';
import { createEventStamper } from './events/stamp.js';
import { CLOSE_GOING_AWAY, CLOSE_KEY_ROTATED, createEventStream, type EventStream } from './events/stream.js';
import { Front } from './http/server.js';
import { createPager } from './http/paging.js';
import type { Route } from './http/route.js';
import type { HandlerDeps } from './http/handlers/deps.js';
import { attributeRoutes } from './http/handlers/attributes.js';
import { consentRoutes } from './http/handlers/consents.js';
import { deadLetterRoutes } from './http/handlers/dead-letters.js';
import { consistencyRoutes } from './http/handlers/consistency.js';
import { eventChainRoutes } from './http/handlers/event-chain.js';
import { eventRoutes } from './http/handlers/events.js';
import { gateEventRoutes } from './http/handlers/gate-events.js';
import { sdkRoutes } from './http/handlers/sdk.js';
import { anonymousRoutes } from './http/handlers/anonymous.js';
import { endUserRoutes } from './http/handlers/end-user.js';
import { mitmRoutes } from './http/handlers/mitm.js';
import { createMitmDetector } from './browser/mitm.js';
import { personAuthenticator } from './http/person-auth.js';
import { createAnonymousPersons, startAnonymousExpiry } from './browser/anonymous.js';
import { groupRoutes } from './http/handlers/groups.js';
import { organizationRoutes } from './http/handlers/organizations.js';
import { orgConfigRoutes } from './http/handlers/org-config.js';
import { tokenTemplateRoutes } from './http/handlers/token-template.js';
import { passwordRoutes } from './http/handlers/password.js';
import { handleRoutes } from './http/handlers/handles.js';
import { credentialRoutes } from './http/handlers/credentials.js';
import { passwordResetRoutes } from './http/handlers/password-reset.js';
import { templateRoutes } from './http/handlers/templates.js';
import { createPasswordResets } from './auth/password-reset.js';
import { createSmtpSender } from './mail/sender.js';
import { personRoutes } from './http/handlers/persons.js';
import { regionRoutes } from './http/handlers/regions.js';
import { systemRoutes } from './http/handlers/system.js';
import { webhookRoutes } from './http/handlers/webhooks.js';
import { ssoSignInRoutes } from './http/handlers/sso-sign-in.js';
import { createSsoSignIn } from './sso/flow.js';
import { createProviderEndpoints } from './sso/endpoints.js';
import { createPendingFlows, PENDING_FLOW_FORMAT } from './sso/pending.js';
import { createProviderTokens, PROVIDER_TOKENS_FORMAT } from './sso/provider-tokens.js';
import { ssoTokenRoutes } from './http/handlers/sso-tokens.js';
import { createKeyedRecords } from './wal/keyed-records.js';
import { createStateCookies, createStateSealer } from './sso/state-cookie.js';
import { tokenRoutes } from './http/handlers/tokens.js';
import { rbacRoutes } from './http/handlers/rbac.js';
import { ssoCredentialRoutes } from './http/handlers/sso-credentials.js';
import { oauthClientRoutes } from './http/handlers/oauth-clients.js';
import { oauthTokenRoutes } from './http/handlers/oauth-tokens.js';
import { domainRoutes } from './http/handlers/domains.js';
import { domainAllows } from './domain/domains.js';
import { oauthClientAuthenticator } from './http/oauth-client-auth.js';
import { ACCESS_TOKEN_DURATION } from './domain/oauth-clients.js';
import { createAccessTokenIssuer } from './oauth/access-tokens.js';
import { createClientAuthenticator, type AssertionDeps } from './oauth/client-auth.js';
import { createReplayGuard } from './lib/replay-guard.js';
import { createDpop, createDpopNonces } from './oauth/dpop.js';
import { createDpopProofVerifier } from './tokens/dpop-proof.js';
import { createPushedRequests } from './oauth/pushed-requests.js';
import { oauthParRoutes } from './http/handlers/oauth-par.js';
import { oauthRegistrationRoutes } from './http/handlers/oauth-registration.js';
import { initialAccessTokenAuthenticator, registrationAccessTokenAuthenticator } from './http/registration-auth.js';
import { createClientAssertionVerifier } from './tokens/client-assertion.js';
import { createClientIndex } from './oauth/client-index.js';
import { createTokenEndpoint } from './oauth/token-endpoint.js';
import { createPollPacer } from './oauth/device-polls.js';
import { createDeviceFlow } from './oauth/device.js';
import { oauthDeviceRoutes } from './http/handlers/oauth-device.js';
import { createAccessTokens } from './oauth/introspect.js';
import { createAccessTokenVerifier } from './tokens/access-token.js';
import { createAuthorize } from './oauth/authorize.js';
import { createSessionSealer } from './oauth/session.js';
import { createUserInfo } from './oauth/userinfo.js';
import { createUserTokens } from './oauth/user-tokens.js';
import { oauthAuthorizeRoutes } from './http/handlers/oauth-authorize.js';
import { oauthUserInfoRoutes } from './http/handlers/oauth-userinfo.js';
import { oauthLogoutRoutes } from './http/handlers/oauth-logout.js';
import { sessionRoutes } from './http/handlers/sessions.js';
import { createEndSession } from './oauth/end-session.js';
import { createBackchannelLogout, LOGOUT_TOKEN_TTL_S } from './oauth/backchannel-logout.js';
import { createIdTokenHintVerifier } from './tokens/id-token-hint.js';
import { createSecretSealer, type SecretSealer } from './sso/secrets.js';
import { createCredentialSealer } from './cloud/secrets.js';
import { createSerialQueue } from './cloud/serial.js';
import { createClients, createCloudConnections } from './cloud/connections.js';
import { createAwsChanges } from './cloud/aws-changes.js';
import { createAdChanges } from './cloud/ad-changes.js';
import { createGcpUseCases } from './cloud/gcp-changes.js';
import { cloudGcpRoutes } from './http/handlers/cloud-gcp.js';
import { cloudAdRoutes } from './http/handlers/cloud-ad.js';
import { createInventory, type Inventory } from './cloud/inventory.js';
import { createBilling, type Billing } from './cloud/billing.js';
import { cloudConnectionRoutes } from './http/handlers/cloud-connections.js';
import { cloudAwsRoutes } from './http/handlers/cloud-aws.js';
import { cloudBillingRoutes } from './http/handlers/cloud-billing.js';
import { isNativeUws } from './http/uws.js';
import { eventSocketBehavior } from './http/ws.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createIdSource, type IdSource } from './lib/ids.js';
import { Metrics } from './lib/metrics.js';
import { createCommitBus, type CommitBus } from './org/commit-bus.js';
import { hashKey, Registry } from './org/registry.js';
import { createOrgDeletions, deletingOrganizations, type OrgDeletions } from './org/deletion.js';
import { connectRemoteRegions } from './regions/jetstream/remote-regions.js';
import { startRegions, type Regions } from './regions/regions.js';
import { startRegionQuorum, type RegionQuorum } from './regions/ha/region-quorum.js';
import { openNats } from './regions/jetstream/connection.js';
import { openKeyRing, type KeyRing } from './tokens/keys.js';
import { createTokenIssuer } from './tokens/sign.js';
import { createSigner } from './tokens/signing-threads.js';
import { createTokenValidator, type TokenValidator } from './tokens/validate.js';
import { createCheckpoints, type Checkpoints } from './tokens/checkpoint.js';
import { createConsistencyTokens } from './regions/consistency-token.js';
import { originReads } from './regions/read-wait.js';
import { createWal, type Wal } from './wal/log.js';
import { createOutboxStore } from './wal/outbox-store.js';
import { sealedMeta, type MetaStore } from './wal/sealed-meta.js';
import { openStore, type Store } from './wal/store.js';
import { createOrgRemoval } from './wal/org-removal.js';
import { sameSecret } from './lib/same-secret.js';
import { createOutbound, guardedFetch } from './lib/guarded-connect.js';
import { createAddressGuard, type AddressGuard, type Resolver } from './lib/address-guard.js';
import { createWebhookCaller } from './webhooks/caller.js';
import { createDeliverySigner } from './webhooks/delivery-token.js';
import { loadWebhookKeys, WEBHOOK_KEYS_META } from './webhooks/keys.js';
import { createWebhookMetrics } from './webhooks/metrics.js';
import { createOutbox, type Outbox } from './webhooks/outbox.js';
import { createSyncHooks } from './webhooks/sync-hook.js';
import { createCompaction, type CompactedLog, type Compaction } from './wal/compaction.js';

export const VERSION = '0.1.0';

export interface Service {
  port: number;
  issuer: string;
  /** set on the first start of an empty data dir; console_link (with the console on) makes its user the first administrator */
  root: { id: string; api_key: string; console_link?: string } | undefined;
  /** the console's bundle, built on first use; undefined with SERVICE_CONSOLE=0 */
  console: { bundle(): Promise<ConsoleBundle> } | undefined;
  /** what start-up rebuilt from the log: organizations, and WAL entries replayed after their snapshots */
  recovered: { orgs: number; replayed: number };
  registry: Registry;
  /** every durable commit, one record per organization and batch, after the organization's actor wrote it */
  commits: CommitBus;
  /** the local region and the replicas, their links and consistency waits */
  regions: Regions;
  events: { log: EventLog; stream: EventStream };
  /** signed checkpoints of the event chains */
  checkpoints: Checkpoints;
  /** event webhook deliveries */
  outbox: Outbox;
  /** the log: events and metadata can be read through it */
  wal: Wal;
  /** WAL compaction of the local log and of the replica logs in this process */
  compaction: Compaction;
  /** identity-token keys, minting and validation */
  /** identity-token keys, the issuing pipeline and validation */
  tokens: { keys: KeyRing; pipeline: IssuePipeline; validator: TokenValidator };
  /** cloud connection snapshots and billing counts; their timers run on the injected clock */
  cloud: { inventory: Inventory; billing: Billing };
  /** organizations being deleted (DELETE /organizations) */
  deletions: OrgDeletions;
  stop(): Promise<void>;
}

export interface ServiceOptions {
  clock?: Clock;
  log?(message: string): void;
  warn?(message: string): void;
  /** what to do when memory and disk can no longer agree; the process exits by default */
  fatal?(error: unknown): void;
  operatorKey?: string;
  /** source of replication jitter, uniform in [0, 1) */
  random?: () => number;
  /** how webhook target host names are resolved before the address check; DNS by default */
  resolveHost?: Resolver;
  /** tests only: SSO provider origins (https://github.com) answered by loopback stand-ins instead */
  ssoReroute?: Readonly<Record<string, string>>;
}

const TOKEN_KEYS = 'token_keys';
const CURSOR_SECRET = 'cursor_secret';
/** The meta values SERVICE_SECRETS_KEY seals: whoever holds them can sign tokens or forge cursors. */
const SECRETS = [TOKEN_KEYS, WEBHOOK_KEYS_META, CURSOR_SECRET];

export class FallbackHttpError extends Error {
  override name = 'FallbackHttpError';
}

/** What every wing is built from. */
interface Base {
  config: Config;
  options: ServiceOptions;
  clock: Clock;
  ids: IdSource;
  metrics: Metrics;
  guard: AddressGuard;
  log(message: string): void;
  warn(message: string): void;
  /** The issuer is read per use: with SERVICE_PORT=0 its port is known only once the front listens. */
  issuer(): string;
  /** events.proto, loaded once: the chain, the log's protobuf records and the stream's frames */
  codec: EventCodec;
}

export async function startService(config: Config, options: ServiceOptions = {}): Promise<Service> {
  const log = options.log ?? ((m: string) => console.log(m));
  const warn = options.warn ?? ((m: string) => console.warn(`warning: ${m}`));
  const nativeHttp = requireHttp(config, warn);
  const clock = options.clock ?? systemClock;
  let issuer = config.issuer;
  // Every outbound connection made on a tenant's behalf (webhooks, cloud providers, SSO discovery) goes through it.
  const guard = createAddressGuard(options.resolveHost ? { allowInsecure: config.webhookAllowInsecure, resolver: options.resolveHost } : { allowInsecure: config.webhookAllowInsecure });
  const base: Base = { config, options, clock, ids: createIdSource(() => clock.nowMs()), metrics: new Metrics(), log, warn, issuer: () => issuer, codec: createEventCodec(), guard };

  const storage = await openStorage(base);
  const removal = createOrgRemoval(storage.store);
  const quorum = await connectQuorum(base, storage.wal);
  let orgs: Organizations;
  try {
    orgs = await startOrganizations(base, storage.wal, deletingOrganizations(removal), quorum?.quorum);
  } catch (error) {
    await quorum?.close();
    throw error;
  }
  const deletions = createOrgDeletions({ registry: orgs.registry, removal, clock, ...config.orgDeletion, log, warn });
  // Bound once the outbox exists, before pruning starts: the log keeps what webhooks have still to deliver.
  let outbox: Outbox | undefined;
  const events = buildEvents(base, storage.wal, orgs, (org) => outbox?.keepFrom(org));
  const remote = await connectRemoteRegions(config.regionTransport, config.regions, warn, storage.wal);
  const regions = await startRegions({ config, wal: storage.wal, registry: orgs.registry, commits: orgs.commits, metrics: base.metrics, warn, clock, ...(options.random ? { random: options.random } : {}), ...(remote.connect ? { connect: remote.connect } : {}) });
  // Several processes of a region sign and verify with the same keys: the region's, adopted before they are loaded.
  const shared = orgs.quorum ? await adoptRegionSecrets(orgs.quorum, storage, orgs.root !== undefined, warn) : true;
  const tokens = await buildTokens(base, storage.secrets, orgs.registry);
  const webhooks = await buildWebhooks(base, storage, orgs, events.log);
  if (orgs.quorum && !shared) await shareRegionSecrets(orgs.quorum, storage);
  outbox = webhooks.outbox;
  const logouts = buildBackchannelLogout(base, orgs, tokens, webhooks);
  orgs.registry.onRetired((org) => {
    events.stream.closeOrg(org, CLOSE_KEY_ROTATED, 'organization deleted');
    webhooks.outbox.forgetOrganization(org);
  });
  const pipeline = createIssuePipeline({ issuer: tokens.issuer, hooks: webhooks.hooks, consistency: regions.consistency, warn, nowMs: () => clock.nowMs() });

  const cloud = buildCloud(base, orgs.registry);
  const checkpoints = createCheckpoints({
    keys: tokens.keys,
    clock,
    head: (org) => orgs.registry.get(org)?.durableEventOffset ?? 0,
    chainAt: (org, offset) => storage.wal.chainAt(org, offset),
    organizations: () => [...orgs.registry.all()].map((a) => a.id),
    meta: storage.wal,
    warn,
  });
  const consoleWing = config.console ? { bundle: consoleBundle(), firstAdministrator: createFirstAdministrator(storage.secrets) } : undefined;
  const front = buildFront(base, { nativeHttp, storage, orgs, deletions, events, regions, tokens, webhooks, pipeline, cloud, checkpoints, console: consoleWing });
  const port = await front.listen(config.host, config.port);
  if (config.port === 0) issuer = issuer.replace(/:0$/, `:${port}`);
  let root = orgs.root;
  if (root && consoleWing) {
    // In the fragment: the code never reaches a server log or a Referer.
    const code = base.ids.secret();
    await consoleWing.firstAdministrator.issue(root.id, code);
    root = { ...root, console_link: `${issuer}/console#first-administrator=${code}&org=${encodeURIComponent(root.id)}` };
  }
  // Deliveries start once the issuer they carry is known; pruning once the outbox says what to keep.
  await webhooks.outbox.start();
  logouts.start();
  events.log.startPruning(config.eventPruneIntervalMs);
  const compaction = buildCompaction(base, storage.wal, orgs.registry, regions);
  compaction.start(config.walCompactIntervalMs);
  const anonymousExpiry = startAnonymousExpiry({ orgs: () => orgs.registry.all(), clock, intervalMs: config.browser.anonymousSweepMs, warn });
  cloud.inventory.start(config.cloudSnapshotInterval);
  cloud.billing.start(config.billingInterval);
  checkpoints.start(config.eventCheckpointIntervalMs);
  deletions.resume();

  return {
    port,
    issuer,
    root,
    console: consoleWing && { bundle: consoleWing.bundle },
    recovered: orgs.recovered,
    registry: orgs.registry,
    commits: orgs.commits,
    regions,
    events,
    checkpoints,
    outbox: webhooks.outbox,
    wal: storage.wal,
    compaction,
    tokens: { keys: tokens.keys, pipeline, validator: tokens.validator },
    cloud: { inventory: cloud.inventory, billing: cloud.billing },
    deletions,
    async stop() {
      await anonymousExpiry.stop();
      events.stream.closeAll(CLOSE_GOING_AWAY, 'server stopping');
      front.close();
      await cloud.inventory.stop();
      await cloud.billing.stop();
      cloud.clients.close();
      // Calls in flight are aborted, not awaited: their events are delivered again after the restart.
      await webhooks.outbox.stop();
      logouts.stop();
      await events.log.stop();
      await compaction.stop();
      await checkpoints.stop();
      await Promise.all(webhooks.callers.map((c) => c.close()));
      // Before the organizations stop: a removal in progress may still have a parent to tell.
      await deletions.stop();
      await orgs.registry.stop();
      await regions.stop();
      await remote.close();
      await quorum?.close();
      await tokens.signer.close();
      await storage.store.close();
    },
  };
}

/** The local log (compacted up to what its snapshot and every replica region hold) and each in-process replica's own. */
function buildCompaction({ warn }: Base, wal: Wal, registry: Registry, regions: Regions): Compaction {
  const local: CompactedLog = { wal, organizations: () => [...registry.all()].map((a) => a.id), shipped: (org) => regions.shipped(org) };
  const replicas = regions.replicaLogs().map((log): CompactedLog => ({ wal: log, organizations: () => log.organizations() }));
  return createCompaction({ logs: [local, ...replicas], warn });
}

function requireHttp(config: Config, warn: (message: string) => void): boolean {
  const nativeHttp = isNativeUws();
  if (!nativeHttp && !config.allowFallbackHttp) {
    throw new FallbackHttpError('the native uWebSockets.js build did not load, and the pure-Node fallback is slow; set SERVICE_ALLOW_FALLBACK_HTTP=1 to run on it anyway');
  }
  if (!nativeHttp) warn('running on the pure-Node uWebSockets.js fallback: expect much lower throughput');
  return nativeHttp;
}

interface Storage {
  store: Store;
  wal: Wal;
  secrets: MetaStore;
  cursorSecret: Buffer;
}

async function openStorage({ config, log, warn, codec }: Base): Promise<Storage> {
  const store = openStore(config.dataDir, 'local', config.durability === 'sync');
  const wal = createWal(store, warn, { decodeEvent: codec.decodeEvent });
  // Checked before anything else is loaded: a wrong or missing SERVICE_SECRETS_KEY stops the start here.
  const secrets = sealedMeta(wal, config.secretsKey, config.secretsKeyPrevious);
  try {
    const sealedNow = await secrets.sealStored(SECRETS);
    if (sealedNow.length > 0) log(`sealed the stored ${sealedNow.join(', ')} with SERVICE_SECRETS_KEY`);
  } catch (error) {
    await store.close();
    throw error;
  }
  let cursorSecret = secrets.getMeta<Buffer>(CURSOR_SECRET);
  if (!cursorSecret) {
    cursorSecret = randomBytes(32);
    await secrets.putMeta(CURSOR_SECRET, cursorSecret);
  }
  return { store, wal, secrets, cursorSecret: Buffer.from(cursorSecret) };
}

interface Organizations {
  commits: CommitBus;
  quorum?: RegionQuorum;
  registry: Registry;
  recovered: Service['recovered'];
  root: Service['root'];
}

/**
 * With SERVICE_COMMIT=quorum (the origin region on a JetStream cluster): the region's commit stream and write leases,
 * on a connection of their own. Undefined otherwise: a single process writes the region, as before.
 */
async function connectQuorum({ config, log, warn, issuer, metrics }: Base, wal: Wal): Promise<{ quorum: RegionQuorum; close(): Promise<void> } | undefined> {
  const t = config.regionTransport;
  if (t?.kind !== 'jetstream' || t.commit !== 'quorum' || t.region !== config.regions[0]) return undefined;
  const nc = await openNats({ natsUrl: t.natsUrl, pingMs: t.pingMs, name: `quorum ${t.processName}`, security: t.security, warn });
  const quorum = await startRegionQuorum({ nc, region: t.region, process: t.processName, publicUrl: () => t.publicUrl ?? issuer(), replicas: t.replicas, retentionMs: t.retentionMs, leaseTtlMs: t.leaseTtlMs, leaseRenewMs: t.leaseRenewMs, wal, warn, log });
  const leases = metrics.gauge('region_leases_held', 'Organizations whose write lease this process holds (it writes them)');
  const writer = metrics.gauge('region_writer', '1 when this process writes at least one organization of the region, 0 on a standby');
  const lag = metrics.gauge('region_commit_lag_messages', "Messages of the region's commit stream not yet applied by this process");
  const installed = metrics.gauge('region_snapshots_installed', "Organizations this process caught up from a writer's snapshot since it started (it was behind the commit stream's retention)");
  metrics.collect(() => {
    const v = quorum.view();
    leases.set(v.leases);
    writer.set(v.role === 'writer' ? 1 : 0);
    lag.set(v.lag_entries);
    installed.set(v.snapshots_installed);
  });
  return {
    quorum,
    async close() {
      await quorum.stop();
      await nc.drain();
    },
  };
}

/** How long a process of a region that did not create it waits for the region's secrets before it shares its own. */
const SECRETS_WAIT_MS = 30_000;

/**
 * Writes the region's shared secrets (token keys, webhook keys, cursor secret) into the local meta, as stored
 * (sealed under SERVICE_SECRETS_KEY when set, so every process of a region needs the same key). Resolves to false
 * when the region has none yet: this process shares its own once it has made them (shareRegionSecrets).
 */
async function adoptRegionSecrets(quorum: RegionQuorum, storage: Storage, created: boolean, warn: (m: string) => void): Promise<boolean> {
  let shared = await quorum.sharedSecrets();
  // The process that created the region's root makes the secrets; the others wait for them rather than make their own.
  const deadline = performance.now() + (created ? 0 : SECRETS_WAIT_MS);
  while (!shared && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    shared = await quorum.sharedSecrets();
  }
  if (!shared) {
    if (!created) warn(`no process of the region shared its secrets within ${SECRETS_WAIT_MS} ms; sharing this one's`);
    return false;
  }
  await adoptSecrets(storage, shared);
  return true;
}

async function adoptSecrets(storage: Storage, values: Record<string, Uint8Array>): Promise<void> {
  await Promise.all(Object.entries(values).filter(([key]) => SECRETS.includes(key)).map(([key, bytes]) => storage.store.meta.put(key, Buffer.from(bytes))));
  const cursor = storage.secrets.getMeta<Buffer>(CURSOR_SECRET);
  if (cursor) storage.cursorSecret = Buffer.from(cursor);
}

/** Shares this process's secrets; if another process shared first, they are adopted and this process must restart. */
async function shareRegionSecrets(quorum: RegionQuorum, storage: Storage): Promise<void> {
  const mine: Record<string, Uint8Array> = {};
  for (const key of SECRETS) {
    const bytes = storage.store.meta.getBinary(key);
    if (bytes) mine[key] = Buffer.from(bytes);
  }
  const region = await quorum.shareSecrets(mine);
  if (SECRETS.every((key) => Buffer.from(region[key] ?? []).equals(Buffer.from(mine[key] ?? [])))) return;
  await adoptSecrets(storage, region);
  throw new Error("another process shared the region's secrets first; they are stored now, start again to load them");
}

async function startOrganizations({ config, options, clock, ids, metrics, log, warn, codec }: Base, wal: Wal, deleting: ReadonlySet<string>, quorum?: RegionQuorum): Promise<Organizations> {
  const commits = createCommitBus(warn);
  // Under load many entries share a commit (and its one flush): their ratio says how well commits batch.
  const walCommits = metrics.counter('wal_commits_total', 'WAL transactions committed by the organizations (one flush each with sync durability)').bind();
  const walEntries = metrics.counter('wal_entries_total', 'WAL entries committed by the organizations').bind();
  commits.subscribe((commit) => {
    walCommits.inc();
    walEntries.inc(commit.entries.length);
  }, 'counting commits');
  const chain = createChainer(codec);
  const registry = new Registry({
    wal,
    clock,
    ids,
    stamp: createEventStamper(ids),
    chain,
    regions: config.regions,
    mailboxLimit: config.mailboxLimit,
    snapshotInterval: config.snapshotInterval,
    commits,
    ...(quorum ? { quorum } : {}),
    fatal:
      options.fatal ??
      ((error) => {
        console.error('fatal: a WAL commit failed; exiting so that start-up recovers from the log', error);
        process.exit(1);
      }),
    log,
    warn,
  });
  const started = performance.now();
  const recovered = await registry.recover(deleting);
  if (recovered.orgs > 0) log(`recovered ${recovered.orgs} organization(s), replayed ${recovered.replayed} WAL entries in ${Math.round(performance.now() - started)} ms`);
  // A data dir written before events were chained gets its links once, before any new event joins the chain.
  let linked = 0;
  for (const actor of registry.all()) linked += await fillChains(wal, chain, actor.id, actor.durableEventOffset);
  if (linked > 0) log(`chained ${linked} event(s) stored before the event chain existed`);
  let root: Organizations['root'];
  if (quorum) {
    // Caught up with the region's stream first: another process may have created the root, or written on.
    await quorum.start(registry);
    root = await quorum.bootstrap(config.rootOrgId, () => registry.bootstrap(config.rootOrgId, config.rootApiKey));
  } else root = await registry.bootstrap(config.rootOrgId, config.rootApiKey);
  return { commits, registry, recovered, root, ...(quorum ? { quorum } : {}) };
}

function buildEvents({ config, clock, metrics, warn, codec }: Base, wal: Wal, { registry, commits }: Organizations, keepFrom: (org: string) => number | undefined): Service['events'] {
  const eventLog = createEventLog({
    wal,
    head: (org) => registry.get(org)?.durableEventOffset ?? 0,
    organizations: () => [...registry.all()].map((a) => a.id),
    keepFrom,
    retention: config.eventRetention,
    nowMs: () => clock.nowMs(),
    warn,
  });
  const slowConsumers = metrics.counter('events_ws_slow_consumers_total', 'WebSocket subscribers cut off for not reading fast enough');
  const stream = createEventStream({
    log: eventLog,
    encodeProtobufFrame: (offset, name, event, chain) => codec.encodeStreamFrame(offset, name, event as EventJson, chain),
    maxBuffer: config.wsMaxBuffer,
    warn,
    onSlowConsumer: () => slowConsumers.inc(),
  });
  const subscribers = metrics.gauge('events_ws_subscribers', 'WebSocket event stream subscribers');
  metrics.collect(() => subscribers.set(stream.count()));
  commits.subscribe((commit) => stream.committed(commit), 'publishing to the event stream');
  return { log: eventLog, stream };
}

interface Tokens {
  keys: KeyRing;
  signer: ReturnType<typeof createSigner>;
  issuer: ReturnType<typeof createTokenIssuer>;
  validator: TokenValidator;
}

async function buildTokens({ config, clock, metrics, log, warn, issuer }: Base, secrets: MetaStore, registry: Registry): Promise<Tokens> {
  const keys = await openKeyRing({ meta: secrets, name: TOKEN_KEYS, alg: config.tokenAlg, ttl: config.tokenTtl, clock, log });
  const signingRestarts = metrics.counter('signing_thread_restarts_total', 'signing threads replaced after one exited or failed');
  const tokenSigner = createSigner(config.signingThreads, {
    replaced(reason) {
      signingRestarts.inc();
      warn(`a signing thread stopped (${reason.message}); its tokens in flight were refused, and a new thread took its place`);
    },
  });
  const tokenIssuer = createTokenIssuer({ keys, issuer, ttl: config.tokenTtl, clock, signer: tokenSigner });
  const validator = createTokenValidator({
    keys,
    issuer,
    clock,
    personActive: (org, person) => registry.get(org)?.state.persons.get(person)?.active === true,
    revoked: (org, jti) => registry.get(org)?.state.revoked_tokens.has(jti) === true,
    personType: (org, person) => registry.get(org)?.state.persons.get(person)?.person_type,
  });
  return { keys, signer: tokenSigner, issuer: tokenIssuer, validator };
}

interface Webhooks {
  keys: Awaited<ReturnType<typeof loadWebhookKeys>>;
  hooks: ReturnType<typeof createSyncHooks>;
  outbox: Outbox;
  /** closed on stop */
  callers: Array<ReturnType<typeof createWebhookCaller>>;
  /** the pool of asynchronous deliveries (events, back-channel logouts), apart from the sign-in's hooks */
  deliveries: ReturnType<typeof createWebhookCaller>;
}

async function buildWebhooks({ config, options, clock, metrics, warn, issuer, guard }: Base, storage: Storage, { registry, commits }: Organizations, eventLog: EventLog): Promise<Webhooks> {
  const webhookKeys = await loadWebhookKeys(storage.secrets, clock.nowMs());
  const caller = createWebhookCaller({ guard });
  const signer = createDeliverySigner(webhookKeys, issuer, () => clock.nowMs());
  const webhookMetrics = createWebhookMetrics(metrics);
  const hooks = createSyncHooks({
    caller,
    signer,
    metrics: webhookMetrics,
  });
  // Its own connection pool: a slow event receiver never holds up a sign-in's hooks.
  const outboxCaller = createWebhookCaller({ guard });
  const outbox = createOutbox({
    webhooks: (org) => registry.get(org)?.state.webhooks,
    organizations: () => [...registry.all()].map((a) => a.id),
    log: eventLog,
    store: createOutboxStore(storage.store),
    caller: outboxCaller,
    signer,
    retry: config.webhookRetry,
    random: options.random ?? Math.random,
    clock,
    calls: webhookMetrics,
    metrics,
    warn,
  });
  commits.subscribe((commit) => outbox.committed(commit), 'waking the event webhooks');
  return { keys: webhookKeys, hooks, outbox, callers: [caller, outboxCaller], deliveries: outboxCaller };
}

interface Wings {
  nativeHttp: boolean;
  storage: Storage;
  orgs: Organizations;
  deletions: OrgDeletions;
  events: Service['events'];
  regions: Regions;
  tokens: Tokens;
  webhooks: Webhooks;
  pipeline: IssuePipeline;
  cloud: CloudWing;
  checkpoints: Checkpoints;
  console: { bundle(): Promise<ConsoleBundle>; firstAdministrator: FirstAdministrator } | undefined;
}

type CloudWing = ReturnType<typeof buildCloud>;

/** Cloud connections, the changes made through them, snapshots and billing counts. */
function buildCloud({ config, clock, ids, metrics, warn, guard }: Base, registry: Registry) {
  const sealer = createCredentialSealer(config.secretsKey, config.secretsKeyPrevious);
  const queue = createSerialQueue();
  const phases = metrics.histogram('cloud_change_phase_seconds', 'changes made at a cloud provider: waiting in the organization\'s cloud queue, the provider\'s calls, the commit of the event');
  const changes = { queue, observe: (phase: string, seconds: number) => phases.observe(seconds, { phase }) };
  const outbound = createOutbound(guard);
  const clients = createClients(sealer, outbound);
  const orgs = () => registry.all();
  return {
    connections: createCloudConnections({ sealer, queue, clients, outbound, uuid: () => ids.uuid(), allowInsecure: config.webhookAllowInsecure, regions: config.regions }),
    aws: createAwsChanges({ clients, ...changes }),
    ad: createAdChanges({ clients, ...changes }),
    gcp: createGcpUseCases({ clients, ...changes }),
    inventory: createInventory({ clients, clock, orgs, warn }),
    billing: createBilling({ clock, orgs, warn }),
    clients,
  };
}

function buildSignIn({ config, clock, ids }: Base, pipeline: IssuePipeline, passwords: ReturnType<typeof createPasswordHasher>, challenges: Sealer) {
  const { windowMs, perHandle, perIp } = config.authThrottle;
  return createSignIn({
    clock,
    passwords,
    challenges,
    throttle: { handle: createLimiter({ windowMs, limit: perHandle }), ip: createLimiter({ windowMs, limit: perIp }) },
    pipeline,
    region: config.regions[0] as string,
    newPersonId: () => ids.uuid(),
  });
}

function buildSso({ config, clock, ids, issuer, options, warn, guard }: Base, cursorSecret: Buffer, store: Store, pipeline: IssuePipeline, registry: Registry, commits: CommitBus, sealer: SecretSealer, challenges: Sealer) {
  const providerTokens = createProviderTokens({
    clock,
    records: createKeyedRecords(store.ssoTokens, PROVIDER_TOKENS_FORMAT),
    sealer,
    client: (org, clientId) => signIn.providerClient(org, clientId),
  });
  // A deleted person's provider tokens go with them.
  commits.subscribe((commit) => {
    for (const entry of commit.entries) {
      for (const change of entry.changes) {
        if (change.t !== 'PersonDeleted') continue;
        providerTokens.forgetPerson(commit.org, change.person_id).catch((error: unknown) => warn(`the SSO provider tokens of person ${change.person_id} were not removed: ${(error as Error).message}`));
      }
    }
  }, 'the SSO provider tokens');
  // Sign-ins in flight are kept beside the WAL: a restart between a start and its callback loses none.
  const signIn = createSsoSignIn({
    clock,
    endpoints: createProviderEndpoints({ clock, allowInsecure: config.webhookAllowInsecure, fetch: guardedFetch(guard), ...(options.ssoReroute && { reroute: options.ssoReroute }) }),
    sealer,
    cookies: createStateCookies(createStateSealer(cursorSecret), config.issuer.startsWith('https:')),
    pending: createPendingFlows({ clock, records: createKeyedRecords(store.ssoPending, PENDING_FLOW_FORMAT), sealer, limits: config.ssoPending }),
    providerTokens,
    pipeline,
    challenges,
    org: (id) => registry.get(id),
    callbackUrl: () => `${issuer()}/authenticate/oidc/callback`,
    region: config.regions[0] as string,
    newPersonId: () => ids.uuid(),
    newSessionId: () => ids.uuid(),
  });
  return { signIn, providerTokens };
}

/** private_key_jwt: assertions verified against registered keys (jwks_uri fetched through the address guard), each jti once. */
function clientAssertions(clock: Clock, issuer: () => string, guard: AddressGuard): AssertionDeps {
  return {
    verifier: createClientAssertionVerifier({ clock, fetch: guardedFetch(guard), startedS: Math.floor(clock.nowMs() / 1000) }),
    replays: createReplayGuard(clock),
    issuer,
  };
}

/** The authorization server's machine side: the client index, client authentication, the token endpoint. */
function buildOAuth({ config, clock, ids, issuer, guard }: Base, { registry, commits }: Organizations, tokens: Tokens, pipeline: IssuePipeline, cursorSecret: Buffer) {
  const clients = createClientIndex(registry, commits);
  // Access tokens share the identity tokens' keys and signer; only their typ header (and lifetime) differ.
  const atIssuer = createTokenIssuer({ keys: tokens.keys, issuer, ttl: ACCESS_TOKEN_DURATION.default, clock, signer: tokens.signer, typ: 'at+jwt' });
  const accessTokens = createAccessTokenIssuer(atIssuer);
  const verifier = createAccessTokenVerifier({ keys: tokens.keys, issuer, clock });
  const users = createUserTokens({ pipeline, signAccessToken: (claims, ttl) => atIssuer.issue(claims, ttl), issuer, newGrantId: () => ids.uuid() });
  const active = createAccessTokens(verifier, clients);
  const ownTokens = { accessToken: (t: string) => active.active(t), identityToken: (t: string) => tokens.validator.identify(t) };
  return {
    clients,
    clientAuth: oauthClientAuthenticator(createClientAuthenticator(clients, clientAssertions(clock, issuer, guard))),
    tokens: createTokenEndpoint({ accessTokens, issuer, users, ownTokens, devicePolls: createPollPacer(clock), nowMs: () => clock.nowMs() }),
    users,
    accessTokens: active,
    dpop: createDpop({
      verifier: createDpopProofVerifier(clock),
      replays: createReplayGuard(clock),
      // the nonce key: the service's secret specialised, so that it signs nothing else
      nonces: config.dpopNonce ? createDpopNonces(createHmac('sha256', cursorSecret).update('dpop nonces').digest(), clock) : undefined,
      issuer,
    }),
  };
}

/** The authorization server's person side: the authorization endpoint with its hosted sign-in page and pushed requests, RP-initiated logout, userinfo, and the device authorization grant's endpoint and user code pages. */
function buildOAuthUser({ clock, ids, issuer }: Base, storage: Storage, registry: Registry, oauth: ReturnType<typeof buildOAuth>, signIn: ReturnType<typeof buildSignIn>, secondFactor: TotpService, passkeys: PasskeyService, tokens: Tokens): Route[] {
  const sealer = createSessionSealer(storage.cursorSecret);
  const newSessionId = () => ids.uuid();
  const authorize = createAuthorize({ clients: oauth.clients, sealer, clock, signIn, secondFactor, passkeys, issuer, newSessionId, pushed: createPushedRequests(clock) });
  const endSession = createEndSession({ clients: oauth.clients, org: (id) => registry.get(id), hints: createIdTokenHintVerifier({ keys: tokens.keys, issuer }), sealer, clock, issuer });
  const userinfo = createUserInfo({ tokens: oauth.accessTokens, issuer, dpop: oauth.dpop });
  const device = createDeviceFlow({ sealer, clock, signIn, issuer, newSessionId, orgs: () => registry.all() });
  return [...oauthAuthorizeRoutes(authorize), ...oauthParRoutes({ clientAuth: oauth.clientAuth, authorize }), ...oauthLogoutRoutes(endSession), ...oauthUserInfoRoutes(userinfo), ...oauthDeviceRoutes(device, oauth.clientAuth)];
}

/** Back-channel logout: logout tokens POSTed to the clients of each session that ends, through the webhooks' caller. */
function buildBackchannelLogout({ config, options, clock, warn, issuer }: Base, { registry, commits }: Organizations, tokens: Tokens, webhooks: Webhooks) {
  const logoutTokens = createTokenIssuer({ keys: tokens.keys, issuer, ttl: LOGOUT_TOKEN_TTL_S, clock, signer: tokens.signer, typ: 'logout+jwt' });
  const logouts = createBackchannelLogout({
    client: (org, clientId) => registry.get(org)?.state.oauth_clients.get(clientId),
    owed: () => [...registry.all()].map((actor) => ({ org: actor.id, notices: actor.state.backchannel_logouts.values() })),
    done: async (org, sid) => {
      await registry.get(org)?.execute({ kind: 'CompleteBackchannelLogouts', sids: [sid] });
    },
    sign: (claims, ttl) => logoutTokens.issue(claims, ttl),
    caller: webhooks.deliveries,
    retry: config.webhookRetry,
    random: options.random ?? Math.random,
    clock,
    warn,
  });
  commits.subscribe((commit) => logouts.committed(commit), 'back-channel logouts');
  return logouts;
}

function buildFront(base: Base, { nativeHttp, storage, orgs, deletions, events, regions, tokens, webhooks, pipeline, cloud, checkpoints, console: consoleWing }: Wings): Front {
  const { config, options, metrics, issuer } = base;
  const { registry } = orgs;
  const consistencyTokens = createConsistencyTokens(storage.cursorSecret);
  // This process serves the origin region: it has applied every write it answered.
  const reads = originReads(regions.local, (org) => registry.get(org)?.durableOffset ?? 0);
  const front = new Front(registry, metrics, {
    consistency: { tokens: consistencyTokens, reads },
    bodyLimit: config.bodyLimit,
    corsOrigins: config.corsOrigins,
    // an organization's allowed origin domains (POST /organizations/config/domains) are its own CORS origins
    corsOrgOrigins: (orgId) => registry.get(orgId)?.state.allowed_domains ?? [],
    corsHostAllows: domainAllows,
    corsAnyOrgAllows: (host) => {
      for (const actor of registry.all()) if (domainAllows(actor.state.allowed_domains, host)) return true;
      return false;
    },
    trustedProxies: config.trustedProxies,
    operatorKey: options.operatorKey,
    checkOperatorKey: sameSecret(options.operatorKey),
    log: (m) => console.error(m),
  });
  const deps: HandlerDeps = { registry, pager: createPager(storage.cursorSecret), consistency: regions.consistency };
  const passwords = createPasswordHasher();
  // Second-factor challenges are signed with a service secret: a first factor's answer, checked by the second's.
  const challenges = createSealer(storage.cursorSecret, 'sign-in challenge');
  const signIn = buildSignIn(base, pipeline, passwords, challenges);
  const personAuth = personAuthenticator(tokens.validator);
  const totp = createTotp({
    clock: base.clock,
    pipeline,
    challenges,
    secretsKey: config.secretsKey,
    previousSecretsKey: config.secretsKeyPrevious,
    throttle: createLimiter({ windowMs: config.authThrottle.windowMs, limit: TOTP_FAILURES_PER_WINDOW }),
    hashKey,
  });
  const passkeys = createPasskeys({ clock: base.clock, pipeline, challenges, ceremonies: createSealer(storage.cursorSecret, 'webauthn ceremony'), hashKey });
  const anonymous = createAnonymousPersons({
    pipeline,
    validator: tokens.validator,
    clock: base.clock,
    newId: () => base.ids.uuid(),
    regions: config.regions,
    ttlS: config.browser.anonymousTtl,
    rate: { windowMs: config.browser.rateWindowMs, perIp: config.browser.anonymousPerIp },
  });
  const sealer = createSecretSealer(config.secretsKey, config.secretsKeyPrevious);
  const sso = buildSso(base, storage.cursorSecret, storage.store, pipeline, registry, orgs.commits, sealer, challenges);
  const oauth = buildOAuth(base, orgs, tokens, pipeline, storage.cursorSecret);
  const mail = config.smtpUrl === undefined ? undefined : createSmtpSender(config.smtpUrl, config.smtpFrom);
  const oneTimeCodes = createOneTimeCodes({
    clock: base.clock,
    pipeline,
    challenges,
    mail,
    sms: config.smsUrl === undefined ? undefined : createSmsSender(config.smsUrl, webhooks.deliveries, webhooks.keys, issuer, () => base.clock.nowMs()),
    throttle: {
      handle: createLimiter({ windowMs: config.authThrottle.windowMs, limit: ONE_TIME_PER_HANDLE }),
      ip: createLimiter({ windowMs: config.authThrottle.windowMs, limit: ONE_TIME_PER_ADDRESS }),
    },
    tickets: createSealer(storage.cursorSecret, 'one-time code tickets'),
    ttlSecs: config.oneTimeCodeTtl,
    hashKey,
    issuer,
  });
  const resets = createPasswordResets({
    registry,
    clock: base.clock,
    passwords,
    mail,
    ttl: config.passwordResetTtl,
    secret: storage.cursorSecret,
    issuer,
  });
  const routes: Route[] = [];
  routes.push(
    ...systemRoutes({ metrics, nativeHttp, issuer, version: VERSION, regions: () => regions.views(), ...(orgs.quorum ? { quorum: orgs.quorum } : {}) }, () => routes),
    ...organizationRoutes(deps, deletions),
    ...orgConfigRoutes(deps),
    ...domainRoutes(deps),
    ...tokenTemplateRoutes(deps),
    ...bulkImportRoutes(deps),
    ...personRoutes(deps),
    ...quotaRoutes(deps),
    ...directIdRoutes(deps, { directId: createDirectIdSignIn({ clock: base.clock, pipeline, hashKey, challenges }) }),
    ...handleRoutes(deps),
    ...groupRoutes(deps),
    ...attributeRoutes(deps),
    ...consentRoutes(deps),
    ...regionRoutes(regions),
    ...eventRoutes(deps),
    ...eventChainRoutes(checkpoints),
    ...consistencyRoutes({
      tokens: consistencyTokens,
      waiter: regions.consistency,
      committed: (org) => registry.get(org)?.durableOffset ?? 0,
      regions: (org, offset) => [
        { name: regions.local, applied: offset <= (registry.get(org)?.durableOffset ?? 0) },
        ...regions.views().slice(1).map((v) => ({ name: v.name, applied: (regions.link(v.name)?.acked(org) ?? 0) >= offset })),
      ],
    }),
    ...gateEventRoutes(deps),
    ...webhookRoutes(deps, { allowInsecure: config.webhookAllowInsecure, verificationJwks: () => webhooks.keys.jwks() }),
    ...deadLetterRoutes(deps, webhooks.outbox),
    ...passwordRoutes(deps, { passwords, signIn, anonymous }),
    ...credentialRoutes(deps, { passwords, resets }),
    ...passwordResetRoutes(resets, regions.consistency),
    ...templateRoutes(deps),
    ...anonymousRoutes(anonymous),
    ...endUserRoutes(deps, personAuth),
    ...totpRoutes(totp, personAuth),
    ...oneTimeCodeRoutes(oneTimeCodes),
    ...webauthnRoutes(passkeys, personAuth),
    ...mitmRoutes(deps, {
      detector: createMitmDetector({ registry, commits: orgs.commits, clock: base.clock, rate: { windowMs: config.browser.mitmRateWindowMs, perKey: config.browser.mitmPerKey, perToken: config.browser.mitmPerToken }, metrics: base.metrics, warn: base.warn }),
      issuer,
      nowMs: () => base.clock.nowMs(),
    }),
    ...tokenRoutes({ keys: tokens.keys, pipeline, validator: tokens.validator, issuer, oauth: { grantTypes: oauth.tokens.grantTypes }, handlers: deps }),
    ...rbacRoutes(deps),
    ...ssoCredentialRoutes(deps, { allowInsecure: config.webhookAllowInsecure, sealer }),
    ...ssoSignInRoutes(sso.signIn, anonymous),
    ...ssoTokenRoutes(deps, { tokens: sso.providerTokens, validator: tokens.validator }),
    ...oauthClientRoutes(deps, { allowInsecure: config.webhookAllowInsecure }),
    ...oauthRegistrationRoutes({
      handlers: deps,
      initialAccessToken: initialAccessTokenAuthenticator(base.clock),
      registrationAccessToken: registrationAccessTokenAuthenticator(oauth.clients),
      issuer,
      allowInsecure: config.webhookAllowInsecure,
      clock: base.clock,
    }),
    ...oauthTokenRoutes({ handlers: deps, ...oauth }),
    ...buildOAuthUser(base, storage, registry, oauth, signIn, totp, passkeys, tokens),
    ...sessionRoutes(deps, personAuthenticator(tokens.validator), base.clock),
    ...sdkRoutes({ handlers: deps, clock: base.clock, validator: tokens.validator, rate: { windowMs: config.browser.rateWindowMs, perIp: config.browser.sdkPerIp, perOrg: config.browser.sdkPerOrg } }),
    ...cloudConnectionRoutes(deps, cloud),
    ...cloudAwsRoutes(deps, cloud.aws),
    ...cloudAdRoutes(deps, cloud.ad),
    ...cloudGcpRoutes(deps, cloud.gcp),
    ...cloudBillingRoutes(base.clock),
  );
  // With the console off, the management routes keep their API-key authenticator untouched.
  const consoleTokens = consoleWing && createConsoleTokens({ registry, active: oauth.accessTokens.active, issuer });
  if (consoleWing && consoleTokens) {
    routes.push(...consoleRoutes({ registry, bundle: consoleWing.bundle, issuer, passwords, firstAdministrator: consoleWing.firstAdministrator }));
    acceptConsoleTokens(routes, consoleTokens);
  }
  front.websocket(
    '/events',
    eventSocketBehavior({
      registry,
      stream: events.stream,
      log: events.log,
      consistency: { tokens: consistencyTokens, reads },
      publish: (topic, frame, binary) => void front.app.publish(topic, frame, binary, false),
      ...(consoleTokens && { accessToken: (org: string, token: string) => consoleTokens.check(org, token, 'console.read') }),
    }),
  );
  front.mount(routes);
  return front;
}
