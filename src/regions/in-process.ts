// The default way to reach a replica region: a replica in this process, with its own LMDB environment in
// the data dir, behind the simulated network (which is also where fault injection comes from).
import type { Config } from '../config.js';
import type { Clock } from '../lib/clock.js';
import type { Wal } from '../wal/log.js';
import { Replica } from './replica.js';
import { openReplicaStore } from './replica-store.js';
import { createSimulatedTransport, type SimulatedTransportOptions } from './simulated-transport.js';
import type { FaultInjection, Transport } from './transport.js';

/** One replica region as this process reaches it. */
export interface RegionEnd {
  transport: Transport;
  /** present when the transport can be told to misbehave (the simulated one); the /ops endpoint needs it */
  faults?: FaultInjection;
  /** the replica, when it lives in this process (tests and /health read it) */
  replica?: Replica;
  /** the replica's own log, when it lives in this process: compacted like the local one */
  log?: Wal;
  /** unacknowledged entries per organization the link may have in flight, when the link's default is too few */
  windowEntries?: number;
  /** Closes what the end holds; called after the link has stopped. */
  close(): Promise<void>;
}

/** How to reach a replica region: startRegions calls it once per replica region, at start. */
export type ConnectRegion = (region: string) => Promise<RegionEnd>;

export interface InProcessDeps {
  config: Pick<Config, 'dataDir' | 'durability' | 'replicationLatencyMs' | 'replicationJitterMs' | 'snapshotInterval'>;
  clock: Clock;
  warn(message: string): void;
  random?: () => number;
}

export function connectInProcess(deps: InProcessDeps): ConnectRegion {
  const { config, warn } = deps;
  return async (region) => {
    const store = openReplicaStore(config.dataDir, region, config.durability === 'sync', warn, () => deps.clock.nowMs());
    const replica = await Replica.open(region, store, config.snapshotInterval, warn);
    const options: SimulatedTransportOptions = { latencyMs: config.replicationLatencyMs, jitterMs: config.replicationJitterMs, clock: deps.clock, warn };
    if (deps.random) options.random = deps.random;
    const transport = createSimulatedTransport(replica, options);
    return { transport, faults: transport, replica, log: store.wal, close: () => replica.close() };
  };
}
