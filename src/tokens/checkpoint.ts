// Event-chain checkpoints: a compact JWS by the current identity-token key over an organization's event head
// and its chain link, verifiable against /.well-known/jwks.json; issued on request and, periodically, kept in
// the meta store for offline verification (npm run verify-events) to compare against.
import { CompactSign, decodeJwt, decodeProtectedHeader } from 'jose';
import { ZERO_CHAIN } from '../events/chain.js';
import type { Clock } from '../lib/clock.js';
import type { KeyRing } from './keys.js';
import { periodic } from '../lib/periodic.js';

export const CHECKPOINT_TYP = 'event-checkpoint+jwt';

export interface CheckpointClaims {
  organization_id: string;
  /** the last durable event offset (0 before the first event) */
  offset: number;
  /** lowercase hex of that event's chain link (32 zero bytes at offset 0) */
  chain: string;
  /** RFC 3339 UTC */
  issued_at: string;
}

export interface CheckpointDeps {
  keys: Pick<KeyRing, 'current'>;
  clock: Pick<Clock, 'nowMs'>;
  /** the organization's last durable event offset */
  head(org: string): number;
  chainAt(org: string, offset: number): Buffer | undefined;
  organizations(): Iterable<string>;
  meta: { getMeta<T>(key: string): T | undefined; putMeta(key: string, value: unknown): Promise<void> };
  warn(message: string): void;
}

export interface Checkpoints {
  issue(org: string): Promise<string>;
  /** Signs and stores a checkpoint of every organization whose head moved since its last stored one. */
  emit(): Promise<number>;
  start(intervalMs: number): void;
  stop(): Promise<void>;
}

/** The meta key under which the latest periodic checkpoint of an organization is kept. */
export const checkpointMetaKey = (org: string): string => `event_checkpoint:${org}`;

export function createCheckpoints(deps: CheckpointDeps): Checkpoints {

  function claims(org: string): CheckpointClaims {
    const offset = deps.head(org);
    const link = offset === 0 ? ZERO_CHAIN : deps.chainAt(org, offset);
    if (!link) throw new Error(`no chain link stored for event ${offset} of ${org}`);
    return { organization_id: org, offset, chain: link.toString('hex'), issued_at: new Date(deps.clock.nowMs()).toISOString() };
  }

  async function issue(org: string): Promise<string> {
    const key = deps.keys.current();
    return new CompactSign(new TextEncoder().encode(JSON.stringify(claims(org))))
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: CHECKPOINT_TYP })
      .sign(key.privateKey);
  }

  async function pass(): Promise<number> {
    let stored = 0;
    for (const org of [...deps.organizations()]) {
      try {
        const last = deps.meta.getMeta<{ offset: number }>(checkpointMetaKey(org));
        if (last !== undefined && last.offset === deps.head(org)) continue;
        const checkpoint = await issue(org);
        await deps.meta.putMeta(checkpointMetaKey(org), { offset: decodeCheckpoint(checkpoint).offset, checkpoint });
        stored++;
      } catch (error) {
        deps.warn(`checkpoint of the event chain of ${org} failed: ${String(error)}`);
      }
    }
    return stored;
  }

  const job = periodic(pass);
  return { issue, emit: job.run, start: job.start, stop: job.stop };
}

/** The claims of a checkpoint, unverified (offline verification compares them with the recomputed chain). */
export function decodeCheckpoint(checkpoint: string): CheckpointClaims {
  if (decodeProtectedHeader(checkpoint).typ !== CHECKPOINT_TYP) throw new Error(`not an event checkpoint (typ must be ${CHECKPOINT_TYP})`);
  return decodeJwt(checkpoint) as unknown as CheckpointClaims;
}
