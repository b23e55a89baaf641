// A replica region's catch-up past the stream's retention: when the stream no longer holds an
// organization's next entry, the origin's snapshot of it is fetched and installed, and the stream goes on
// from there. The replica's idempotent apply by offset skips what the snapshot already covers.
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Replica } from '../replica.js';
import type { Ack, Batch } from '../transport.js';
import { nextBySubject } from './connection.js';
import { fetchSnapshot, snapshotSubject } from './snapshot-source.js';
import { decodeBatch, streamName, walSubject } from './wire.js';

export interface CatchUpOptions {
  nc: NatsConnection;
  jsm: JetStreamManager;
  origin: string;
  region: string;
  replica: Replica;
  warn(message: string): void;
  /** how long one part of a snapshot may take to arrive */
  requestTimeoutMs?: number;
}

export interface CatchUp {
  /** Applies a batch from the stream; a batch past a gap the stream can no longer fill waits for a snapshot first. */
  receive(batch: Batch): Promise<Ack>;
}

export function createCatchUp(options: CatchUpOptions): CatchUp {
  const { nc, jsm, origin, replica, warn } = options;
  const timeout = options.requestTimeoutMs ?? 10_000;
  /** one catch-up per organization at a time: every batch behind the same gap waits for the same one */
  const running = new Map<string, Promise<void>>();

  /** The first offset the stream still holds for the organization (its oldest retained message), if any. */
  const firstRetained = async (org: string): Promise<number | undefined> => {
    const m = await nextBySubject(jsm, streamName(origin), walSubject(origin, org), 1);
    // A server that ignored next_by_subj would answer with whatever sits at seq 1: that says nothing here.
    if (m && m.subject !== walSubject(origin, org)) throw new Error(`${streamName(origin)} answered a message of ${m.subject} for ${walSubject(origin, org)}`);
    return m ? decodeBatch(m.data).entries[0]?.offset : undefined;
  };

  const catchUp = async (org: string): Promise<void> => {
    const applied = replica.applied(org);
    const retained = await firstRetained(org);
    // Still in the stream (a resend in flight, or the consumer not there yet): the stream fills the gap.
    if (retained !== undefined && retained <= applied + 1) return;
    const { snapshot } = await fetchSnapshot(nc, snapshotSubject(origin), org, timeout);
    const floor = await replica.install(org, snapshot);
    warn(`replica ${options.region}: ${org} was at ${applied}, before what ${streamName(origin)} retains (${retained ?? 'nothing'}); installed the origin's snapshot at ${snapshot.offset}, now at ${floor}`);
  };

  const behind = (org: string): Promise<void> => {
    let run = running.get(org);
    if (!run) {
      run = catchUp(org)
        .catch((error: unknown) => warn(`replica ${options.region}: catching ${org} up from a snapshot failed (${(error as Error).message}); the stream or a later try fills the gap`))
        .finally(() => running.delete(org));
      running.set(org, run);
    }
    return run;
  };

  return {
    async receive(batch) {
      const ack = await replica.receive(batch);
      const first = batch.entries[0]?.offset;
      if (first === undefined || first <= ack.offset + 1) return ack;
      await behind(batch.org);
      return replica.receive(batch);
    },
  };
}
