// A replica region's side of JetStream replication: a mirror of the origin's WAL stream in the region's
// own domain, a durable consumer on it that the replica owns, apply before acknowledge, and answers to the
// origin's probes. The replica's idempotent apply by offset makes redeliveries and resends harmless.
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerConfig, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Replica } from '../replica.js';
import { createCatchUp } from './catch-up.js';
import { retry } from './connection.js';
import { ackSubject, consumerName, decodeBatch, encodeAck, probeSubject, streamName } from './wire.js';

export interface ReplicaSideOptions {
  nc: NatsConnection;
  origin: string;
  region: string;
  replica: Replica;
  retentionMs: number;
  /** copies of the mirror the region's cluster keeps (1 or 3) */
  replicas?: number;
  pullExpiresMs: number;
  warn(message: string): void;
}

export interface ReplicaLinkView {
  name: string;
  state: 'streaming' | 'catching_up' | 'cut';
  lag_entries: number;
  /** messages the origin's stream holds that the mirror has not copied yet */
  mirror_lag: number;
  /** ms since the mirror last heard from the origin's domain */
  mirror_active_ms: number;
  /** the consumer's pending counts: stored in the mirror and not delivered, delivered and not acknowledged */
  num_pending: number;
  num_ack_pending: number;
}

export interface ReplicaSide {
  view(): Promise<ReplicaLinkView>;
  stop(): Promise<void>;
}

/** A mirror in this region's domain keeps the origin's sequence numbers and outlives any partition shorter than the retention. */
async function ensureMirror(jsm: JetStreamManager, origin: string, retentionMs: number, warn: (m: string) => void, stopped: () => boolean = () => false, replicas = 1): Promise<void> {
  const name = streamName(origin);
  await retry(`mirror ${name}`, async () => {
    try {
      await jsm.streams.info(name);
    } catch (error) {
      if (!/not found/i.test((error as Error).message)) throw error;
      await jsm.streams.add({ name, mirror: { name, external: { api: `$JS.${origin}.API`, deliver: '' } }, max_age: retentionMs * 1_000_000, num_replicas: replicas } as Parameters<JetStreamManager['streams']['add']>[0]);
    }
  }, warn, stopped);
}

/**
 * The replica owns its cursor: a consumer left with messages in flight by a killed process is re-created
 * just past its acknowledged floor (acknowledged = durably applied here), instead of letting the dead
 * instance's messages come back after ack_wait behind newer ones (a storm of redeliveries, SCALE.md §5.5).
 */
async function ensureConsumer(jsm: JetStreamManager, origin: string, region: string, warn: (m: string) => void, stopped: () => boolean = () => false): Promise<void> {
  const stream = streamName(origin);
  const durable = consumerName(region);
  const base: Partial<ConsumerConfig> = { durable_name: durable, ack_policy: AckPolicy.Explicit, max_ack_pending: 4096, ack_wait: 30_000_000_000 };
  await retry(`consumer ${durable}`, async () => {
    let info;
    try {
      info = await jsm.consumers.info(stream, durable);
    } catch (error) {
      if (!/not found/i.test((error as Error).message)) throw error;
    }
    if (info && info.num_ack_pending === 0) return;
    if (info) {
      const from = info.ack_floor.stream_seq + 1;
      warn(`consumer ${durable} had ${info.num_ack_pending} messages in flight; re-created at stream sequence ${from}`);
      await jsm.consumers.delete(stream, durable);
      await jsm.consumers.add(stream, { ...base, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from });
    } else {
      await jsm.consumers.add(stream, { ...base, deliver_policy: DeliverPolicy.All });
    }
  }, warn, stopped);
}

export async function startReplicaSide(options: ReplicaSideOptions): Promise<ReplicaSide> {
  const { nc, origin, region, replica, warn } = options;
  const jsm = await retry('jetstream manager', () => jetstreamManager(nc), warn);
  await ensureMirror(jsm, origin, options.retentionMs, warn, () => false, options.replicas ?? 1);
  await ensureConsumer(jsm, origin, region, warn);
  const acks = ackSubject(origin, region);
  let stopped = false;

  // Probes: where does this replica stand? Answered with what is durably applied, nothing in flight.
  const probes: Subscription = nc.subscribe(probeSubject(origin, region), {
    callback: (error, msg) => {
      if (error || stopped) return;
      try {
        const b = decodeBatch(msg.data);
        nc.publish(acks, encodeAck({ org: b.org, session: b.session, offset: replica.applied(b.org) }));
      } catch (e) {
        warn(`unreadable probe (${(e as Error).message})`);
      }
    },
  });

  const catchUp = createCatchUp({ nc, jsm, origin, region, replica, warn });
  const js = jetstream(nc);
  let current: { stop(): void; closed(): Promise<unknown> } | undefined;
  let setUpAgain = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        if (setUpAgain) {
          await ensureMirror(jsm, origin, options.retentionMs, warn, () => stopped, options.replicas ?? 1);
          await ensureConsumer(jsm, origin, region, warn, () => stopped);
          setUpAgain = false;
        }
        const consumer = await js.consumers.get(streamName(origin), consumerName(region));
        const messages = await consumer.consume({ expires: options.pullExpiresMs, max_messages: 1024 });
        current = messages;
        // The client keeps pulling from a consumer that is gone (deleted, or lost with its server's store) and
        // sits idle when its server stops answering; its README's advice for both is to stop and set up again.
        void (async () => {
          for await (const s of messages.status()) {
            const lost = s.type === 'consumer_deleted' || s.type === 'stream_not_found' || (s.type === 'consumer_not_found' && s.count >= 2) || (s.type === 'heartbeats_missed' && s.count >= 2);
            if (!lost || stopped) continue;
            warn(`consuming ${streamName(origin)}: ${s.type}; setting the mirror and the consumer up again`);
            setUpAgain = true;
            messages.stop();
            return;
          }
        })();
        for await (const m of messages) {
          let batch;
          try {
            batch = decodeBatch(m.data);
          } catch (e) {
            warn(`stream ${streamName(origin)} seq ${m.seq}: not a WAL batch (${(e as Error).message}); dropped`);
            m.term();
            continue;
          }
          // Not awaited: batches that arrive together share one transaction and one flush. The replica
          // commits in arrival order, so acknowledgements go out in stream order, each after its flush.
          catchUp.receive(batch).then(
            (ack) => {
              m.ack();
              nc.publish(acks, encodeAck(ack));
            },
            () => m.nak(1000),
          );
        }
      } catch (error) {
        if (!stopped) warn(`consuming ${streamName(origin)} failed (${(error as Error).message}); starting again`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  })();

  return {
    async view() {
      const [si, ci] = await Promise.all([jsm.streams.info(streamName(origin)), jsm.consumers.info(streamName(origin), consumerName(region))]);
      const mirrorLag = si.mirror?.lag ?? 0;
      const activeMs = si.mirror && si.mirror.active >= 0 ? Math.round(si.mirror.active / 1e6) : -1;
      const lag = mirrorLag + ci.num_pending + ci.num_ack_pending;
      const state = activeMs < 0 || activeMs > 3 * options.pullExpiresMs ? 'cut' : lag > 0 ? 'catching_up' : 'streaming';
      return { name: origin, state, lag_entries: lag, mirror_lag: mirrorLag, mirror_active_ms: activeMs, num_pending: ci.num_pending, num_ack_pending: ci.num_ack_pending };
    },
    async stop() {
      stopped = true;
      probes.unsubscribe();
      current?.stop();
      await loop;
    },
  };
}
