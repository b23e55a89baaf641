// A replica region's process under JetStream: its own store, built only from what the origin ships, and
// a small HTTP surface: /health (the link as the consumer sees it) and reads of what it has applied. A
// write is refused with 409 naming the origin region: the origin alone orders an organization's writes.
// The list of organizations is the operator's (Service-Operator-Key); a request it cannot read gets a 400.
import { createServer, type Server } from 'node:http';
import type { Config } from '../../config.js';
import { ServiceError } from '../../errors.js';
import { catching, decodePathSegment } from '../../lib/http-handler.js';
import { sameSecret } from '../../lib/same-secret.js';
import { Replica } from '../replica.js';
import { openReplicaStore } from '../replica-store.js';
import type { RegionTransportConfig } from '../../lib/region-transport.js';
import { openNats } from './connection.js';
import { startReplicaSide } from './replica-side.js';

export interface ReplicaProcess {
  port: number;
  replica: Replica;
  stop(): Promise<void>;
}

type JetStreamConfig = Extract<RegionTransportConfig, { kind: 'jetstream' }>;

/** operatorKey: SERVICE_OPERATOR_KEY; without it the organization list is not served */
export async function startReplicaProcess(config: Pick<Config, 'host' | 'port' | 'dataDir' | 'durability' | 'snapshotInterval' | 'regions'>, transport: JetStreamConfig, warn: (m: string) => void, operatorKey?: string): Promise<ReplicaProcess> {
  const origin = config.regions[0] as string;
  const region = transport.region;
  const store = openReplicaStore(config.dataDir, region, config.durability === 'sync', warn);
  const replica = await Replica.open(region, store, config.snapshotInterval, warn);
  const nc = await openNats({ natsUrl: transport.natsUrl, pingMs: transport.pingMs, name: `replica ${region}`, warn });
  const side = await startReplicaSide({ nc, origin, region, replica, retentionMs: transport.retentionMs, pullExpiresMs: transport.pullExpiresMs, warn });

  const json = (res: import('node:http').ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(body);
  };
  // The service's error shape, so a client reads a replica's refusal as it reads any other.
  const fail = (res: import('node:http').ServerResponse, error: ServiceError) => json(res, error.status, JSON.stringify({ errors: [{ httpcode: error.status, message: error.message }] }));
  const isOperator = sameSecret(operatorKey);
  const server: Server = createServer(catching((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const where = transport.originUrl ? ` at ${transport.originUrl}` : '';
      return fail(res, new ServiceError('ERR_CONFLICT', `region ${region} is a read-only replica; send writes to the origin region ${origin}${where}`));
    }
    if (path === '/health') {
      side.view().then(
        (link) => json(res, 200, JSON.stringify({ result: { status: 'ok', role: 'replica', region, origin, regions: [{ name: region, state: 'local', lag_entries: 0 }, link], stats: replica.stats } })),
        (error: unknown) => json(res, 200, JSON.stringify({ result: { status: 'degraded', role: 'replica', region, origin, regions: [{ name: region, state: 'local', lag_entries: 0 }, { name: origin, state: 'cut', lag_entries: -1, error: String((error as Error).message) }], stats: replica.stats } })),
      );
      return;
    }
    if (path === '/replica/organizations') {
      if (operatorKey === undefined) return fail(res, new ServiceError('ERR_NOT_FOUND', 'the organization list is an operator endpoint, disabled (SERVICE_OPERATOR_KEY is not set)'));
      const key = req.headers['service-operator-key'];
      if (typeof key !== 'string' || !isOperator(key)) return fail(res, new ServiceError('ERR_UNAUTHORIZED', 'Service-Operator-Key is missing or wrong'));
      return json(res, 200, JSON.stringify({ result: replica.organizations().map((id) => ({ id, offset: replica.applied(id) })) }));
    }
    const m = /^\/replica\/organizations\/([^/]+)$/.exec(path);
    if (m) {
      const id = decodePathSegment(m[1] as string, 'organization id');
      const state = replica.state(id);
      if (!state) return fail(res, new ServiceError('ERR_NOT_FOUND', `organization ${id} is not applied in region ${region}`));
      return json(res, 200, JSON.stringify({ result: { id, offset: state.offset, event_offset: state.event_offset } }));
    }
    return fail(res, new ServiceError('ERR_NOT_FOUND', `no route ${path} on replica region ${region} (it serves /health and /replica/organizations[/{id}])`));
  }, (error) => warn(`replica request failed: ${String(error)}`)));
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    replica,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await side.stop();
      await nc.drain();
      await replica.close();
    },
  };
}
