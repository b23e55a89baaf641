// The local LMDB environment and its named databases: WAL entries, snapshots, events, organizations, metadata,
// the webhook outbox's delivery positions and dead letters, the SSO sign-ins in flight and the tokens SSO providers issued.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';

export type WalKey = [org: string, offset: number];
export type WebhookKey = [org: string, webhook: string];
export type DeadLetterKey = [org: string, webhook: string, offset: number];

export interface Store {
  readonly root: RootDatabase;
  /** [org, offset] → framed record of one WAL entry. */
  readonly wal: Database<Buffer, WalKey>;
  /** org → framed snapshot record. */
  readonly snapshots: Database<Buffer, string>;
  /**
   * [org, offset] → event record (event-record.ts: the event and its chain link); written in the same
   * transaction as the entry that emitted it.
   */
  readonly events: Database<Buffer, WalKey>;
  /**
   * [org, event offset] → a 32-byte chain link kept apart from its event: the links of events written before
   * links moved into event records, links filled in for a data dir older than the chain, and the link pruning
   * keeps just below the oldest retained event (and the newest, whatever else goes), so the chain continues.
   */
  readonly chains: Database<Buffer, WalKey>;
  /** org → framed record {created_ms}; the list of organizations to recover at start. */
  readonly orgs: Database<Buffer, string>;
  /** small named values: the cursor secret, signing keys. */
  readonly meta: Database<Buffer, string>;
  /** [org, webhook] → framed record of the webhook's delivery position (the last event offset it is done with). */
  readonly deliveries: Database<Buffer, WebhookKey>;
  /** [org, webhook, event offset] → framed dead letter: an event delivery that ran out of attempts. */
  readonly deadLetters: Database<Buffer, DeadLetterKey>;
  /** state → framed record of an SSO sign-in in flight (sso/pending.ts): kept across restarts until it expires. */
  readonly ssoPending: Database<Buffer, string>;
  /** org US person US client_id (US: \u001f) → framed record of the tokens a person's SSO provider issued (sso/provider-tokens.ts), sealed. */
  readonly ssoTokens: Database<Buffer, string>;
  readonly durable: boolean;
  close(): Promise<void>;
}

export function openStore(dataDir: string, name: string, durable: boolean): Store {
  mkdirSync(dataDir, { recursive: true });
  const root = open({
    path: join(dataDir, `${name}.mdb`),
    maxDbs: 16,
    // Without overlapping sync, a commit's promise resolves only after LMDB has synced it to disk, so
    // "committed" means durable, and a commit costs one fsync. (With overlapping sync, each commit waited
    // for the previous flush and then its own: two fsyncs before a reply.)
    overlappingSync: false,
    noSync: !durable,
  });
  const sub = <K extends string | WalKey | WebhookKey | DeadLetterKey>(dbName: string) =>
    root.openDB<Buffer, K>({ name: dbName, encoding: 'binary' });
  return {
    root,
    wal: sub<WalKey>('wal'),
    snapshots: sub<string>('snapshots'),
    events: sub<WalKey>('events'),
    chains: sub<WalKey>('chains'),
    orgs: sub<string>('orgs'),
    meta: sub<string>('meta'),
    deliveries: sub<WebhookKey>('deliveries'),
    deadLetters: sub<DeadLetterKey>('dead_letters'),
    ssoPending: sub<string>('sso_pending'),
    ssoTokens: sub<string>('sso_tokens'),
    durable,
    close: () => root.close(),
  };
}
