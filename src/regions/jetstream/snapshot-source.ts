// Snapshot shipping: a reader that fell behind past a stream's retention (a replica region behind the origin's WAL
// stream, a standby behind its region's commit stream) asks a process that holds the organization for its state
// over core NATS request/reply (no object store in nats-server 2.9's clients here), and gets the snapshot format
// the WAL stores (src/domain/snapshot.ts), at the offset it was taken, in parts.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { applyEntry } from '../../domain/apply.js';
import type { Change } from '../../domain/changes.js';
import { fromSnapshot, toSnapshot } from '../../domain/snapshot.js';
import type { OrgState } from '../../domain/state.js';
import type { StoredRecord } from '../../lib/versions.js';
import { decodeRecord, encodeRecord } from '../../wal/codec.js';
import type { Snapshot, Wal } from '../../wal/log.js';

/** One subject per origin; the organization and the part are in the request. */
export const snapshotSubject = (origin: string) => `snapshot.${origin}`;
/**
 * One subject per process of a region: its standbys ask the writer of an organization. The process's name (a host
 * name and port by default) is one token, each character a subject token cannot hold written `~<hex>~`.
 */
export const processSnapshotSubject = (region: string, process: string) => `snapshot.${region}.${process.replace(/[^A-Za-z0-9_-]/g, (c) => `~${c.charCodeAt(0).toString(16)}~`)}`;

/** Well under nats-server's default max_payload (1 MiB) once base64 adds its third. */
export const SNAPSHOT_PART_BYTES = 512 * 1024;

export interface SnapshotRequest {
  org: string;
  part: number;
  /** parts after the first name the snapshot they belong to */
  offset?: number;
  /**
   * Part 0 only: the asker holds the organization through this entry. A server whose log holds nothing past it
   * answers with no parts at that offset instead of taking a snapshot.
   */
  have?: number;
}

/**
 * `chain` (part 0, hex): the stored chain link of the snapshot's last event, so that a process that installs it and
 * then writes the organization goes on with the event chain instead of restarting it.
 */
export type SnapshotReply = { offset: number; parts: number; part: number; data: string; chain?: string } | { error: string };

/** A fetched snapshot and the chain link of its last event, when the server had one. */
export interface ShippedSnapshot {
  snapshot: Snapshot<StoredRecord>;
  chain?: Buffer;
}

/** A snapshot being fetched part by part is kept this long after it was taken. */
const KEEP_MS = 60_000;

const PAGE = 1024;

/**
 * The organization's state at its last committed entry: its snapshot, then the entries after it. Unlike the
 * start-up recovery, this only reads: a gap or a record that does not verify fails the request instead of
 * cutting the log under the running organization.
 */
function stateOf(wal: Wal, org: string): OrgState | undefined {
  const base = wal.loadSnapshot<StoredRecord>(org);
  let state = base ? fromSnapshot(base.state, true) : undefined;
  let at = base?.offset ?? 0;
  for (;;) {
    const page = wal.entries<Change>(org, at, PAGE);
    for (const { offset, entry } of page) {
      if (offset !== at + 1) throw new Error(`entry ${at + 1} of ${org} is missing from the log`);
      state = applyEntry(state, { offset, changes: entry.changes, ev: entry.ev });
      at = offset;
    }
    if (page.length < PAGE) return state;
  }
}

/**
 * Part 0 takes a fresh snapshot of the organization as its WAL holds it (every committed entry, so at an
 * offset at or past everything the link has published); later parts come from that same one. `where` names
 * the server in its errors ("region europe", "process a of region europe").
 */
