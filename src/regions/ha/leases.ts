// Per-organization write leases in the region's KV bucket: key = organization, value = the holding process, its
// public address and the lease's epoch; the KV revision (the message's stream sequence) is the compare-and-set
// token. A holder renews every SERVICE_LEASE_RENEW; a lease whose revision has not moved for SERVICE_LEASE_TTL, as
// seen by another process on its own clock from when it first saw that revision, is expired and may be taken.
// The holder counts its TTL from when it sent its last successful renewal, so it stops writing before anyone may
// take over; the commit stream's fencing covers whatever is in flight at that moment.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { leaseStreamName, leaseSubject } from './commit-stream.js';

export interface LeaseValue {
  holder: string;
  url: string;
  epoch: number;
}

export interface Lease extends LeaseValue {
  revision: number;
}

/** The compare-and-set failed: someone else wrote the key since the revision given. */
export class LeaseTaken extends Error {
  override name = 'LeaseTaken';
}

export interface LeaseBucket {
  /** The organization's lease as stored now, or undefined when it never had one. */
  read(org: string): Promise<Lease | undefined>;
  /** Writes the value if the key is still at `revision` (0: never written); resolves to the new revision. */
  write(org: string, value: LeaseValue, revision: number): Promise<number>;
}

const isWrongSequence = (error: unknown) => /wrong last sequence|10071/i.test(String((error as Error)?.message ?? error));

export function leaseBucket(js: JetStreamClient, jsm: JetStreamManager, region: string, timeoutMs: number): LeaseBucket {
  return {
    async read(org) {
      let m;
      try {
        m = await jsm.streams.getMessage(leaseStreamName(region), { last_by_subj: leaseSubject(region, org) });
      } catch (error) {
        if (/no message found|not found/i.test((error as Error).message)) return undefined;
        throw error;
      }
      if (!m) return undefined;
      const value = JSON.parse(Buffer.from(m.data).toString('utf8')) as LeaseValue;
      return { ...value, revision: m.seq };
    },
    async write(org, value, revision) {
      try {
        const ack = await js.publish(leaseSubject(region, org), JSON.stringify(value), { expect: { lastSubjectSequence: revision }, timeout: timeoutMs });
        return ack.seq;
      } catch (error) {
        if (isWrongSequence(error)) throw new LeaseTaken(`the lease of ${org} moved past revision ${revision}`);
        throw error;
      }
    },
  };
}

export { isWrongSequence };

/** One value of the region kept in the same bucket under a key of its own, written once with compare-and-set. */
export function regionValue(js: JetStreamClient, jsm: JetStreamManager, region: string, key: string, timeoutMs: number) {
  return {
    async read(): Promise<{ value: string; revision: number } | undefined> {
      let m;
      try {
        m = await jsm.streams.getMessage(leaseStreamName(region), { last_by_subj: leaseSubject(region, key) });
      } catch (error) {
        if (/no message found|not found/i.test((error as Error).message)) return undefined;
        throw error;
      }
      return m ? { value: Buffer.from(m.data).toString('utf8'), revision: m.seq } : undefined;
    },
    async write(value: string, revision: number): Promise<number> {
      try {
        return (await js.publish(leaseSubject(region, key), value, { expect: { lastSubjectSequence: revision }, timeout: timeoutMs })).seq;
      } catch (error) {
        if (isWrongSequence(error)) throw new LeaseTaken(`${key} moved past revision ${revision}`);
        throw error;
      }
    },
  };
}
