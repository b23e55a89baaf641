// The ES256 key set that signs webhook request bodies: kept in the WAL's metadata, separate from the identity
// token keys, and published at /organizations/webhooks/verification-jwks.
import { es256Key, generateEs256, type Es256Key, type PublicJwk } from '../lib/jws.js';
import type { MetaStore } from '../wal/sealed-meta.js';

/** the meta key the set is stored under */
export const WEBHOOK_KEYS_META = 'webhook_signing_keys';

interface StoredKey {
  pkcs8: Buffer;
  created: number;
}

export interface WebhookKeys {
  /** the key that signs new deliveries */
  current: Es256Key;
  jwks(): { keys: PublicJwk[] };
}

/** Loads the key set, creating its first key (durably) on a fresh data dir. */
export async function loadWebhookKeys(wal: MetaStore, nowMs: number): Promise<WebhookKeys> {
  let stored = wal.getMeta<StoredKey[]>(WEBHOOK_KEYS_META);
  if (!stored || stored.length === 0) {
    stored = [{ pkcs8: generateEs256(), created: nowMs }];
    await wal.putMeta(WEBHOOK_KEYS_META, stored);
  }
  const keys = stored.map((k) => es256Key(Buffer.from(k.pkcs8)));
  const document = { keys: keys.map((k) => k.publicJwk) };
  return { current: keys[keys.length - 1] as Es256Key, jwks: () => document };
}
