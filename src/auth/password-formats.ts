// The password-hash formats the service reads: its own scrypt form, and the bcrypt, pbkdf2 and argon2 hashes a
// team migrating from another system imports. Each is parsed once, against a ceiling on its cost, so no stored
// hash can make one sign-in check cost more than a few of the service's own (docs/security.md: Cost ceilings).
import { pbkdf2, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { verify as argon2Verify } from '@node-rs/argon2';
import { verify as bcryptVerify } from '@node-rs/bcrypt';

/**
 * The highest cost accepted per format and parameter: a few times the work of the service's own hash (scrypt
 * N = 2^15, r = 8, p = 1, 32 MiB) at most, and room for each library's defaults (argon2-cffi's m = 100 MiB,
 * t = 2, p = 8; OWASP's pbkdf2 600,000 sha256 iterations). A hash above them is refused and never computed.
 */
export const COST_CEILINGS = {
  scrypt: { logN: 16, r: 8, p: 2 },
  bcrypt: { cost: 12 },
  pbkdf2: { sha256: 1_000_000, sha512: 500_000 },
  /** m in KiB; m × t bounds the work: 64 MiB for 4 passes, or 128 MiB for 2 */
  argon2: { m: 131_072, t: 4, p: 8, mt: 262_144 },
} as const;

export type ParsedHash =
  | { format: 'scrypt'; logN: number; r: number; p: number; salt: Buffer; hash: Buffer }
  | { format: 'bcrypt'; cost: number; mcf: string }
  | { format: 'pbkdf2'; digest: 'sha256' | 'sha512'; iterations: number; salt: Buffer; hash: Buffer }
  | { format: 'argon2i' | 'argon2id'; m: number; t: number; p: number; phc: string };

/** Why a hash cannot be read: the message names the format and, where it is the cost, the parameter. */
export class HashRefused extends Error {}

const refuse = (message: string): never => {
  throw new HashRefused(message);
};

const ACCEPTED = 'accepted: scrypt$logN$r$p$salt$key, bcrypt ($2a$, $2b$, $2y$ or $bcrypt$v=98$r=…), $pbkdf2-sha256$ or $pbkdf2-sha512$, $argon2i$ or $argon2id$';

function bounded(format: string, name: string, value: number, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min) refuse(`${format}: ${name} = ${value} is below the minimum ${min}`);
  if (value > max) refuse(`${format}: ${name} = ${value} is above the ceiling ${max}`);
  return value;
}

/** Standard or unpadded base64, or passlib's variant with '.' for '+'; refused when it is none of them. */
function base64(format: string, field: string, text: string, minBytes: number, maxBytes = 64): Buffer {
  if (!/^[A-Za-z0-9+/.]+={0,2}$/.test(text)) refuse(`${format}: the ${field} is not base64`);
  const bytes = Buffer.from(text.replaceAll('.', '+'), 'base64');
  if (bytes.length < minBytes || bytes.length > maxBytes) refuse(`${format}: the ${field} must be ${minBytes} to ${maxBytes} bytes`);
  return bytes;
}

function parseScrypt(stored: string): ParsedHash {
  const m = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([\w-]+)\$([\w-]+)$/.exec(stored);
  if (!m) return refuse('scrypt: must be scrypt$logN$r$p$salt$key (base64url salt, 32-byte key)');
  const { logN, r, p } = COST_CEILINGS.scrypt;
  const salt = Buffer.from(m[4] as string, 'base64url');
  const hash = Buffer.from(m[5] as string, 'base64url');
  if (salt.length < 8 || hash.length !== 32) refuse('scrypt: the salt must be at least 8 bytes and the key 32');
  return {
    format: 'scrypt',
    logN: bounded('scrypt', 'logN', Number(m[1]), 10, logN),
    r: bounded('scrypt', 'r', Number(m[2]), 1, r),
    p: bounded('scrypt', 'p', Number(m[3]), 1, p),
    salt,
    hash,
  };
}

const BCRYPT_ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** bcrypt's own base64 is the standard one, unpadded, over another alphabet. */
const toBcryptBase64 = (bytes: Buffer): string => [...bytes.toString('base64').replace(/=+$/, '')].map((c) => BCRYPT_ALPHABET[BASE64_ALPHABET.indexOf(c)]).join('');

function parseBcrypt(stored: string): ParsedHash {
  let mcf = stored;
  if (stored.startsWith('$bcrypt$')) {
    // The PHC form: $bcrypt$v=98$r=<cost>$<16-byte salt>$<23-byte hash>, standard base64.
    const m = /^\$bcrypt\$v=98\$r=(\d{1,2})\$([^$]+)\$([^$]+)$/.exec(stored);
    if (!m) return refuse('bcrypt: the PHC form must be $bcrypt$v=98$r=<cost>$<salt>$<hash>');
    const salt = base64('bcrypt', 'salt', m[2] as string, 16, 16);
    const hash = base64('bcrypt', 'hash', m[3] as string, 23, 23);
    mcf = `$2b$${(m[1] as string).padStart(2, '0')}$${toBcryptBase64(salt)}${toBcryptBase64(hash)}`;
  }
  const m = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/.exec(mcf);
  if (!m) return refuse('bcrypt: must be $2a$, $2b$ or $2y$, a two-digit cost and 53 characters of salt and hash');
  return { format: 'bcrypt', cost: bounded('bcrypt', 'cost', Number(m[1]), 4, COST_CEILINGS.bcrypt.cost), mcf };
}

