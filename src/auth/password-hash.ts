// Password hashing with scrypt (memory-hard), on libuv's thread pool so the event loop keeps serving.
// Hashes are self-describing (scrypt$logN$r$p$salt$hash), so the cost can rise later without a migration.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { badRequest } from '../errors.js';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

const LOG_N = 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

export function checkPasswordPolicy(password: string, field = 'password'): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) throw badRequest(`${field}: must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
}

function derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r * p };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (e, key) => (e ? reject(e) : resolve(key))));
}

interface Parsed {
  logN: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

function parse(stored: string): Parsed | undefined {
  const m = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([\w-]+)\$([\w-]+)$/.exec(stored);
  if (!m) return undefined;
  const [logN, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (logN < 10 || logN > 20 || r < 1 || r > 32 || p < 1 || p > 16) return undefined;
  return { logN, r, p, salt: Buffer.from(m[4] as string, 'base64url'), hash: Buffer.from(m[5] as string, 'base64url') };
}

/** Whether a hash given to import (POST /persons/{id}/credentials) is one verify() can check: this form, a 32-byte key. */
export function isPasswordHash(stored: string): boolean {
  const parsed = parse(stored);
  return parsed !== undefined && parsed.hash.length === KEY_BYTES && parsed.salt.length >= 8;
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /**
   * Whether password matches stored. With nothing stored (unknown handle, no password set) a dummy hash of
   * the same cost is checked instead, so the answer takes as long either way.
   */
  verify(password: string, stored: string | undefined): Promise<boolean>;
}

export function createPasswordHasher(): PasswordHasher {
  let dummy: Promise<string> | undefined;
  const hash = async (password: string) => {
    const salt = randomBytes(SALT_BYTES);
    const key = await derive(password, salt, LOG_N, R, P);
    return `scrypt$${LOG_N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
  };
  return {
    hash,
    async verify(password, stored) {
      const parsed = stored === undefined ? undefined : parse(stored);
      dummy ??= hash(randomBytes(16).toString('base64url'));
      const target = parsed ?? (parse(await dummy) as Parsed);
      const key = await derive(password, target.salt, target.logN, target.r, target.p);
      return parsed !== undefined && key.length === parsed.hash.length && timingSafeEqual(key, parsed.hash);
    },
  };
}
