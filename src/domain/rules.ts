// Validation rules and limits of the seed, as pure functions that throw the service's error type.
import { badRequest } from '../errors.js';
import { isReservedKey } from './reserved-keys.js';
import { HANDLE_TYPES, type Handle } from './state.js';

export const ATTRIBUTE_NAME_MAX_BYTES = 70;
export const ATTRIBUTE_VALUE_MAX_BYTES = 64 * 1024;
export const GROUP_NAME_PATTERN = /^[A-Za-z0-9]{1}[\w\.\-]*[A-Za-z0-9]$/;
export const GROUP_NAME_MAX = 100;

export interface Bucket {
  name: string;
  sharing_scope: 'organization' | 'person_pool';
  end_user_permissions: 'no_access' | 'read_only' | 'read_write';
}

export const BUCKETS: readonly Bucket[] = (['organization', 'person_pool'] as const).flatMap((scope) =>
  (['read_write', 'read_only', 'no_access'] as const).map((perm) => ({
    name: `${scope === 'person_pool' ? 'person_pool-' : ''}end_user_${perm}`,
    sharing_scope: scope,
    end_user_permissions: perm,
  })),
);
const BUCKET_NAMES = new Set(BUCKETS.map((b) => b.name));

export function isBucket(name: string): boolean {
  return BUCKET_NAMES.has(name);
}

export function checkGroupName(name: string, field = 'name'): void {
  if (name.length > GROUP_NAME_MAX) throw badRequest(`${field}: group name "${name.slice(0, 20)}..." is longer than ${GROUP_NAME_MAX} characters`);
  if (!GROUP_NAME_PATTERN.test(name)) {
    throw badRequest(`${field}: group name "${name}" must be 2-100 characters matching ${GROUP_NAME_PATTERN.source}`);
  }
}

/**
 * The log's encoding (msgpack) renames the key __proto__ on decoding, so a set holding it would read back
 * differently after a restart: it is refused wherever it appears.
 */
const RESERVED_KEY = '__proto__';

function holdsReservedKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsReservedKey);
  if (typeof value !== 'object' || value === null) return false;
  return Object.keys(value).some((k) => k === RESERVED_KEY || holdsReservedKey((value as Record<string, unknown>)[k]));
}

/** Seed rule 2 of the attributes operation: names at most 70 bytes of UTF-8, values at most 64 KiB of JSON. */
export function checkAttributes(set: Record<string, unknown>, field = 'attributes'): void {
  for (const [name, value] of Object.entries(set)) {
    if (name === '') throw badRequest(`${field}: attribute name must not be empty`);
    if (isReservedKey(name)) throw badRequest(`${field}: attribute name "${name}" is reserved`);
    const nameBytes = Buffer.byteLength(name, 'utf8');
    if (nameBytes > ATTRIBUTE_NAME_MAX_BYTES) {
      throw badRequest(`${field}: attribute name "${name}" is ${nameBytes} bytes; at most ${ATTRIBUTE_NAME_MAX_BYTES} bytes of UTF-8 are allowed`);
    }
    const json = JSON.stringify(value);
    if (json === undefined) throw badRequest(`${field}: attribute "${name}" has no JSON value`);
    const valueBytes = Buffer.byteLength(json, 'utf8');
    if (valueBytes > ATTRIBUTE_VALUE_MAX_BYTES) {
      throw badRequest(`${field}: attribute "${name}" value is ${valueBytes} bytes of JSON; at most ${ATTRIBUTE_VALUE_MAX_BYTES} are allowed`);
    }
    // The substring test keeps the walk off the common path.
    if (json.includes(`"${RESERVED_KEY}"`) && holdsReservedKey(value)) {
      throw badRequest(`${field}: attribute "${name}" value holds the reserved key "${RESERVED_KEY}"`);
    }
  }
}

// Every pattern applied to input runs in time linear in its length (no two unbounded quantifiers over
// overlapping classes side by side or nested), and only after the length is checked: a pattern is a regular
// expression on the one thread that serves every organization.
export const EMAIL_MAX = 320;
export const PHONE_MAX = 16;
/** 255 code points; UTF-16 code units are at most twice that */
export const USERNAME_MAX_UNITS = 510;
/** The domain's first label holds no dot, so where the dot falls is never guessed (`[^@]+\.[^@]+` is quadratic). */
export const EMAIL = /^[^\s@]{1,64}@[^\s@.]+\.[^\s@]+$/;
export const PHONE = /^\+[1-9]\d{6,14}$/;
export const USERNAME = /^[^\s\p{C}]{1,255}$/u;

export function checkHandle(h: Handle, field: string): void {
  if (!HANDLE_TYPES.includes(h.type)) throw badRequest(`${field}.type: must be one of ${HANDLE_TYPES.join(', ')}`);
  const max = h.type === 'email_address' ? EMAIL_MAX : h.type === 'phone_number' ? PHONE_MAX : USERNAME_MAX_UNITS;
  const ok =
    h.value.length <= max &&
    (h.type === 'email_address' ? EMAIL.test(h.value)
    : h.type === 'phone_number' ? PHONE.test(h.value)
    : USERNAME.test(h.value));
  const hint =
    h.type === 'email_address' ? `an email address (at most ${EMAIL_MAX} characters)`
    : h.type === 'phone_number' ? 'a phone number in E.164 form (+ and 7 to 15 digits)'
    : '1-255 characters without spaces or control characters';
  if (!ok) throw badRequest(`${field}.value: "${h.value.slice(0, 64)}" is not ${hint}`);
}

export function checkRegion(region: string, regions: readonly string[], field = 'region'): void {
  if (!regions.includes(region)) throw badRequest(`${field}: "${region}" is not a configured region (configured: ${regions.join(', ')})`);
}

/** Protobuf enum name of a handle type, for events. */
export function handleTypeEnum(t: Handle['type']): string {
  return t === 'email_address' ? 'EmailAddress' : t === 'phone_number' ? 'PhoneNumber' : 'Username';
}
