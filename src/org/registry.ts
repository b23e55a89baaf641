// Every organization's actor, found by ID; the index of API keys; the root organization's bootstrap.
import { createHash, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.js';
import type { Change } from '../domain/changes.js';
import type { DecideContext } from '../domain/decision.js';
import { emptyState, type OrgGenesis, type OrgState } from '../domain/state.js';
import { isEventMessageName } from '../events/catalog.js';
import type { Chainer } from '../events/chain.js';
import type { EventStamper } from '../events/stamp.js';
import type { IdSource } from '../lib/ids.js';
import type { Clock } from '../lib/clock.js';
import type { SnapshotItem, Wal } from '../wal/log.js';
import { OrgActor, type ActorDeps } from './actor.js';
import type { CommitBus, CommitRecord } from './commit-bus.js';
import { recoverOrg } from './recovery.js';

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export interface RegistryDeps {
  wal: Wal;
  clock: Clock;
  ids: IdSource;
  stamp: EventStamper;
  /** links each event to its organization's chain */
  chain?: Chainer;
  regions: readonly string[];
  mailboxLimit: number;
  snapshotInterval: number;
  /** how long an actor's batch may gather under load, ms (default 2; tests lift it to be independent of timing) */
  gatherMaxMs?: number;
  /** where every actor publishes its commits; the registry subscribes first, for its key index */
  commits: CommitBus;
  fatal(error: unknown): void;
  log(message: string): void;
  warn(message: string): void;
}

export type AuthResult = { ok: true; actor: OrgActor } | { ok: false; error: ServiceError };

/** API keys that authenticated recently, with their SHA-256: a client presents the same key on every request. */
const KEY_CACHE_SIZE = 1024;

export class Registry {
  private readonly actors = new Map<string, OrgActor>();
  /** SHA-256 of every current API key → its organization */
  private readonly keyIndex = new Map<string, string>();
  private readonly deps: RegistryDeps;
  /** what every actor is given: one object for all of them, not one each (start-up at thousands of organizations) */
  private readonly actorDeps: ActorDeps;
  /** presented key → its SHA-256, for keys that authenticated; oldest first, bounded, emptied of rotated keys */
  private readonly keyDigests = new Map<string, Buffer>();
  /** organization → the bytes of its current key hash, refreshed when the hex changes */
  private readonly storedDigests = new Map<string, { hex: string; bytes: Buffer }>();
  /** organizations deleted, or being deleted, since this process started: their keys answer 401 */
  private readonly retired = new Set<string>();
  private readonly retiredListeners: Array<(org: string) => void> = [];

  constructor(deps: RegistryDeps) {
    this.deps = deps;
    this.actorDeps = {
      wal: deps.wal,
      context: () => this.context(),
      nowNs: () => deps.clock.nowNs(),
      stamp: deps.stamp,
      ...(deps.chain && { chain: deps.chain }),
      mailboxLimit: deps.mailboxLimit,
      snapshotInterval: deps.snapshotInterval,
      ...(deps.gatherMaxMs !== undefined && { gatherMaxMs: deps.gatherMaxMs }),
      committed: (commit) => this.committed(commit),
      fatal: deps.fatal,
      warn: deps.warn,
    };
    deps.commits.subscribe((commit) => {
      if (commit.keyRotated) this.reindexKey(commit.org);
    }, 'the API key index');
  }

  /** Rebuilds every organization from the log; returns how many entries were replayed. */
  async recover(deleting: ReadonlySet<string> = new Set()): Promise<{ orgs: number; replayed: number }> {
    let replayed = 0;
    // Deletions a crash interrupted: what is left of those organizations is being removed, never served again.
    for (const org of deleting) this.retired.add(org);
    for (const org of this.deps.wal.organizations()) {
      if (deleting.has(org)) continue;
      const r = await recoverOrg(this.deps.wal, org);
      if (!r) {
        this.deps.warn(`organization ${org} has no genesis entry; skipped`);
        continue;
      }
      if (r.cutAt !== undefined) this.deps.warn(`organization ${org}: WAL cut at entry ${r.cutAt}; state is as of entry ${r.state.offset}`);
      replayed += r.replayed;
      this.adopt(r.state, r.snapshotOffset);
    }
    return { orgs: this.actors.size, replayed };
  }

  /** On an empty log, creates the root organization; returns its credentials, or undefined if one exists. */
  async bootstrap(rootOrgId: string | undefined, rootApiKey: string | undefined): Promise<{ id: string; api_key: string } | undefined> {
    if (this.actors.size > 0) return undefined;
    const id = rootOrgId ?? this.deps.ids.uuid();
    const apiKey = rootApiKey ?? this.deps.ids.secret();
    const genesis: OrgGenesis = { id, org_name: 'root', parent_id: null, root_id: id, api_key_hash: hashKey(apiKey), created: new Date(this.deps.clock.nowMs()).toISOString() };
    const change: Change = { t: 'OrgCreated', genesis };
    const record = this.deps.wal.encodeEntry({ at: this.deps.clock.nowMs(), changes: [change], ev: 0 });
    await this.deps.wal.append([{ org: id, offset: 1, record, events: [] }], [id]);
    const state = emptyState(genesis);
    state.offset = 1;
    this.adopt(state, 0);
    return { id, api_key: apiKey };
  }

  get(orgId: string): OrgActor | undefined {
    return this.actors.get(orgId);
  }

  all(): IterableIterator<OrgActor> {
    return this.actors.values();
  }

  /** The order of checks is the contract's: unknown organization 404, bad key 401, another's key 403. */
  authenticate(orgId: string, apiKey: string | undefined): AuthResult {
    const actor = this.actors.get(orgId);
    if (this.retired.has(orgId)) return { ok: false, error: new ServiceError('ERR_UNAUTHORIZED', 'the API key is not valid: its organization was deleted') };
    if (!actor) return { ok: false, error: new ServiceError('ERR_NOT_FOUND', `organization ${orgId} not found`) };
    if (apiKey === undefined || apiKey === '') return { ok: false, error: new ServiceError('ERR_UNAUTHORIZED', 'Service-API-Key header is required') };
    const cached = this.keyDigests.get(apiKey);
    const presented = cached ?? createHash('sha256').update(apiKey).digest();
    const stored = this.storedDigest(actor);
    // The hashes are compared in constant time, cached or not.
    if (presented.length === stored.length && timingSafeEqual(presented, stored)) {
      if (!cached) {
        if (this.keyDigests.size >= KEY_CACHE_SIZE) this.keyDigests.delete(this.keyDigests.keys().next().value as string);
        this.keyDigests.set(apiKey, presented);
      }
      return { ok: true, actor };
    }
    // A key of this organization that is no longer its stored one was rotated away while its commit was in
    // flight (the index follows durable commits): refused as not valid, like any rotated key.
    const owner = this.keyIndex.get(presented.toString('hex'));
    if (owner !== undefined && owner !== orgId) return { ok: false, error: new ServiceError('ERR_FORBIDDEN', 'the API key does not belong to this organization') };
    return { ok: false, error: new ServiceError('ERR_UNAUTHORIZED', 'the API key is not valid') };
  }

  private storedDigest(actor: OrgActor): Buffer {
    const hex = actor.state.api_key_hash;
    let entry = this.storedDigests.get(actor.id);
    if (!entry || entry.hex !== hex) this.storedDigests.set(actor.id, (entry = { hex, bytes: Buffer.from(hex, 'hex') }));
    return entry.bytes;
  }


  /**
   * Takes an organization and every one below it out of service: their keys answer 401 from now on, and once
   * this resolves each one's last command is committed and its last snapshot written, so nothing of them is
   * written after it. Resolves to their IDs, the organization first. Each is quiesced before its suborganizations
   * are read, so one created meanwhile is not missed.
   */
  async retire(org: string): Promise<string[]> {
    for (const id of [org, ...this.descendants(org)]) this.retired.add(id);
    const out: string[] = [];
    const walk = async (id: string): Promise<void> => {
      this.retired.add(id);
      out.push(id);
      const actor = this.actors.get(id);
      if (!actor) return;
      await actor.retire();
      for (const child of actor.state.suborganizations) await walk(child);
      this.actors.delete(id);
      this.storedDigests.delete(id);
      this.keyIndex.delete(actor.state.api_key_hash);
      for (const [key, digest] of this.keyDigests) if (digest.toString('hex') === actor.state.api_key_hash) this.keyDigests.delete(key);
    };
    await walk(org);
    for (const id of out) for (const listener of this.retiredListeners) listener(id);
    return out;
  }

  /** Calls `fn` with each organization retired from now on (its WebSocket subscribers, its webhook deliveries). */
  onRetired(fn: (org: string) => void): void {
    this.retiredListeners.push(fn);
  }

  /** Every organization below this one, depth first. */
  descendants(orgId: string): string[] {
    const out: string[] = [];
    const walk = (id: string) => {
      for (const child of this.actors.get(id)?.state.suborganizations ?? []) {
        out.push(child);
        walk(child);
      }
    };
    walk(orgId);
    return out;
  }

  /**
   * Refuses new commands, answers the queued ones, then stores every organization's final snapshot (those with
   * anything logged since their last) in few durable commits: at thousands of organizations a commit each was
   * most of a clean stop.
   */
  async stop(): Promise<void> {
    const actors = [...this.actors.values()];
    await Promise.all(actors.map((a) => a.quiesce()));
    const releases: Array<() => void> = [];
    // Built one at a time as the WAL packs them, so that only the packed records wait for their commit together.
    function* finals(): Generator<SnapshotItem> {
      for (const actor of actors) {
        const final = actor.finalSnapshot();
        if (!final) continue;
        releases.push(final.release);
        yield final.item;
      }
    }
    try {
      await this.deps.wal.saveSnapshots(finals());
    } catch (error) {
      this.deps.warn(`the final snapshots failed: ${String(error)}; the WAL has every entry, so the next start replays them`);
    } finally {
      for (const release of releases) release();
    }
  }

  /** A decision's sources of fresh ids, made once: a closure made per batch also costs a name set on it under tsx. */
  private readonly uuid = (): string => this.deps.ids.uuid();
  private readonly secret = (): string => this.deps.ids.secret();

  private context(): DecideContext {
    return {
      nowMs: this.deps.clock.nowMs(),
      uuid: this.uuid,
      secret: this.secret,
      hashKey,
      regions: this.deps.regions,
      isEventMessageName,
    };
  }

  private adopt(state: OrgState, snapshotOffset: number): OrgActor {
    const actor = new OrgActor(state, this.actorDeps, snapshotOffset);
    this.actors.set(state.id, actor);
    this.keyIndex.set(state.api_key_hash, state.id);
    return actor;
  }

  private committed(commit: CommitRecord): void {
    // Adopted before anyone hears of the commit: subscribers can find the new organizations.
    for (const genesis of commit.spawned) {
      const child = emptyState(genesis);
      child.offset = 1;
      this.adopt(child, 0);
    }
    this.deps.commits.publish(commit);
  }

  private reindexKey(org: string): void {
    const actor = this.actors.get(org);
    if (!actor) return;
    for (const [hash, owner] of this.keyIndex) {
      if (owner !== org) continue;
      this.keyIndex.delete(hash);
      // A rotated key must not stay in memory, not even as a cache entry.
      for (const [key, digest] of this.keyDigests) if (digest.toString('hex') === hash) this.keyDigests.delete(key);
    }
    this.keyIndex.set(actor.state.api_key_hash, org);
  }
}
