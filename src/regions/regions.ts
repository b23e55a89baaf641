// The deployment's regions: the local one, and for every other a way to reach it (a transport, and a
// replica when it lives in this process) and a link that ships committed WAL records to it. Also what
// /health, /metrics and the /ops endpoint see of them.
import type { Config } from '../config.js';
import { ServiceError } from '../errors.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { Metrics } from '../lib/metrics.js';
import type { CommitBus } from '../org/commit-bus.js';
import type { Registry } from '../org/registry.js';
import type { Wal } from '../wal/log.js';
import { localOnly, recordingWrites, type ConsistencyWaiter } from './consistency.js';
import { connectInProcess, type ConnectRegion, type RegionEnd } from './in-process.js';
import { ReplicationLink, type LinkView } from './link.js';
import type { LinkState } from './link-machine.js';
import type { Replica } from './replica.js';
import type { LinkConditions } from './transport.js';
import { createTwinRelease } from './twin-release.js';
import { createRegionWaiter, type RegionWaiter } from './waiters.js';

export interface RegionView {
  name: string;
  state: 'local' | LinkState;
  lag_entries: number;
}

export interface RegionsDeps {
  config: Pick<Config, 'regions' | 'dataDir' | 'durability' | 'replicationLatencyMs' | 'replicationJitterMs' | 'snapshotInterval'>;
  wal: Wal;
  registry: Registry;
  /** every durable commit: each is shipped to every replica region */
  commits: Pick<CommitBus, 'subscribe'>;
  metrics: Metrics;
  warn(message: string): void;
  /** links, waits and the simulated network run on it; the system clock by default */
  clock?: Clock;
  /** how to reach each replica region; by default an in-process replica behind the simulated network */
  connect?: ConnectRegion;
  /** the simulated network's jitter draws, for the default `connect` */
  random?: () => number;
}

/** A link as the fault-injection endpoint answers it: its view and the simulated network's delays. */
export interface FaultView extends LinkView {
  latency_ms: number;
  jitter_ms: number;
}

export interface Regions {
  readonly local: string;
  readonly consistency: ConsistencyWaiter;
  views(): RegionView[];
  /**
   * Fault injection on the link to a replica region; 404 for a region that has none, 409 when its
   * transport is a real one (it has no fault injection).
   */
  setLink(region: string, change: Partial<LinkConditions>): FaultView;
  link(region: string): ReplicationLink | undefined;
  replica(region: string): Replica | undefined;
  /**
   * The highest offset of the organization every replica region has acknowledged (applied durably); Infinity
   * when there is no replica region. Compaction keeps every entry after it, so a link never finds its next
   * entry gone.
   */
  shipped(org: string): number;
  /** the logs of the replicas living in this process, compacted beside the local one */
  replicaLogs(): Wal[];
  /** Answers outstanding waits, stops shipping and closes the replica stores. */
  stop(): Promise<void>;
}

const LINK_STATES: readonly LinkState[] = ['catching_up', 'streaming', 'lagging', 'cut'];

export async function startRegions(deps: RegionsDeps): Promise<Regions> {
  const { config } = deps;
  const local = config.regions[0] as string;
  const clock = deps.clock ?? systemClock;
  const connect = deps.connect ?? connectInProcess({ config, clock, warn: deps.warn, ...(deps.random ? { random: deps.random } : {}) });
  const ends = new Map<string, RegionEnd>();
  const links = new Map<string, ReplicationLink>();

  for (const region of config.regions.slice(1)) {
    const end = await connect(region);
    ends.set(region, end);
    links.set(region, new ReplicationLink({ region, wal: deps.wal, transport: end.transport, clock, warn: deps.warn, ...(end.windowEntries ? { windowEntries: end.windowEntries } : {}) }));
  }

  const waitLatency = deps.metrics.histogram('consistency_wait_seconds', 'Time a write waited for its consistency level after the local commit, by level and outcome');
  const waiter: RegionWaiter | undefined = links.size > 0 ? createRegionWaiter([...links.values()], waitLatency, clock) : undefined;

  const unsubscribe = deps.commits.subscribe((commit) => {
    for (const link of links.values()) {
      // A suborganization's genesis is committed in the same transaction as its parent's entry.
      for (const genesis of commit.spawned) link.committed(genesis.id, 1);
      link.committed(commit.org, commit.offset);
    }
  }, 'shipping to the replica regions');
  // Listens before the links start, so that the replicas' first acknowledgements (where they stand after a
  // restart) already release the twins they cover.
  const twins = createTwinRelease({ registry: deps.registry, commits: deps.commits, sources: [...links.values()], warn: deps.warn });
  for (const link of links.values()) link.start([...deps.registry.all()].map((a) => [a.id, a.state.offset] as [string, number]));
  twins.start();

  const lag = deps.metrics.gauge('replication_lag_entries', 'WAL entries committed locally and not yet acknowledged by the region');
  const linkState = deps.metrics.gauge('replication_link_state', 'Replication link state by region (1 for the current state)');
  // Grows for as long as a link stays cut: each suborganization created meanwhile owes its plain twin.
  const owedTwins = deps.metrics.gauge('regional_twins_owed', 'SuborganizationCreated_v1 events owed until every replica region holds their entry');
  deps.metrics.collect(() => {
    let owed = 0;
    for (const actor of deps.registry.all()) owed += actor.state.owed_twins.length;
    owedTwins.set(owed);
    for (const link of links.values()) {
      lag.set(link.lag(), { region: link.region });
      const current = link.state();
      for (const s of LINK_STATES) linkState.set(s === current ? 1 : 0, { region: link.region, state: s });
    }
  });

  const requireLink = (region: string): ReplicationLink => {
    const link = links.get(region);
    if (link) return link;
    if (region === local) throw new ServiceError('ERR_BAD_REQUEST', `region: ${region} is the local region; it has no replication link`);
    throw new ServiceError('ERR_NOT_FOUND', `region ${region} is not a replica region of this deployment (regions: ${config.regions.join(', ')})`);
  };

  /** Cutting drops what is in flight; bringing the link up starts a new session. */
  const setLink = (region: string, change: Partial<LinkConditions>): FaultView => {
    const link = requireLink(region);
    const faults = ends.get(region)?.faults;
    if (!faults) throw new ServiceError('ERR_CONFLICT', `region ${region} is reached over a real network; its link has no fault injection`);
    const wasUp = faults.conditions().up;
    const now = faults.setConditions(change);
    if (wasUp && !now.up) link.cut();
    else if (!wasUp && now.up) link.up();
    return { ...link.view(), latency_ms: now.latencyMs, jitter_ms: now.jitterMs };
  };

  return {
    local,
    consistency: recordingWrites(waiter ?? localOnly),
    views: () => [{ name: local, state: 'local', lag_entries: 0 }, ...[...links.values()].map((l) => ({ name: l.region, state: l.state(), lag_entries: l.lag() }))],
    setLink,
    link: (region) => links.get(region),
    replica: (region) => ends.get(region)?.replica,
    shipped(org) {
      let floor = Infinity;
      for (const link of links.values()) floor = Math.min(floor, link.acked(org));
      return floor;
    },
    replicaLogs: () => [...ends.values()].flatMap((e) => (e.log ? [e.log] : [])),
    async stop() {
      unsubscribe();
      twins.stop();
      waiter?.close();
      for (const link of links.values()) link.stop();
      await Promise.all([...ends.values()].map((e) => e.close()));
    },
  };
}
