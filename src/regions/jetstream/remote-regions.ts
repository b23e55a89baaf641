// The seam between the service and the JetStream transport: under SERVICE_REGION_TRANSPORT=jetstream the
// origin reaches its replica regions through NATS; otherwise nothing changes (in-process, simulated).
import type { ConnectRegion } from '../in-process.js';
import type { RegionTransportConfig } from '../../lib/region-transport.js';
import type { Wal } from '../../wal/log.js';
import { connectJetStream } from './origin.js';

export interface RemoteRegions {
  connect?: ConnectRegion;
  close(): Promise<void>;
}

export async function connectRemoteRegions(transport: RegionTransportConfig | undefined, regions: readonly string[], warn: (m: string) => void, wal?: Wal): Promise<RemoteRegions> {
  if (!transport || transport.kind === 'simulated') return { close: async () => {} };
  const origin = regions[0] as string;
  if (transport.region !== origin) throw new Error(`region ${transport.region} is a replica region; its process is started as one (src/main.ts does)`);
  const js = connectJetStream({ origin, natsUrl: transport.natsUrl, replicas: transport.replicas, security: transport.security, retentionMs: transport.retentionMs, pingMs: transport.pingMs, warn, ...(wal ? { wal } : {}) });
  return { connect: js.connect, close: js.close };
}
