// Sealing of SSO credential secrets (client secrets, Apple private keys) before they enter a command, so that
// the WAL, the snapshots and the replicas only ever hold them sealed when SERVICE_SECRETS_KEY is set. Each is
// bound to its organization, client_id and field, so a sealed value copied elsewhere does not open.
import type { StoredSecret } from '../domain/state.js';
import { ServiceError } from '../errors.js';
import { openBytes, packSealed as pack, sealBytes, unpackSealed as unpack } from '../lib/seal.js';

/** pending_flow: an SSO sign-in's nonce and PKCE verifier in flight (bound to its state); provider_token: a token a provider issued (bound to person, credential and type) */
export type SecretField = 'client_secret' | 'private_key' | 'pending_flow' | 'provider_token';

export interface SecretSealer {
  /** sealed under the current key when one is set, plain otherwise */
  seal(org: string, clientId: string, field: SecretField, value: string): StoredSecret;
  /** the plain secret; a sealed one opens with the current key or, failing that, the previous one */
  open(org: string, clientId: string, field: SecretField, stored: StoredSecret): string;
}

/** The additional data a secret is bound to. */
const boundTo = (org: string, clientId: string, field: SecretField) => `sso:${org}:${clientId}:${field}`;

/**
 * Values written before a key was set stay plain, and values sealed with SERVICE_SECRETS_KEY_PREVIOUS keep
 * opening with it, until the secret is set again (the log cannot be rewritten; see docs/operations.md, Secrets at rest).
 */
export function createSecretSealer(key: Buffer | undefined, previousKey?: Buffer): SecretSealer {
  return {
    seal(org, clientId, field, value) {
      if (!key) return { plain: value };
      return { sealed: 'aes-256-gcm', box: pack(sealBytes(key, boundTo(org, clientId, field), Buffer.from(value, 'utf8'))) };
    },
    open(org, clientId, field, stored) {
      if ('plain' in stored) return stored.plain;
      const name = boundTo(org, clientId, field);
      const sealed = unpack(stored.box);
      const plain = (key && openBytes(key, name, sealed)) ?? (previousKey && openBytes(previousKey, name, sealed));
      if (!plain) {
        // The operator's configuration, not the caller's request, is at fault: a 500 that names no secret.
        throw new ServiceError('ERR_INTERNAL', 'internal error', { cause: new Error(`SERVICE_SECRETS_KEY does not open the ${field} of OIDC credential ${clientId} in ${org}`) });
      }
      return plain.toString('utf8');
    },
  };
}
