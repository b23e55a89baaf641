// Composition root: reads the environment, starts the service, stops it cleanly on SIGINT/SIGTERM.
import { ConfigError, loadConfig, loadOperatorKey } from './config.js';
import { startReplicaProcess } from './regions/jetstream/replica-process.js';
import { FallbackHttpError, startService } from './service.js';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const operatorKey = loadOperatorKey(process.env);
  const transport = config.regionTransport;
  // Under JetStream, a replica region's process holds only what the origin ships it.
  if (transport?.kind === 'jetstream' && transport.region !== config.regions[0]) return replicaMain(config, transport, operatorKey);
  const startedAt = performance.now();
  const service = await startService(config, operatorKey === undefined ? {} : { operatorKey });
  const { orgs, replayed } = service.recovered;
  // How long start-up took and what it rebuilt: the figures an operator sizing a restart needs.
  console.log(`started in ${Math.round(performance.now() - startedAt)} ms (${Math.round(performance.now())} ms after the process began): ${orgs} organizations, ${replayed} WAL entries replayed`);
  if (service.root) {
    console.log('created the root organization; keep these, the API key is not shown again:');
    console.log(`  Service-OrgID:   ${service.root.id}`);
    console.log(`  Service-API-Key: ${service.root.api_key}`);
  }
  console.log(`listening on http://${config.host}:${service.port} (data in ${config.dataDir}, regions ${config.regions.join(', ')})`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping`);
    await service.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

async function replicaMain(config: ReturnType<typeof loadConfig>, transport: Extract<NonNullable<ReturnType<typeof loadConfig>['regionTransport']>, { kind: 'jetstream' }>, operatorKey: string | undefined): Promise<void> {
  const replica = await startReplicaProcess(config, transport, (m) => console.warn(`warning: ${m}`), operatorKey);
  console.log(`listening on http://${config.host}:${replica.port} (replica region ${transport.region} of ${config.regions[0]}, data in ${config.dataDir})`);
  const stop = async (signal: string) => {
    console.log(`${signal}: stopping`);
    await replica.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof FallbackHttpError) {
    console.error(`cannot start: ${error.message}`);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
