// How batches of WAL records travel to a replica region and how its acknowledgements come back.
// The links and the consistency waits depend on this interface only, never on how a batch is carried.

/** One WAL entry as the local log framed it: the replica verifies the checksum before applying it. */
export interface ShippedEntry {
  offset: number;
  record: Buffer;
}

/**
 * Consecutive entries of one organization, in WAL order. A batch with no entries is a probe: the
 * replica answers it with its applied offset, which is where shipping resumes.
 */
export interface Batch {
  org: string;
  /** the link's session; a new one starts whenever the link (re)connects */
  session: number;
  entries: ShippedEntry[];
}

/** The replica's applied offset of an organization, sent only after the entries up to it are durable there. */
export interface Ack {
  org: string;
  session: number;
  offset: number;
}

/** The receiving end: a replica region's store. */
export interface ReplicaEndpoint {
  receive(batch: Batch): Promise<Ack>;
}

export interface Transport {
  /**
   * Sends a batch. Batches of one organization arrive in the order sent, or not at all: delivery is not
   * guaranteed (a cut link drops what is in flight), so the sender resends from the last acknowledgement.
   */
  send(batch: Batch): void;
  /** Registers the receiver of acknowledgements; one per transport. */
  onAck(listener: (ack: Ack) => void): void;
  /** Drops everything in flight; later sends are ignored. */
  close(): void;
}

/** What fault injection may change on a link. */
export interface LinkConditions {
  up: boolean;
  /** one-way latency, ms */
  latencyMs: number;
  /** extra one-way delay, uniform in [0, jitterMs] */
  jitterMs: number;
}

/**
 * Fault injection: a port of its own, since only a simulated network can be told to misbehave. A real
 * transport has none, and the link never depends on it: it measures its round trips itself.
 */
export interface FaultInjection {
  conditions(): LinkConditions;
  /** Cutting drops what is in flight both ways and ignores sends until the link is up again. */
  setConditions(change: Partial<LinkConditions>): LinkConditions;
}
