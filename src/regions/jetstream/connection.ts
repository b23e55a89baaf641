// One NATS connection per region process, with the timers SCALE.md measured: pings every 2 s, three missed
// close a stale (black-holed) connection; reconnection never gives up.
import { connect, type NatsConnection } from '@nats-io/transport-node';

export interface ConnectionOptions {
  natsUrl: string;
  pingMs: number;
  name: string;
  warn(message: string): void;
}

export async function openNats(options: ConnectionOptions): Promise<NatsConnection> {
  const nc = await connect({ servers: options.natsUrl.split(','), name: options.name, pingInterval: options.pingMs, maxPingOut: 3, maxReconnectAttempts: -1, reconnectTimeWait: 250, waitOnFirstConnect: true });
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect') options.warn(`nats ${options.natsUrl}: ${s.type}`);
    }
  })();
  return nc;
}

/** JetStream API calls fail while a server restarts: they are retried (with a warning now and then) until `stopped`. */
export async function retry<T>(what: string, call: () => Promise<T>, warn: (m: string) => void, stopped: () => boolean = () => false): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (stopped()) throw error;
      if (attempt === 1 || attempt % 10 === 0) warn(`${what} failed (${(error as Error).message}); retrying`);
      await new Promise((r) => setTimeout(r, Math.min(1000, 100 * attempt)));
    }
  }
}
