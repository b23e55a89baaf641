// Password hashing with scrypt (memory-hard), on libuv's thread pool so the event loop keeps serving.
// Hashes are self-describing (scrypt$logN$r$p$salt$hash), so the cost can rise later without a migration;
// imported hashes of other formats (password-formats.ts) verify too, and are replaced by this form at the
// first sign-in that proves the password.
import { randomBytes } from 'node:crypto';
import { badRequest } from '../errors.js';
import { HashRefused, parseHash, scryptKey, verifyParsed, type ParsedHash } from './password-formats.js';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

const LOG_N = 15;
const R = 8;
const P = 1;
const SALT_BYTES = 16;
/** The prefix of a hash in the service's current form: anything else is re-hashed at its next successful check. */
const CURRENT = `scrypt$${LOG_N}$${R}$${P}$`;

export function checkPasswordPolicy(password: string, field = 'password'): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) throw badRequest(`${field}: must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
}

function parsed(stored: string): ParsedHash | undefined {
  try {
    return parseHash(stored);
  } catch (error) {
    if (error instanceof HashRefused) return undefined;
    throw error;
  }
}

/**
 * A hash given to import (POST /persons/{id}/credentials), checked as verify() will read it: 400 naming the
 * format and what is wrong with it, a cost above its ceiling included.
 */
export function checkImportedHash(stored: string, field: string): void {
  try {
    parseHash(stored);
  } catch (error) {
    if (error instanceof HashRefused) throw badRequest(`${field}: ${error.message}`);
    throw error;
  }
}

/** Whether a stored hash is other than the service's current form (imported, or an older cost): re-hash it. */
export const needsRehash = (stored: string): boolean => !stored.startsWith(CURRENT);

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /**
   * Whether password matches stored. With nothing stored (unknown handle, no password set), or a hash that
   * cannot be read (a cost above its ceiling is never computed), a dummy hash of the service's own cost is
   * checked instead, so the answer takes as long either way.
   */
  verify(password: string, stored: string | undefined): Promise<boolean>;
}

export function createPasswordHasher(): PasswordHasher {
  let dummy: Promise<string> | undefined;
  const hash = async (password: string) => {
    const salt = randomBytes(SALT_BYTES);
    const key = await scryptKey(password, salt, LOG_N, R, P);
    return `${CURRENT}${salt.toString('base64url')}$${key.toString('base64url')}`;
  };
  return {
    hash,
    async verify(password, stored) {
      const target = stored === undefined ? undefined : parsed(stored);
      if (target === undefined) {
        dummy ??= hash(randomBytes(16).toString('base64url'));
        await verifyParsed(password, parseHash(await dummy));
        return false;
      }
      return verifyParsed(password, target);
    },
  };
}
