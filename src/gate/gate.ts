// A running Gate: the front, its plugins and its telemetry (GateServerStarted and its renewals, heartbeats).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Metrics } from '../lib/metrics.js';
import type { GateConfig } from './config.js';
import { heartbeat, serverStarted, type BuildInfo } from './events.js';
import { buildPlugin } from './plugins/index.js';
import { createHttpClient } from './round-trip.js';
import { createEventSender, type EventSender } from './sender.js';
import { startGateServer } from './server.js';

export interface Gate {
  port: number;
  instanceId: string;
  metrics: Metrics;
  sender: EventSender | undefined;
  close(): Promise<void>;
}

export interface GateOptions {
  log?: (message: string) => void;
  warn?: (message: string) => void;
}

function buildInfo(): BuildInfo {
  let version = '0.0.0';
  try {
    version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    // a bundled copy without package.json still runs
  }
  const env = process.env;
  return {
    version,
    variant: 'community',
    ...(env['GATE_BUILD_COMMIT'] ? { build_commit: env['GATE_BUILD_COMMIT'] } : {}),
    ...(env['GATE_BUILD_DATE'] ? { build_date: env['GATE_BUILD_DATE'] } : {}),
    ...(env['GATE_BUILT_BY'] ? { built_by: env['GATE_BUILT_BY'] } : {}),
  };
}

export async function startGate(config: GateConfig, options: GateOptions = {}): Promise<Gate> {
  const warn = options.warn ?? ((m: string) => console.error(m));
  const metrics = new Metrics();
  const http = createHttpClient();
  const instanceId = randomUUID();
  const origin = { orgId: config.service?.orgId ?? '' };
  const sender =
    config.events.enabled && config.service
      ? createEventSender({ ...config.service, maxEvents: config.events.batch.maxEvents, maxDelayMs: config.events.batch.maxDelayMs, bufferLimit: config.events.bufferLimit, metrics, warn })
      : undefined;
  const heartbeats = metrics.counter('gate_heartbeats_total', 'Heartbeat send attempts, by result');
  let sequence = 0;
  const started = Date.now();

  const pluginDeps = { service: config.service, jwksFetches: metrics.counter('gate_jwks_fetches_total', 'JWKS fetches by validate-jwt plugins, by plugin id and result') };
  const server = await startGateServer({
    config,
    build: (p) => buildPlugin(p, pluginDeps),
    http,
    metrics,
    ...(sender ? { emit: (e) => sender.enqueue(e) } : {}),
    health: () => ({ instance_id: instanceId, uptime_seconds: Math.round((Date.now() - started) / 1000), events_queued: sender?.queued() ?? 0 }),
  });

  const timers: NodeJS.Timeout[] = [];
  if (sender) {
    const build = buildInfo();
    sender.enqueue(serverStarted(origin, instanceId, build, false, Date.now()));
    timers.push(setInterval(() => sender.enqueue(serverStarted(origin, instanceId, build, true, Date.now())), config.events.serverStartedRenewalMs));
    if (config.events.heartbeat.enabled) {
      // One number per attempt, whatever its fate: a lost heartbeat is a gap, never a retry.
      timers.push(
        setInterval(() => {
          sequence += 1;
          void sender.sendOnce(heartbeat(origin, instanceId, sequence, Date.now())).then((ok) => heartbeats.inc({ result: ok ? 'sent' : 'failed' }));
        }, config.events.heartbeat.intervalMs),
      );
    }
  }
  for (const t of timers) t.unref();
  options.log?.(`gate listening on ${config.host}:${server.port} (instance ${instanceId})`);

  return {
    port: server.port,
    instanceId,
    metrics,
    sender,
    async close() {
      for (const t of timers) clearInterval(t);
      await server.close();
      if (sender) {
        await sender.drain(2000);
        await sender.close();
      }
      await http.close();
    },
  };
}
