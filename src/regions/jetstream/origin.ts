// The origin's side of JetStream replication: a Transport per replica region. Batches go to the origin's
// WAL stream (stored, mirrored into every replica region's domain); probes go over core NATS to the
// region's process, and its acknowledgements come back the same way. The link above stays the shipper:
// it resends from the last acknowledgement whatever a cut, a failed publish or a restart lost.
import { jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { ConnectRegion } from '../in-process.js';
import type { Ack, Batch, ShippedEntry, Transport } from '../transport.js';
import type { Wal } from '../../wal/log.js';
import type { NatsSecurity } from '../../lib/region-transport.js';
import { ensureStream, openNats, retry } from './connection.js';
import { serveSnapshots, snapshotSubject } from './snapshot-source.js';
import { ackSubject, decodeAck, encodeBatch, msgId, probeSubject, streamName, walSubject, walSubjects } from './wire.js';

export interface OriginOptions {
  origin: string;
  natsUrl: string;
  retentionMs: number;
  /** copies of the stream the region's cluster keeps (1, or 3 on a cluster of three) */
  replicas?: number;
  security?: NatsSecurity;
  pingMs: number;
  /** the origin's log, from which replicas past the stream's retention get snapshots */
  wal?: Wal;
  warn(message: string): void;
}

/** Creates (or updates) the origin's WAL stream: file storage, limits retention by age, never by interest. */
export async function ensureWalStream(nc: NatsConnection, origin: string, retentionMs: number, warn: (m: string) => void, stopped: () => boolean = () => false, replicas = 1): Promise<void> {
  const jsm = await retry('jetstream manager', () => jetstreamManager(nc), warn, stopped);
  const config = { name: streamName(origin), subjects: [walSubjects(origin)], retention: RetentionPolicy.Limits, storage: StorageType.File, max_age: retentionMs * 1_000_000, duplicate_window: 120 * 1_000_000_000, num_replicas: replicas };
  await retry(`stream ${config.name}`, () => ensureStream(jsm, config), warn, stopped);
}

/** The connection and the stream, once they exist; until then batches wait in the publisher's queue. */
interface Ready {
  nc: NatsConnection;
  js: JetStreamClient;
}

/** Batches in flight to the stream at once: enough to keep a long link busy, few enough to resend cheaply. */
const PUBLISH_WINDOW = 64;
/**
 * Entries per organization a link may have unacknowledged. An acknowledgement comes back through the stream,
 * a mirror, a consumer and a replica's flush, several times the simulated link's round trip: with the link's
 * default of 4096 that round trip, not the transport, bounded the sustained rate (bench regions --only transport).
 */
const LINK_WINDOW_ENTRIES = 16_384;
/** Past this many bytes waiting (the stream unreachable for long), new batches are dropped: the links resend them. */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;

interface Publication {
  org: string;
  first: number;
  last: number;
  data: Uint8Array;
  /** undefined while in flight */
  ok?: boolean;
}

/**
 * The origin's one writer to its stream, shared by every replica region's link: the stream holds each batch
 * once, however many regions read it. Publishes are pipelined on one connection, so they reach the stream in
 * the order sent. When one fails (the hub restarting, JetStream not ready), nothing more is sent until every
 * publish in flight has settled; then everything from the failed one on is published again, in order (go-back-N,
 * SCALE.md §2), with growing pauses until the stream takes it. So a failed publish never leaves a replica with
 * a gap to wait out until its link's resend timer fires: a later batch stored before it is stored again after it.
 */
export interface Publisher {
  /** Queues a batch (at least one entry) for the stream. */
  publish(batch: Batch): void;
  /** the highest offset of the organization queued or published so far in this process */
  published(org: string): number;
  close(): void;
}

/** The first and last offsets of a batch of at least one entry. */
function spanOf(batch: Batch): { first: number; last: number } {
  return { first: (batch.entries[0] as ShippedEntry).offset, last: (batch.entries[batch.entries.length - 1] as ShippedEntry).offset };
}

export function createPublisher(ready: () => Ready | undefined, whenReady: Promise<Ready>, origin: string, warn: (m: string) => void): Publisher {
  const queue: Publication[] = [];
  const inFlight: Publication[] = [];
  const highest = new Map<string, number>();
  let queuedBytes = 0;
  let publishes = 0;
  let failing = false;
  let pauseMs = 0;
  let retry: NodeJS.Timeout | undefined;
  let dropped = false;
  let closed = false;

  const pump = () => {
    const r = ready();
    if (closed || failing || !r) return;
    while (inFlight.length < PUBLISH_WINDOW && queue.length > 0) {
      const p = queue.shift() as Publication;
      queuedBytes -= p.data.length;
      p.ok = undefined;
      inFlight.push(p);
      r.js.publish(walSubject(origin, p.org), p.data, { msgID: msgId(p.org, p.first, p.last, ++publishes) }).then(
        () => settle(p, true),
        (error: unknown) => settle(p, false, error),
      );
    }
  };

  const settle = (p: Publication, ok: boolean, error?: unknown) => {
    if (closed) return;
    p.ok = ok;
    if (!ok && !failing) {
      failing = true;
      if (pauseMs === 0) warn(`publishing to ${streamName(origin)} failed (${(error as Error).message}); publishing again from that batch, in order`);
    }
    if (!failing) {
      // Acknowledged in order: drop the settled ones from the head, keep the window full.
      while (inFlight[0]?.ok === true) inFlight.shift();
      pauseMs = 0;
      pump();
      return;
    }
    if (inFlight.some((q) => q.ok === undefined)) return;
    // Everything in flight has settled: go back to the first failure and start over from there.
    const again = inFlight.slice(inFlight.findIndex((q) => q.ok === false));
    for (const q of again) queuedBytes += q.data.length;
    queue.unshift(...again);
    inFlight.length = 0;
    pauseMs = Math.min(2000, Math.max(250, pauseMs * 2));
    retry = setTimeout(() => {
      failing = false;
      pump();
    }, pauseMs);
  };

  whenReady.then(pump, () => {}); // connectJetStream warns
  return {
    publish(batch) {
      if (closed) return;
      if (queuedBytes >= MAX_QUEUED_BYTES) {
        if (!dropped) warn(`${MAX_QUEUED_BYTES >> 20} MiB of batches wait for ${streamName(origin)}; newer ones are dropped until it takes them (the links resend)`);
        dropped = true;
        return;
      }
      dropped = false;
      const { first, last } = spanOf(batch);
      if (last > (highest.get(batch.org) ?? 0)) highest.set(batch.org, last);
      const data = encodeBatch(batch);
      queuedBytes += data.length;
      queue.push({ org: batch.org, first, last, data });
      pump();
    },
    published: (org) => highest.get(org) ?? 0,
    close() {
      closed = true;
      clearTimeout(retry);
      queue.length = 0;
      inFlight.length = 0;
      queuedBytes = 0;
    },
  };
}

/**
 * One replica region's transport: its probes and acknowledgements over core NATS, its batches through the
 * shared publisher. A batch that carries entries this link has sent before is a resend (something was lost
 * on the way): all of it is published again. Otherwise only the entries no other link has had published
 * yet go out; the rest are in the stream already, or on their way, and this region's replica reads them there.
 */
export function createOriginTransport(ready: () => Ready | undefined, whenReady: Promise<Ready>, publisher: Publisher, origin: string, region: string, warn: (m: string) => void): Transport {
  let listener: (ack: Ack) => void = () => {};
  let closed = false;
  let sub: Subscription | undefined;
  const sent = new Map<string, number>();
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
      if (closed) return;
      if (batch.entries.length === 0) {
        // A probe: dropped while the connection is not up yet, like anything on a cut link; the link asks again.
        ready()?.nc.publish(probeSubject(origin, region), encodeBatch(batch));
        return;
      }
      const { first, last } = spanOf(batch);
      const before = sent.get(batch.org) ?? 0;
      if (last > before) sent.set(batch.org, last);
      if (first <= before) return publisher.publish(batch);
      const published = publisher.published(batch.org);
      const entries = published < first ? batch.entries : batch.entries.filter((e) => e.offset > published);
      if (entries.length > 0) publisher.publish(entries === batch.entries ? batch : { ...batch, entries });
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
 * ConnectRegion over JetStream: one connection, one stream and one publisher for every replica region of
 * this origin. The service does not wait for them: local writes never depend on NATS. Until the connection
 * and the stream exist, batches wait in the publisher's queue (bounded; the links resend what it drops).
 */
export function connectJetStream(options: OriginOptions): { connect: ConnectRegion; close(): Promise<void> } {
  let current: Ready | undefined;
  let stopped = false;
  const whenReady = (async () => {
    const nc = await openNats({ natsUrl: options.natsUrl, pingMs: options.pingMs, name: `origin ${options.origin}`, ...(options.security ? { security: options.security } : {}), warn: options.warn });
    if (stopped) {
      await nc.close();
      throw new Error('stopped');
    }
    if (options.wal) serveSnapshots(nc, snapshotSubject(options.origin), `region ${options.origin}`, options.wal, options.warn);
    await ensureWalStream(nc, options.origin, options.retentionMs, options.warn, () => stopped, options.replicas ?? 1);
    current = { nc, js: jetstream(nc) };
    return current;
  })();
  whenReady.catch((error: unknown) => {
    if (!stopped) options.warn(`JetStream replication did not start: ${(error as Error).message}`);
  });
  const publisher = createPublisher(() => current, whenReady, options.origin, options.warn);
  return {
    connect: async (region) => ({ transport: createOriginTransport(() => current, whenReady, publisher, options.origin, region, options.warn), windowEntries: LINK_WINDOW_ENTRIES, close: async () => {} }),
    async close() {
      stopped = true;
      publisher.close();
      await current?.nc.drain();
    },
  };
}
