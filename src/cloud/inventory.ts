// Snapshots of cloud connections, on request and periodically: an inventory at the provider (users,
// non-human identities, credentials: CLOUD.md §3), recorded in the organization's state in the
// connection's region. The periodic pass walks every organization's connections one at a time.
import { requireCloudConnection, type CloudSnapshot } from '../domain/cloud.js';
import type { Clock, TimerHandle } from '../lib/clock.js';
import type { Outcome } from '../org/actor.js';
import { inventoryAws } from './aws.js';
import { inventoryAd } from './ad.js';
import { inventoryGcp } from './gcp.js';
import type { Clients, OrgPort } from './connections.js';

export interface InventoryDeps {
  clients: Clients;
  clock: Clock;
  /** every organization, for the periodic pass */
  orgs(): Iterable<OrgPort>;
  warn(message: string): void;
}

export function createInventory(deps: InventoryDeps) {
  const take = async (org: OrgPort, connectionId: string): Promise<Outcome<CloudSnapshot>> => {
    const connection = requireCloudConnection(org.state, connectionId);
    let counts;
    if (connection.type === 'active_directory') {
      const { config, credentials, outbound } = deps.clients.ad(org.id, connection);
      counts = await inventoryAd(config, credentials, outbound);
    } else if (connection.type === 'gcp') {
      const { clients, project } = deps.clients.gcp(org.id, connection);
      counts = await inventoryGcp(clients, project);
    } else {
      counts = await inventoryAws(deps.clients.aws(org.id, connection).client);
    }
    // The snapshot's time is when the inventory was complete.
    const snapshot: CloudSnapshot = { connection_id: connectionId, region: connection.region, at_ms: deps.clock.nowMs(), ...counts };
    return org.execute<CloudSnapshot>({ kind: 'RecordCloudSnapshot', snapshot });
  };

  /** One pass over every connection; a failing one is reported and the pass goes on. */
  const pass = async (): Promise<number> => {
    let taken = 0;
    for (const org of [...deps.orgs()]) {
      for (const id of [...org.state.cloud_connections.keys()]) {
        try {
          await take(org, id);
          taken += 1;
        } catch (error) {
          deps.warn(`snapshot of cloud connection ${id} of ${org.id} failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
    return taken;
  };

  let timer: TimerHandle | undefined;
  let running: Promise<number> | undefined;
  return {
    take,
    pass,
    /** intervalS 0: no periodic snapshots */
    start(intervalS: number): void {
      if (intervalS <= 0) return;
      timer = deps.clock.setInterval(
        () => {
          // A pass still running (a slow provider) is not overlapped by the next.
          if (running) return;
          running = pass().finally(() => (running = undefined));
        },
        intervalS * 1000,
        { background: true },
      );
    },
    async stop(): Promise<void> {
      deps.clock.clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}

export type Inventory = ReturnType<typeof createInventory>;