function parsePbkdf2(stored: string): ParsedHash {
  // PHC ($pbkdf2-sha256$i=600000[,l=32]$salt$hash) or passlib's ($pbkdf2-sha256$600000$salt$hash).
  const m = /^\$pbkdf2-(sha256|sha512)\$(?:i=(\d{1,9})(?:,l=(\d{1,3}))?|(\d{1,9}))\$([^$]+)\$([^$]+)$/.exec(stored);
  if (!m) return refuse('pbkdf2: must be $pbkdf2-sha256$ or $pbkdf2-sha512$, then i=<iterations>, the salt and the hash in base64');
  const digest = m[1] as 'sha256' | 'sha512';
  const format = `pbkdf2-${digest}`;
  const iterations = bounded(format, 'iterations', Number(m[2] ?? m[4]), 1000, COST_CEILINGS.pbkdf2[digest]);
  const salt = base64(format, 'salt', m[5] as string, 8);
  const hash = base64(format, 'hash', m[6] as string, 16);
  if (m[3] !== undefined && Number(m[3]) !== hash.length) refuse(`${format}: l = ${m[3]} is not the hash's length (${hash.length} bytes)`);
  return { format: 'pbkdf2', digest, iterations, salt, hash };
}

function parseArgon2(stored: string): ParsedHash {
  const m = /^\$(argon2id|argon2i)\$v=(\d+)\$m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,3})\$([^$]+)\$([^$]+)$/.exec(stored);
  if (!m) return refuse('argon2: must be $argon2i$ or $argon2id$, v=19, m=<KiB>,t=<passes>,p=<lanes>, then the salt and the hash in unpadded base64');
  const format = m[1] as 'argon2i' | 'argon2id';
  if (m[2] !== '19') refuse(`${format}: version v=${m[2]} is not supported (v=19)`);
  const { m: mMax, t: tMax, p: pMax, mt } = COST_CEILINGS.argon2;
  const p = bounded(format, 'p', Number(m[5]), 1, pMax);
  const memory = bounded(format, 'm', Number(m[3]), 8 * p, mMax);
  const t = bounded(format, 't', Number(m[4]), 1, tMax);
  bounded(format, 'm × t', memory * t, 1, mt);
  base64(format, 'salt', m[6] as string, 8);
  base64(format, 'hash', m[7] as string, 16);
  return { format, m: memory, t, p, phc: stored };
}

/** A stored or imported hash, read against the ceilings; throws HashRefused naming the format and the problem. */
export function parseHash(stored: string): ParsedHash {
  if (stored.startsWith('scrypt$')) return parseScrypt(stored);
  if (/^\$2[aby]\$/.test(stored) || stored.startsWith('$bcrypt$')) return parseBcrypt(stored);
  if (/^\$pbkdf2-(sha256|sha512)\$/.test(stored)) return parsePbkdf2(stored);
  if (/^\$argon2(id|i)\$/.test(stored)) return parseArgon2(stored);
  const named = /^\$([\w-]{1,20})\$/.exec(stored)?.[1];
  if (named !== undefined) refuse(`${named}: this hash format is not supported; ${ACCEPTED}`);
  return refuse(`not a recognised hash format; ${ACCEPTED}`);
}

/** The service's own scrypt derivation, on libuv's thread pool. */
export function scryptKey(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r * p };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, 32, options, (e, key) => (e ? reject(e) : resolve(key))));
}

const equal = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

/**
 * Whether password matches a parsed hash; every format runs off the event loop. Imported hashes get the
 * password as typed: the system that made them did not normalise it, where the service's own scrypt does.
 */
export async function verifyParsed(password: string, parsed: ParsedHash): Promise<boolean> {
  switch (parsed.format) {
    case 'scrypt':
      return equal(await scryptKey(password, parsed.salt, parsed.logN, parsed.r, parsed.p), parsed.hash);
    case 'bcrypt':
      return bcryptVerify(password, parsed.mcf);
    case 'pbkdf2': {
      const { salt, iterations, hash, digest } = parsed;
      const key = await new Promise<Buffer>((resolve, reject) => pbkdf2(password, salt, iterations, hash.length, digest, (e, k) => (e ? reject(e) : resolve(k))));
      return equal(key, hash);
    }
    case 'argon2i':
    case 'argon2id':
      return argon2Verify(parsed.phc, password);
  }
}
