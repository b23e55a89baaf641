// What travels over NATS between an origin and its replica regions: the subjects and the message bodies.
import type { Ack, Batch } from '../transport.js';

/** The origin's WAL stream, one per origin region; every replica region mirrors it into its own domain. */
export const streamName = (origin: string) => `WAL_${origin}`;
/** One message per batch of one organization, as the link ships it. */
export const walSubject = (origin: string, org: string) => `wal.${origin}.${org}`;
export const walSubjects = (origin: string) => `wal.${origin}.>`;
/** Core NATS, not stored: the link's probes (where does the replica stand?) and the replica's acknowledgements. */
export const probeSubject = (origin: string, region: string) => `probe.${origin}.${region}`;
export const ackSubject = (origin: string, region: string) => `ack.${origin}.${region}`;
/** The replica region's durable consumer on its mirror of the origin's stream. */
export const consumerName = (region: string) => `apply_${region}`;

/**
 * Dedupes a batch published twice with the same boundaries (a publish retried after a lost PubAck). A
 * resend with other boundaries is stored again; the replica's apply by offset skips what it has.
 */
export const msgId = (batch: Batch) => {
  const first = batch.entries[0]?.offset ?? 0;
  const last = batch.entries[batch.entries.length - 1]?.offset ?? 0;
  return `${batch.org}:${first}-${last}`;
};

// JSON with base64 records: msgpackr belongs to the WAL, and a record is checksummed inside anyway.
const json = (value: unknown) => Buffer.from(JSON.stringify(value));

export const encodeBatch = (batch: Batch): Uint8Array => json({ org: batch.org, session: batch.session, entries: batch.entries.map((e) => ({ offset: e.offset, record: e.record.toString('base64') })) });
export function decodeBatch(data: Uint8Array): Batch {
  const b = JSON.parse(Buffer.from(data).toString('utf8')) as { org: unknown; session: unknown; entries: Array<{ offset: number; record: string }> };
  if (typeof b?.org !== 'string' || typeof b.session !== 'number' || !Array.isArray(b.entries)) throw new Error('not a WAL batch');
  return { org: b.org, session: b.session, entries: b.entries.map((e) => ({ offset: Number(e.offset), record: Buffer.from(String(e.record), 'base64') })) };
}

export const encodeAck = (ack: Ack): Uint8Array => json(ack);
export function decodeAck(data: Uint8Array): Ack {
  const a = JSON.parse(Buffer.from(data).toString('utf8')) as Ack;
  if (typeof a?.org !== 'string' || typeof a.session !== 'number' || typeof a.offset !== 'number') throw new Error('not an acknowledgement');
  return a;
}
