// One NATS connection per region process, with the timers SCALE.md measured: pings every 2 s, three missed
// close a stale (black-holed) connection; reconnection never gives up.
import { readFileSync } from 'node:fs';
import type { JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import type { NatsSecurity } from '../../lib/region-transport.js';

export interface ConnectionOptions {
  natsUrl: string;
  pingMs: number;
  name: string;
  /** credentials and TLS for the region's servers; none by default */
  security?: NatsSecurity;
  warn(message: string): void;
}

/** The client options a process's NatsSecurity asks for: a server that requires them refuses a connection without. */
function securityOptions(security: NatsSecurity | undefined) {
  const auth = security?.auth;
  return {
    ...(auth && 'user' in auth ? { user: auth.user, pass: auth.pass } : {}),
    ...(auth && 'credsFile' in auth ? { authenticator: credsAuthenticator(readFileSync(auth.credsFile)) } : {}),
    ...(security?.tls ? { tls: { caFile: security.tls.caFile, ...(security.tls.certFile ? { certFile: security.tls.certFile, keyFile: security.tls.keyFile } : {}) } } : {}),
  };
}

export async function openNats(options: ConnectionOptions): Promise<NatsConnection> {
  const nc = await connect({ servers: options.natsUrl.split(','), name: options.name, ...securityOptions(options.security), pingInterval: options.pingMs, maxPingOut: 3, maxReconnectAttempts: -1, reconnectTimeWait: 250, waitOnFirstConnect: true });
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

/** Creates a stream, or brings an existing one to this configuration (a restart with other settings). */
export async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  try {
    await jsm.streams.info(config.name);
    await jsm.streams.update(config.name, config);
  } catch (error) {
    if (!/not found/i.test((error as Error).message)) throw error;
    await jsm.streams.add(config);
  }
}

/**
 * The stream's first message of `subject` (a filter, wildcards allowed) at or after sequence `seq`, or undefined:
 * STREAM.MSG.GET with next_by_subj, which nats-server 2.9 answers on the stream's message get (the client types it
 * for direct gets only). It steps over any gap the stream's limits left.
 */
export function nextBySubject(jsm: JetStreamManager, stream: string, subject: string, seq: number): ReturnType<JetStreamManager['streams']['getMessage']> {
  return jsm.streams.getMessage(stream, { seq, next_by_subj: subject } as unknown as { seq: number });
}
