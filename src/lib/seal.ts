// AES-256-GCM sealing of a value under SERVICE_SECRETS_KEY, bound to a name (additional data), so that a
// sealed value moved under another name does not open. Used for the meta secrets and the stored SSO secrets.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface SealedBytes {
  nonce: Buffer;
  tag: Buffer;
  data: Buffer;
}

/** Seals with a fresh random nonce: the same value sealed twice gives two different boxes. */
export function sealBytes(key: Buffer, name: string, plain: Buffer): SealedBytes {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce).setAAD(Buffer.from(name));
  const data = Buffer.concat([cipher.update(plain), cipher.final()]);
  return { nonce, tag: cipher.getAuthTag(), data };
}

/** The plain bytes, or undefined when this key (or name) is not the one the value was sealed with. */
export function openBytes(key: Buffer, name: string, sealed: SealedBytes): Buffer | undefined {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.nonce)).setAAD(Buffer.from(name)).setAuthTag(Buffer.from(sealed.tag));
  try {
    return Buffer.concat([decipher.update(Buffer.from(sealed.data)), decipher.final()]);
  } catch {
    return undefined;
  }
}

const NONCE = 12;
const TAG = 16;

/** A sealed value as one base64url string: nonce, tag, then the data. */
export function packSealed(s: SealedBytes): string {
  return Buffer.concat([s.nonce, s.tag, s.data]).toString('base64url');
}

export function unpackSealed(box: string): SealedBytes {
  const b = Buffer.from(box, 'base64url');
  return { nonce: b.subarray(0, NONCE), tag: b.subarray(NONCE, NONCE + TAG), data: b.subarray(NONCE + TAG) };
}