export function serveSnapshots(nc: NatsConnection, subject: string, where: string, wal: Wal, warn: (m: string) => void): Subscription {
  const taken = new Map<string, { offset: number; parts: Buffer[]; chain: Buffer | undefined; at: number }>();
  const take = async (org: string) => {
    const state = stateOf(wal, org);
    if (!state) return undefined;
    const snapshot: Snapshot = { offset: state.offset, event_offset: state.event_offset, state: toSnapshot(state) };
    const bytes = encodeRecord(snapshot, 'records');
    const parts: Buffer[] = [];
    for (let at = 0; at < bytes.length || parts.length === 0; at += SNAPSHOT_PART_BYTES) parts.push(bytes.subarray(at, at + SNAPSHOT_PART_BYTES));
    const entry = { offset: state.offset, parts, chain: state.event_offset > 0 ? wal.chainAt(org, state.event_offset) : undefined, at: Date.now() };
    taken.set(`${org}@${state.offset}`, entry);
    return entry;
  };
  // Past `have`: a snapshot, or an entry, after it (compaction may have left only the snapshot).
  const ahead = (org: string, have: number) => wal.snapshotOffset(org) > have || wal.records(org, have, 1).length > 0;
  const answer = async (request: SnapshotRequest): Promise<SnapshotReply> => {
    const now = Date.now();
    for (const [key, t] of taken) if (now - t.at > KEEP_MS) taken.delete(key);
    if (request.part === 0 && request.have !== undefined && !ahead(request.org, request.have)) return { offset: request.have, parts: 0, part: 0, data: '' };
    // Keyed by offset too: replicas fetching at once each finish the snapshot they started.
    const t = request.part === 0 ? await take(request.org) : taken.get(`${request.org}@${request.offset}`);
    if (!t) return { error: request.part === 0 ? `organization ${request.org} is not in ${where}` : `snapshot of ${request.org} at ${request.offset} expired; start again from part 0` };
    const data = t.parts[request.part];
    if (!data) return { error: `snapshot of ${request.org} has ${t.parts.length} parts, not ${request.part + 1}` };
    return { offset: t.offset, parts: t.parts.length, part: request.part, data: data.toString('base64'), ...(request.part === 0 && t.chain ? { chain: t.chain.toString('hex') } : {}) };
  };
  return nc.subscribe(subject, {
    callback: (error, msg) => {
      if (error) return;
      let request: SnapshotRequest;
      try {
        request = JSON.parse(Buffer.from(msg.data).toString('utf8')) as SnapshotRequest;
        if (typeof request?.org !== 'string' || !Number.isSafeInteger(request.part) || request.part < 0 || (request.have !== undefined && !Number.isSafeInteger(request.have))) throw new Error('not a snapshot request');
      } catch (e) {
        msg.respond(JSON.stringify({ error: (e as Error).message }));
        return;
      }
      answer(request).then(
        (reply) => msg.respond(JSON.stringify(reply)),
        (e: unknown) => {
          warn(`snapshot of ${request.org} for ${subject} failed: ${(e as Error).message}`);
          msg.respond(JSON.stringify({ error: `${where} could not take the snapshot` }));
        },
      );
    },
  });
}

/**
 * Fetches an organization's snapshot part by part from the server on `subject`; checks it is the one announced.
 * With `have`, resolves to undefined when the server holds nothing past that entry.
 */
export async function fetchSnapshot(nc: NatsConnection, subject: string, org: string, timeoutMs: number): Promise<ShippedSnapshot>;
export async function fetchSnapshot(nc: NatsConnection, subject: string, org: string, timeoutMs: number, have: number): Promise<ShippedSnapshot | undefined>;
export async function fetchSnapshot(nc: NatsConnection, subject: string, org: string, timeoutMs: number, have?: number): Promise<ShippedSnapshot | undefined> {
  const request = async (body: SnapshotRequest): Promise<Extract<SnapshotReply, { offset: number }>> => {
    const msg = await nc.request(subject, JSON.stringify(body), { timeout: timeoutMs });
    const reply = JSON.parse(Buffer.from(msg.data).toString('utf8')) as SnapshotReply;
    if ('error' in reply) throw new Error(reply.error);
    return reply;
  };
  const first = await request({ org, part: 0, ...(have === undefined ? {} : { have }) });
  if (first.parts === 0) return undefined;
  const parts = [Buffer.from(first.data, 'base64')];
  for (let part = 1; part < first.parts; part++) parts.push(Buffer.from((await request({ org, part, offset: first.offset })).data, 'base64'));
  const snapshot = decodeRecord<Snapshot<StoredRecord>>(Buffer.concat(parts));
  if (snapshot.offset !== first.offset) throw new Error(`snapshot of ${org} claims offset ${snapshot.offset}, shipped as ${first.offset}`);
  return { snapshot, ...(first.chain ? { chain: Buffer.from(first.chain, 'hex') } : {}) };
}
