// Sealing of cloud connection credentials before they enter a command, so that the WAL, the snapshots and the
// replicas only hold them sealed when SERVICE_SECRETS_KEY is set. Each is bound to its organization and
// connection, so a sealed value copied to another connection does not open.
import type { StoredSecret } from '../domain/state.js';
import { ServiceError } from '../errors.js';
import { openBytes, sealBytes } from '../lib/seal.js';

export interface CredentialSealer {
  seal(org: string, connectionId: string, credentials: Record<string, unknown>): StoredSecret;
  open(org: string, connectionId: string, stored: StoredSecret): Record<string, unknown>;
}

const NONCE = 12;
const TAG = 16;
const boundTo = (org: string, connectionId: string) => `cloud:${org}:${connectionId}:credentials`;

/** Without a key the credentials stay plain (as SSO secrets do), and open with SERVICE_SECRETS_KEY_PREVIOUS too. */
export function createCredentialSealer(key: Buffer | undefined, previousKey?: Buffer): CredentialSealer {
  return {
    seal(org, connectionId, credentials) {
      const text = JSON.stringify(credentials);
      if (!key) return { plain: text };
      const s = sealBytes(key, boundTo(org, connectionId), Buffer.from(text, 'utf8'));
      return { sealed: 'aes-256-gcm', box: Buffer.concat([s.nonce, s.tag, s.data]).toString('base64url') };
    },
    open(org, connectionId, stored) {
      if ('plain' in stored) return JSON.parse(stored.plain) as Record<string, unknown>;
      const b = Buffer.from(stored.box, 'base64url');
      const sealed = { nonce: b.subarray(0, NONCE), tag: b.subarray(NONCE, NONCE + TAG), data: b.subarray(NONCE + TAG) };
      const name = boundTo(org, connectionId);
      const plain = (key && openBytes(key, name, sealed)) ?? (previousKey && openBytes(previousKey, name, sealed));
      if (!plain) {
        // The operator's configuration is at fault, not the request: a 500 that names no secret.
        throw new ServiceError('ERR_INTERNAL', 'internal error', { cause: new Error(`SERVICE_SECRETS_KEY does not open the credentials of cloud connection ${connectionId} in ${org}`) });
      }
      return JSON.parse(plain.toString('utf8')) as Record<string, unknown>;
    },
  };
}
