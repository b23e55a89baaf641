// The service's secrets in the meta store (identity-token keys, webhook signing keys, the cursor secret),
// sealed with AES-256-GCM under SERVICE_SECRETS_KEY when one is set, so that a copy of the data dir alone
// does not give away the keys that sign tokens. Each value is sealed with its own random nonce and bound to
// its meta key (additional data), so a sealed value moved under another name does not open.
//
// Without a key, values are stored as before. Given a key, plain values found at start are sealed in place;
// sealed values refuse to load without the key, or with another one, so the service stops at start instead
// of minting with a new key set that no relying party knows. To change the key, start once with the new one
// and the old one as the previous key: what opens only with the previous key is sealed again with the new.
import { ConfigError } from '../config.js';
import { openBytes, sealBytes } from '../lib/seal.js';
import { decodeRecord, encodeRecord } from './codec.js';

export interface MetaStore {
  getMeta<T>(key: string): T | undefined;
  putMeta(key: string, value: unknown): Promise<void>;
}

interface Sealed {
  sealed: 'aes-256-gcm';
  nonce: Buffer;
  tag: Buffer;
  data: Buffer;
}

const isSealed = (v: unknown): v is Sealed => typeof v === 'object' && v !== null && (v as Sealed).sealed === 'aes-256-gcm';

function seal(secretsKey: Buffer, name: string, value: unknown): Sealed {
  return { sealed: 'aes-256-gcm', ...sealBytes(secretsKey, name, encodeRecord(value)) };
}

function unseal<T>(secretsKey: Buffer, name: string, sealed: Sealed): T {
  const plain = openBytes(secretsKey, name, sealed);
  if (!plain) throw new ConfigError(`SERVICE_SECRETS_KEY does not open the stored ${name}: it is not the key they were sealed with`);
  return decodeRecord<T>(plain);
}

/**
 * The meta store for the named secrets, sealing with `secretsKey` when given. Call sealStored() at start:
 * it seals with `secretsKey` what an earlier start stored in the clear or sealed with `previousKey`, checks
 * that every sealed secret opens, and returns the names it sealed.
 */
export function sealedMeta(meta: MetaStore, secretsKey: Buffer | undefined, previousKey?: Buffer): MetaStore & { sealStored(names: readonly string[]): Promise<string[]> } {
  /** The plain value, and whether it was sealed with the key now in use. */
  const read = <T>(name: string): { value: T | undefined; current: boolean } => {
    const raw = meta.getMeta<unknown>(name);
    if (!isSealed(raw)) return { value: raw as T | undefined, current: secretsKey === undefined };
    if (!secretsKey) throw new ConfigError(`the stored ${name} are sealed: set SERVICE_SECRETS_KEY to the key they were sealed with`);
    try {
      return { value: unseal<T>(secretsKey, name, raw), current: true };
    } catch (error) {
      if (!previousKey) throw error;
      return { value: unseal<T>(previousKey, name, raw), current: false };
    }
  };
  const putMeta = (name: string, value: unknown) => meta.putMeta(name, secretsKey ? seal(secretsKey, name, value) : value);
  return {
    getMeta: <T>(name: string) => read<T>(name).value,
    putMeta,
    async sealStored(names) {
      const sealedNow: string[] = [];
      for (const name of names) {
        // Without a key every value reads as current: plain ones are, and sealed ones throw.
        const { value, current } = read(name);
        if (value === undefined || current) continue;
        await putMeta(name, value);
        sealedNow.push(name);
      }
      return sealedNow;
    },
  };
}
