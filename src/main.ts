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
    if (service.root.console_link) console.log(`open this link once to become the first administrator in the console:\n  ${service.root.console_link}`);
  }
  console.log(`listening on http://${config.host}:${service.port} (data in ${config.dataDir}, regions ${config.regions.join(', ')})`);
  if (service.console) {
    // Built now rather than on the first visit, so that its size is known and a broken build shows at once;
    // not awaited: the service answers meanwhile, and a request for the console waits for this same build.
    service.console.bundle().then(
      (b) => console.log(`console at ${service.issuer}/console: ${(b.bytes / 1024).toFixed(1)} KB, ${(b.gzipBytes / 1024).toFixed(1)} KB gzip`),
      (error: unknown) => console.warn(`warning: the console did not build: ${error instanceof Error ? error.message : String(error)}`),
    );
  }
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
