// The origin's side of JetStream replication: a Transport per replica region. Batches go to the origin's
// WAL stream (stored, mirrored into every replica region's domain); probes go over core NATS to the
// region's process, and its acknowledgements come back the same way. The link above stays the shipper:
// it resends from the last acknowledgement whatever a cut, a failed publish or a restart lost.
import { jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { ConnectRegion } from '../in-process.js';
import type { Ack, Transport } from '../transport.js';
import type { Wal } from '../../wal/log.js';
import { openNats, retry } from './connection.js';
import { serveSnapshots } from './snapshot-source.js';
import { ackSubject, decodeAck, encodeBatch, msgId, probeSubject, streamName, walSubject, walSubjects } from './wire.js';

export interface OriginOptions {
  origin: string;
  natsUrl: string;
  retentionMs: number;
  pingMs: number;
  /** the origin's log, from which replicas past the stream's retention get snapshots */
  wal?: Wal;
  warn(message: string): void;
}

/** Creates (or updates) the origin's WAL stream: file storage, limits retention by age, never by interest. */
export async function ensureWalStream(nc: NatsConnection, origin: string, retentionMs: number, warn: (m: string) => void, stopped: () => boolean = () => false): Promise<void> {
  const jsm = await retry('jetstream manager', () => jetstreamManager(nc), warn, stopped);
  const config = { name: streamName(origin), subjects: [walSubjects(origin)], retention: RetentionPolicy.Limits, storage: StorageType.File, max_age: retentionMs * 1_000_000, duplicate_window: 120 * 1_000_000_000 };
  await retry(`stream ${config.name}`, async () => {
    try {
      await jsm.streams.info(config.name);
      await jsm.streams.update(config.name, config);
    } catch (error) {
      if (!/not found/i.test((error as Error).message)) throw error;
      await jsm.streams.add(config);
    }
  }, warn, stopped);
}

/** The connection and the stream, once they exist; until then sends are dropped and the link resends them. */
interface Ready {
  nc: NatsConnection;
  js: JetStreamClient;
}

export function createOriginTransport(ready: () => Ready | undefined, whenReady: Promise<Ready>, origin: string, region: string, warn: (m: string) => void): Transport {
  let listener: (ack: Ack) => void = () => {};
  let closed = false;
  let failures = 0;
  let sub: Subscription | undefined;
  whenReady.then(({ nc }) => {
    if (closed) return;
    sub = nc.subscribe(ackSubject(origin, region), {
      callback: (error, msg) => {
        if (error || closed) return;
        try {
          listener(decodeAck(msg.data));
        } catch (e) {
          warn(`region ${region}: unreadable acknowledgement (${(e as Error).message})`);
        }
      },
    });
  }, () => {}); // connectJetStream warns
  return {
    send(batch) {
      const r = ready();
      if (closed || !r) return;
      if (batch.entries.length === 0) {
        r.nc.publish(probeSubject(origin, region), encodeBatch(batch));
        return;
      }
      // Not awaited: publishes on one connection reach the stream in order. A failed one is resent by the
      // link from the replica's acknowledgement, so only the first of a run of failures is worth a warning.
      r.js.publish(walSubject(origin, batch.org), encodeBatch(batch), { msgID: msgId(batch) }).then(
        () => (failures = 0),
        (error: unknown) => {
          if (failures++ === 0) warn(`publishing to ${streamName(origin)} failed (${(error as Error).message}); the link resends`);
        },
      );
    },
    onAck(l) {
      listener = l;
    },
    close() {
      closed = true;
      sub?.unsubscribe();
    },
  };
}

/**
 * ConnectRegion over JetStream: one connection and one stream for every replica region of this origin.
 * The service does not wait for them: local writes never depend on NATS. Until the connection and the
 * stream exist, nothing is shipped, and the links' resends catch up once they do.
 */
export function connectJetStream(options: OriginOptions): { connect: ConnectRegion; close(): Promise<void> } {
  let current: Ready | undefined;
  let stopped = false;
  const whenReady = (async () => {
    const nc = await openNats({ natsUrl: options.natsUrl, pingMs: options.pingMs, name: `origin ${options.origin}`, warn: options.warn });
    if (stopped) {
      await nc.close();
      throw new Error('stopped');
    }
    if (options.wal) serveSnapshots(nc, options.origin, options.wal, options.warn);
    await ensureWalStream(nc, options.origin, options.retentionMs, options.warn, () => stopped);
    current = { nc, js: jetstream(nc) };
    return current;
  })();
  whenReady.catch((error: unknown) => {
    if (!stopped) options.warn(`JetStream replication did not start: ${(error as Error).message}`);
  });
  return {
    connect: async (region) => ({ transport: createOriginTransport(() => current, whenReady, options.origin, region, options.warn), close: async () => {} }),
    async close() {
      stopped = true;
      await current?.nc.drain();
    },
  };
}
