// The region's commit stream and lease bucket on its JetStream cluster: names, the streams' settings and the
// message body. One message per batch of one organization, on the organization's subject, published by the
// process holding its lease with the subject's expected last sequence, so that a deposed writer's publish is
// refused by JetStream itself. The lease bucket is a KV bucket by JetStream's own layout (`KV_<bucket>`,
// `$KV.<bucket>.<key>`), so `nats kv` reads it.
import { RetentionPolicy, StorageType, DiscardPolicy, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { decodeRecord, encodeRecord } from '../../wal/codec.js';
import type { EncodedWrite } from '../../wal/log.js';
import { ensureStream } from '../jetstream/connection.js';

export const commitStreamName = (region: string) => `COMMITS_${region}`;
export const commitSubject = (region: string, org: string) => `commit.${region}.${org}`;
export const leaseBucket = (region: string) => `leases_${region}`;
export const leaseStreamName = (region: string) => `KV_${leaseBucket(region)}`;
export const leaseSubject = (region: string, org: string) => `$KV.${leaseBucket(region)}.${org}`;

/** One batch as the region's stream holds it; a fence (no writes) marks a new writer's start. */
export interface CommitMessage {
  /** the writing process (SERVICE_PROCESS_NAME) and its lease's epoch */
  writer: string;
  epoch: number;
  /** the organization's offset once the message is applied */
  head: number;
  writes: EncodedWrite[];
  newOrgs: string[];
}

export const encodeCommit = (m: CommitMessage): Uint8Array => encodeRecord(m);
export function decodeCommit(data: Uint8Array): CommitMessage {
  const m = decodeRecord<CommitMessage>(data);
  if (typeof m?.writer !== 'string' || !Array.isArray(m.writes) || typeof m.head !== 'number') throw new Error('not a commit message');
  // Buffers come back as Uint8Array views of the message: copied, the client's buffer is not ours to keep.
  for (const w of m.writes) {
    w.record = Buffer.from(w.record);
    for (const e of w.events) e.record = Buffer.from(e.record);
  }
  return m;
}

/** Creates (or updates) the region's commit stream and lease bucket, both with the cluster's copies. */
export async function ensureRegionStreams(jsm: JetStreamManager, region: string, replicas: number, retentionMs: number): Promise<void> {
  const commits: Partial<StreamConfig> & { name: string } = { name: commitStreamName(region), subjects: [`commit.${region}.>`], retention: RetentionPolicy.Limits, storage: StorageType.File, max_age: retentionMs * 1_000_000, num_replicas: replicas, duplicate_window: 120 * 1_000_000_000 };
  const leases: Partial<StreamConfig> & { name: string } = { name: leaseStreamName(region), subjects: [`$KV.${leaseBucket(region)}.>`], retention: RetentionPolicy.Limits, storage: StorageType.File, max_msgs_per_subject: 1, discard: DiscardPolicy.New, allow_rollup_hdrs: true, deny_delete: true, num_replicas: replicas };
  for (const config of [commits, leases]) await ensureStream(jsm, config);
}
