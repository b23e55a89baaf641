// High availability inside a region: several service processes share the region's JetStream cluster, one writer
// per organization. Every process follows the region's commit stream into its own LMDB log and its actors (a hot
// standby); the process holding an organization's lease writes it, storing each batch in the R3 stream (published
// with the subject's expected last sequence) before its local append, so an acknowledged write is in the region's
// quorum and a deposed writer's publish is refused by JetStream itself. When a lease expires another process
// takes it, applies what the stream holds past its own log, fences the subject with a message of its own, and
// writes. A process that does not hold an organization's lease answers its writes with a 307 to the holder.
import { randomBytes } from 'node:crypto';
import { DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { ServiceError } from '../../errors.js';
import type { Quorum } from '../../org/actor.js';
import type { Registry } from '../../org/registry.js';
import type { EncodedWrite, Wal } from '../../wal/log.js';
import { nextBySubject, retry } from '../jetstream/connection.js';
import { commitStreamName, commitSubject, decodeCommit, encodeCommit, ensureRegionStreams, type CommitMessage } from './commit-stream.js';
import { isWrongSequence, leaseBucket, LeaseTaken, regionValue, type Lease, type LeaseBucket } from './leases.js';
import { standbySnapshots } from './standby-snapshot.js';

export interface RegionQuorumOptions {
  nc: NatsConnection;
  region: string;
  /** this process's name in the region (SERVICE_PROCESS_NAME), the lease holder's name */
  process: string;
  /** where clients reach this process (SERVICE_PUBLIC_URL): the Location of another process's 307; read at each use */
  publicUrl(): string;
  /** copies of the commit stream and the lease bucket (3 on a cluster of three) */
  replicas: number;
  retentionMs: number;
  leaseTtlMs: number;
  leaseRenewMs: number;
  wal: Wal;
  warn(message: string): void;
  log(message: string): void;
}

/** What /health says of this process in the region. */
export interface QuorumView {
  role: 'writer' | 'standby';
  process: string;
  /** organizations this process writes */
  leases: number;
  /** the epoch of each lease held */
  epochs: Record<string, number>;
  /** messages of the region's commit stream not yet applied here */
  lag_entries: number;
  /** organizations caught up from a writer's snapshot since this process started (it was behind the stream's retention) */
  snapshots_installed: number;
}

export interface OrgLeaseView {
  org: string;
  holder: string | null;
  url: string | null;
  epoch: number | null;
  /** this process holds it and has fenced the stream: it writes the organization */
  writing: boolean;
  /** the organization's last entry applied here */
  offset: number;
}

interface Held {
  revision: number;
  epoch: number;
  /** monotonic ms when the last successful renewal (or the take) was sent */
  renewedAt: number;
  state: 'syncing' | 'writer';
  /** the subject's last sequence as this writer knows it: the expectation of its next publish */
  lastSeq: number;
}

interface Seen extends Lease {
  /** monotonic ms when this revision was first seen */
  seenAt: number;
}

/** The region's shared secrets in the lease bucket: a key no organization's can be (it has a dot, a subject token boundary). */
const SECRETS_KEY = '_region.secrets';
const encodeSecrets = (values: Record<string, Uint8Array>) => JSON.stringify(Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString('base64')])));
const decodeSecrets = (text: string): Record<string, Uint8Array> => Object.fromEntries(Object.entries(JSON.parse(text) as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64')]));

/** The stream position of the organization's last message in the local log, stored with its entries. */
const seqKey = (org: string) => `commit_seq:${org}`;

const now = () => performance.now();

/** How long the follower's consumer may deliver nothing while the stream holds more before it is created again. */
const FOLLOW_STALL_MS = 3000;

export interface RegionQuorum extends Quorum {
  /** Follows the stream until this process has applied everything it held at the start. */
  start(registry: Registry): Promise<void>;
  /**
   * On an empty region: takes the root organization's lease and creates it through the stream (`create`), or
   * waits until the process that did so has shipped it.
   */
  bootstrap<T>(rootOrgId: string | undefined, create: () => Promise<T>): Promise<T | undefined>;
  /** The region's shared secrets (stored meta values by name), or undefined before any process shared them. */
  sharedSecrets(): Promise<Record<string, Uint8Array> | undefined>;
  /**
   * Shares this process's secrets with the region if none are shared yet; resolves to the region's (this
   * process's own, or those another process shared first).
   */
  shareSecrets(values: Record<string, Uint8Array>): Promise<Record<string, Uint8Array>>;
  view(): QuorumView;
  lease(org: string): OrgLeaseView;
  stop(): Promise<void>;
}

export async function startRegionQuorum(options: RegionQuorumOptions): Promise<RegionQuorum> {
  const { nc, region, warn } = options;
  let stopped = false;
  const jsm: JetStreamManager = await retry('jetstream manager', () => jetstreamManager(nc), warn, () => stopped);
  const js: JetStreamClient = jetstream(nc);
  await retry(`streams of region ${region}`, () => ensureRegionStreams(jsm, region, options.replicas, options.retentionMs), warn, () => stopped);
  const bucket: LeaseBucket = leaseBucket(js, jsm, region, Math.min(options.leaseTtlMs, 5000));
  const snapshots = standbySnapshots({ nc, jsm, region, process: options.process, wal: options.wal, bucket, registry: () => registry, position: (org, seq) => [seqKey(org), seq], warn });
  const secrets = regionValue(js, jsm, region, SECRETS_KEY, Math.min(options.leaseTtlMs, 5000));
  const held = new Map<string, Held>();
  const seen = new Map<string, Seen>();
  let registry: Registry | undefined;
  let applied = 0;
  let streamLast = 0;
  let ticker: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | undefined;
  let consumer: { close(): Promise<unknown> } | undefined;
  let following: Promise<void> | undefined;

  const head = (org: string) => registry?.get(org)?.durableOffset ?? 0;
  const unavailable = (org: string, why: string) => new ServiceError('ERR_UNAVAILABLE', `organization ${org} ${why}; retry shortly`, { headers: { 'Retry-After': '1' } });
  const writing = (h: Held | undefined): h is Held => h !== undefined && h.state === 'writer' && now() - h.renewedAt < options.leaseTtlMs;

  function stepDown(org: string, why: string): void {
    if (!held.delete(org)) return;
    warn(`${options.process} stopped writing ${org}: ${why}`);
  }

  /**
   * The organization's messages from stream sequence `from` through `through`, read from the stream by subject: what
   * a process applies itself when its local log is behind and the follower did not bring them (a message stored while
   * its writer's PubAck was lost, one the follower skipped). Up to `limit` of them, in order.
   */
  async function readSubject(org: string, from: number, through: number, limit = 4096): Promise<Array<{ seq: number; m: CommitMessage }>> {
    const out: Array<{ seq: number; m: CommitMessage }> = [];
    for (let seq = from; seq <= through && out.length < limit; ) {
      const msg = await nextBySubject(jsm, commitStreamName(region), commitSubject(region, org), seq);
      if (!msg || msg.seq > through) break;
      out.push({ seq: msg.seq, m: decodeCommit(msg.data) });
      seq = msg.seq + 1;
    }
    return out;
  }

  /** organizations whose next entry the stream no longer holds, with the local offset at which that was found */
  const beyondStream = new Map<string, number>();
  /** Where an organization's messages past the local log start in the stream: after the last one applied here. */
  const positionOf = (org: string) => options.wal.getMeta<number>(seqKey(org)) ?? 0;

  /**
   * Applies messages of the stream to the local log and the actors, all in one transaction (one flush however many
   * arrived meanwhile: a standby applying a message at a time could not catch up with a writer that group-commits),
   * skipping what the local log holds already and what this process wrote itself. An organization whose entries in
   * the batch start past its local log (a message the follower never delivered here) has the messages between read
   * from the stream first, so nothing is skipped for good. Runs under `serially`, never beside a reload.
   */
  async function apply(delivered: ReadonlyArray<{ seq: number; m: CommitMessage }>): Promise<void> {
    // This process's own batches: its actor appends them right after their PubAck. Wait for that rather than apply
    // them twice (the actor's state holds them already; following them again doubled them in memory). While the
    // actor's batch is in flight, whatever the lease does meanwhile (with no actor yet, the organization's creation
    // through the stream, while this process holds the lease); a batch whose publish failed (the actor is fenced,
    // and rebuilt from the log next) is applied here instead.
    const ownInFlight = (org: string) => registry?.get(org)?.committing ?? writing(held.get(org));
    for (const { m } of delivered) {
      for (const w of m.writes) while (w.offset > head(w.org) && ownInFlight(w.org) && !stopped) await new Promise((r) => setTimeout(r, 2));
    }
    let batch = delivered;
    const firstSeq = new Map<string, { seq: number; offset: number }>();
    for (const { seq, m } of delivered) for (const w of m.writes) if (!firstSeq.has(w.org)) firstSeq.set(w.org, { seq, offset: w.offset });
    const missing: Array<{ seq: number; m: CommitMessage }> = [];
    for (const [org, first] of firstSeq) {
      const at = head(org);
      if (first.offset <= at + 1 || at === 0 || beyondStream.get(org) === at) continue;
      const read = await readSubject(org, positionOf(org) + 1, first.seq - 1);
      // The stream no longer holds the next entry (past its retention): not read again until the log moves.
      if (!read.some(({ m }) => m.writes.some((w) => w.org === org && w.offset === at + 1))) beyondStream.set(org, at);
      missing.push(...read);
    }
    if (missing.length > 0) {
      const bySeq = new Map([...missing, ...delivered].map((d) => [d.seq, d]));
      batch = [...bySeq.values()].sort((x, y) => x.seq - y.seq);
    }
    // Behind what the stream retains: the writer's snapshot first.
    await snapshots.fill(batch.flatMap(({ m }) => m.writes), head);
    const byOrg = new Map<string, EncodedWrite[]>();
    const positions = new Map<string, number>();
    const newOrgs: string[] = [];
    for (const { seq, m } of batch) {
      for (const w of m.writes) {
        const at = byOrg.get(w.org)?.at(-1)?.offset ?? head(w.org);
        if (w.offset <= at) continue;
        if (w.offset !== at + 1) {
          warn(`commit stream of ${region}: ${w.org} entry ${w.offset} follows ${at} here; the entries between are missing`);
          continue;
        }
        const list = byOrg.get(w.org) ?? [];
        list.push(w);
        byOrg.set(w.org, list);
        positions.set(w.org, seq);
        if (m.newOrgs.includes(w.org) && !registry?.get(w.org)) newOrgs.push(w.org);
      }
    }
    const writes = [...byOrg.values()].flat();
    if (writes.length === 0) return;
    await options.wal.append(writes, newOrgs, [...positions].map(([org, seq]): [string, unknown] => [seqKey(org), seq]));
    registry?.follow(writes);
  }

  /** Where the follower starts: past the oldest position any local organization was stored at. */
  function startSeq(): number {
    let min = Infinity;
    for (const actor of registry?.all() ?? []) min = Math.min(min, options.wal.getMeta<number>(seqKey(actor.id)) ?? 0);
    return min === Infinity ? 1 : min + 1;
  }

  /** One apply or rebuild at a time: the follower's batches, a takeover's catch-up and the reloads never interleave. */
  let exclusive: Promise<unknown> = Promise.resolve();
  function serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = exclusive.then(fn, fn);
    exclusive = run.catch(() => {});
    return run;
  }

  /** Messages delivered and not yet applied; one drain at a time takes all of them. */
  let inbox: Array<{ seq: number; m: CommitMessage }> = [];
  /** organizations whose actor ran ahead of the logs (a refused batch): rebuilt between two applied batches */
  const reloads = new Set<string>();
  let draining: Promise<void> | undefined;
  function drain(): Promise<void> {
    draining ??= (async () => {
      while ((inbox.length > 0 || reloads.size > 0) && !stopped) {
        // In the same loop as the applies: a rebuild reads the local log with every batch applied so far, and the
        // next batches apply to the rebuilt actor, never to the one it replaced.
        for (const org of [...reloads]) {
          reloads.delete(org);
          await serially(async () => registry?.reload(org)).catch((error: unknown) => warn(`reloading ${org} after a refused write failed: ${String(error)}`));
        }
        if (inbox.length === 0) continue;
        const batch = inbox;
        inbox = [];
        try {
          await serially(() => apply(batch));
          applied = Math.max(applied, batch.at(-1)?.seq ?? applied);
        } catch (error) {
          // Never past a message not applied: the batch is tried again, ahead of what arrived meanwhile.
          warn(`commit stream of ${region}: messages ${batch[0]?.seq}-${batch.at(-1)?.seq} not applied (${(error as Error).message}); trying again`);
          inbox = [...batch, ...inbox];
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      // Cleared here, in the same turn as the loop's last check: a message pushed after it starts a new drain.
      draining = undefined;
    })();
    return draining;
  }

  /** The last stream sequence delivered to the inbox, and when (monotonic ms) the follower last delivered or started. */
  let delivered = 0;
  let deliveredAt = now();
  function deliver(seq: number, data: Uint8Array): void {
    delivered = Math.max(delivered, seq);
    deliveredAt = now();
    try {
      inbox.push({ seq, m: decodeCommit(data) });
    } catch (error) {
      warn(`commit stream of ${region}: message ${seq} is not a commit (${(error as Error).message})`);
    }
    void drain();
  }

  /**
   * The follower's consumer is an ordered one: a single copy on one nats-server. When that server dies the client
   * waits for it to come back and delivers nothing meanwhile, while the stream (two of three) goes on, and a consumer
   * created again may be placed on the dead server until the cluster marks it offline. So when the consumer has
   * delivered nothing for FOLLOW_STALL_MS while the stream holds more, the messages past the last delivered are read
   * from the stream's leader itself (STREAM.MSG.GET), and the consumer is created again from the last one applied.
   */
  let readingAhead = false;
  function checkFollower(): void {
    if (stopped || !consumer || draining || readingAhead || streamLast <= delivered || now() - deliveredAt < FOLLOW_STALL_MS) return;
    warn(`the commit stream of ${region} delivered nothing here for ${Math.round(now() - deliveredAt)} ms while it holds ${streamLast - delivered} more messages (its consumer's server is gone?); reading them from the stream, following again`);
    deliveredAt = now();
    void consumer.close().catch(() => {});
    readingAhead = true;
    void (async () => {
      const through = streamLast;
      for (let n = 0; delivered < through && n < 4096 && !stopped; n++) {
        const msg = await nextBySubject(jsm, commitStreamName(region), `commit.${region}.>`, delivered + 1);
        if (!msg) break;
        deliver(msg.seq, msg.data);
      }
    })()
      .catch((error: unknown) => warn(`reading the commit stream of ${region} failed (${(error as Error).message})`))
      .finally(() => (readingAhead = false));
  }

  async function follow(): Promise<void> {
    while (!stopped) {
      try {
        // Named after the process, so `nats consumer ls` shows whose follower it is; the rest random, as the consumer
        // it replaces may linger under its name (on a server that is gone, or a restarted process's).
        const namePrefix = `follow_${options.process.replace(/[^A-Za-z0-9_-]/g, '_')}_${randomBytes(4).toString('hex')}`;
        const c = await js.consumers.get(commitStreamName(region), { name_prefix: namePrefix, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Math.max(startSeq(), applied + 1) });
        const messages = await c.consume({ max_messages: 1024, expires: 2000 });
        consumer = messages;
        deliveredAt = now();
        for await (const msg of messages) {
          if (stopped) break;
          deliver(msg.seq, msg.data);
          // Bounded: past a few thousand waiting, delivery waits for the flush.
          if (inbox.length >= 4096) await draining;
        }
      } catch (error) {
        if (!stopped) warn(`following the commit stream of ${region} failed (${(error as Error).message}); following again`);
        await new Promise((r) => setTimeout(r, 500));
      }
      await draining;
    }
  }

  async function lastOfSubject(org: string): Promise<{ seq: number; head: number }> {
    let m;
    try {
      m = await jsm.streams.getMessage(commitStreamName(region), { last_by_subj: commitSubject(region, org) });
    } catch (error) {
      if (/no message found|not found/i.test((error as Error).message)) return { seq: 0, head: 0 };
      throw error;
    }
    return m ? { seq: m.seq, head: decodeCommit(m.data).head } : { seq: 0, head: 0 };
  }

  /** After taking a lease: the stream's last message of the organization applied here, then a fence of ours. */
  async function takeOver(org: string, h: Held): Promise<void> {
    for (let attempt = 0; attempt < 5 && held.get(org) === h; attempt++) {
      const last = await lastOfSubject(org);
      // Read from the stream itself, not left to the follower: a message stored while its writer's PubAck was lost may
      // be one the follower has not brought (or never will), and waiting on it let two processes pass the lease back
      // and forth without either catching up.
      for (let before = -1; head(org) < last.head && head(org) > before; ) {
        before = head(org);
        await serially(async () => apply(await readSubject(org, positionOf(org) + 1, last.seq)));
      }
      if (head(org) < last.head) throw new Error(`the local log of ${org} is at ${head(org)}, the stream at ${last.head}`);
      try {
        const fence: CommitMessage = { writer: options.process, epoch: h.epoch, head: head(org), writes: [], newOrgs: [] };
        const ack = await js.publish(commitSubject(region, org), encodeCommit(fence), { expect: { lastSubjectSequence: last.seq }, timeout: Math.min(options.leaseTtlMs, 5000) });
        if (held.get(org) !== h) return;
        h.lastSeq = ack.seq;
        h.state = 'writer';
        options.log(`${options.process} writes ${org} (epoch ${h.epoch}, from entry ${head(org) + 1}; the stream's last message of it was ${last.seq}, through entry ${last.head})`);
        return;
      } catch (error) {
        if (!isWrongSequence(error)) throw error;
        // a write of the previous holder landed after we read: apply it too, and fence again
      }
    }
  }

  async function take(org: string, revision: number, epoch: number): Promise<void> {
    const sentAt = now();
    const value = { holder: options.process, url: options.publicUrl(), epoch };
    const newRevision = await bucket.write(org, value, revision);
    const h: Held = { revision: newRevision, epoch, renewedAt: sentAt, state: 'syncing', lastSeq: 0 };
    held.set(org, h);
    seen.set(org, { ...value, revision: newRevision, seenAt: sentAt });
    try {
      await takeOver(org, h);
    } catch (error) {
      warn(`${options.process} took the lease of ${org} but could not catch up (${(error as Error).message}); trying again`);
    }
  }

  async function renew(org: string, h: Held): Promise<void> {
    const sentAt = now();
    try {
      h.revision = await bucket.write(org, { holder: options.process, url: options.publicUrl(), epoch: h.epoch }, h.revision);
      h.renewedAt = sentAt;
      if (h.state === 'syncing') await takeOver(org, h);
    } catch (error) {
      if (error instanceof LeaseTaken) return stepDown(org, 'another process took its lease');
      if (now() - h.renewedAt >= options.leaseTtlMs) stepDown(org, `its lease could not be renewed for ${options.leaseTtlMs} ms (${(error as Error).message})`);
    }
  }

  async function watch(org: string): Promise<void> {
    const lease = await bucket.read(org);
    if (!lease) return take(org, 0, 1);
    // Released by a clean stop: free at once, no TTL to wait out.
    if (lease.holder === '') return take(org, lease.revision, lease.epoch + 1);
    const before = seen.get(org);
    if (!before || before.revision !== lease.revision) {
      seen.set(org, { ...lease, seenAt: now() });
      return;
    }
    if (now() - before.seenAt >= options.leaseTtlMs) await take(org, lease.revision, lease.epoch + 1);
  }

  async function tick(): Promise<void> {
    const orgs = new Set<string>([...(registry?.all() ?? [])].map((a) => a.id));
    for (const org of held.keys()) orgs.add(org);
    await Promise.all(
      [...orgs].map(async (org) => {
        try {
          const h = held.get(org);
          if (h) await renew(org, h);
          else await watch(org);
        } catch (error) {
          if (!(error instanceof LeaseTaken)) warn(`lease of ${org}: ${(error as Error).message}`);
        }
      }),
    );
  }

  const quorum: RegionQuorum = {
    async start(r) {
      registry = r;
      const info = await retry(`stream ${commitStreamName(region)}`, () => jsm.streams.info(commitStreamName(region)), warn, () => stopped);
      const target = info.state.last_seq;
      // Organizations idle longer than the stream retains show no gap to the follower: compared with their writers first.
      await snapshots.start([...r.all()].map((a) => a.id), head, target);
      // Nothing to wait for below where the follower starts, nor below what the stream still holds: a stream whose
      // messages all aged out (or one this process had applied to the end) delivers nothing more until a write.
      applied = Math.max(applied, startSeq() - 1, info.state.first_seq - 1);
      following = follow();
      while (applied < target && !stopped) await new Promise((res) => setTimeout(res, 20));
      ticker = setInterval(() => {
        ticking ??= tick().finally(() => (ticking = undefined));
      }, options.leaseRenewMs);
      ticker.unref();
      ticking = tick().finally(() => (ticking = undefined));
      await ticking;
    },

    async bootstrap(rootOrgId, create) {
      if (!registry || [...registry.all()].length > 0 || rootOrgId === undefined) return undefined;
      for (;;) {
        if (registry.get(rootOrgId)) return undefined;
        if (writing(held.get(rootOrgId))) return create();
        await (ticking ?? tick());
        if (!held.has(rootOrgId) && !seen.has(rootOrgId)) await take(rootOrgId, 0, 1).catch(() => {});
        await new Promise((r) => setTimeout(r, 50));
      }
    },

    mayWrite(org) {
      const h = held.get(org);
      if (writing(h)) return undefined;
      if (h) return unavailable(org, `is being taken over by this process (${options.process})`);
      const s = seen.get(org);
      if (s && s.holder !== '' && s.holder !== options.process && now() - s.seenAt < options.leaseTtlMs) {
        return new ServiceError('ERR_TEMPORARY_REDIRECT', `organization ${org} is written by ${s.holder} at ${s.url}`, { headers: { Location: s.url, 'Retry-After': '1', 'Service-Writer': s.holder } });
      }
      return unavailable(org, 'has no writer in the region at the moment');
    },

    async store(org, writes, newOrgs) {
      const h = held.get(org);
      if (!writing(h)) throw quorum.mayWrite(org) ?? unavailable(org, 'is not written here');
      const last = writes.filter((w) => w.org === org).at(-1)?.offset ?? head(org);
      const message = encodeCommit({ writer: options.process, epoch: h.epoch, head: last, writes, newOrgs });
      try {
        const ack = await js.publish(commitSubject(region, org), message, { expect: { lastSubjectSequence: h.lastSeq }, timeout: Math.min(options.leaseTtlMs, 5000) });
        h.lastSeq = ack.seq;
        return [...new Set(writes.map((w) => w.org))].map((o): [string, unknown] => [seqKey(o), ack.seq]);
      } catch (error) {
        if (isWrongSequence(error)) {
          stepDown(org, 'the commit stream refused its write: another process wrote since (fenced)');
          throw unavailable(org, 'changed writers');
        }
        // Not known to be stored: take over again (apply what the stream holds, fence) before the next write.
        if (held.get(org) === h) h.state = 'syncing';
        throw unavailable(org, `could not be stored in the region's quorum (${(error as Error).message})`);
      }
    },

    refused(org) {
      reloads.add(org);
      void drain();
    },

    async sharedSecrets() {
      const stored = await secrets.read();
      return stored && decodeSecrets(stored.value);
    },

    async shareSecrets(values) {
      try {
        await secrets.write(encodeSecrets(values), 0);
        return values;
      } catch (error) {
        if (!(error instanceof LeaseTaken)) throw error;
        const stored = await secrets.read();
        if (!stored) throw error;
        return decodeSecrets(stored.value);
      }
    },

    view() {
      const epochs: Record<string, number> = {};
      for (const [org, h] of held) if (writing(h)) epochs[org] = h.epoch;
      const leases = Object.keys(epochs).length;
      return { role: leases > 0 ? 'writer' : 'standby', process: options.process, leases, epochs, lag_entries: Math.max(0, streamLast - applied), snapshots_installed: snapshots.installed() };
    },

    lease(org) {
      const h = held.get(org);
      if (h) return { org, holder: options.process, url: options.publicUrl(), epoch: h.epoch, writing: writing(h), offset: head(org) };
      const s = seen.get(org);
      return { org, holder: s?.holder ?? null, url: s?.url ?? null, epoch: s?.epoch ?? null, writing: false, offset: head(org) };
    },

    async stop() {
      stopped = true;
      if (ticker) clearInterval(ticker);
      await ticking;
      // A clean stop hands its leases back (the actors are stopped, nothing more is written), so a standby
      // takes over at its next renewal tick instead of after the TTL.
      await Promise.all([...held].map(([org, h]) => bucket.write(org, { holder: '', url: '', epoch: h.epoch }, h.revision).catch(() => {})));
      held.clear();
      await consumer?.close();
      await following;
    },
  };

  // The lag /health shows (and the follower's watchdog): refreshed in the background, never on a request's path.
  const lagTimer = setInterval(() => {
    jsm.streams.info(commitStreamName(region)).then(
      (i) => {
        streamLast = i.state.last_seq;
        checkFollower();
      },
      () => {},
    );
  }, 1000);
  lagTimer.unref();
  const stop = quorum.stop;
  quorum.stop = async () => {
    clearInterval(lagTimer);
    await stop();
    snapshots.stop();
  };
  return quorum;
}
