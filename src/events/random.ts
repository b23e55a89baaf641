// Random but well-typed and plausible events of any catalog message, for generated test events.
import { enumDef, eventByMessageName, messageDef } from './catalog.js';
import type { EventJson, JsonValue } from './event-json.js';
import { TIMESTAMP, VALUE, type FieldDef, type MessageDef } from './schema.js';
import { formatRfc3339, formatTimestamp } from '../lib/time-text.js';

/** Uniform in [0, 1), like Math.random; injected so tests can replay a seed. */
export type Rng = () => number;

const REGIONS = ['us-iowa', 'europe-belgium', 'asia-japan', 'europe-england', 'australia-sydney'];
const AWS_REGIONS = ['us-east-1', 'eu-west-1', 'ap-northeast-1'];
const AUTHN_METHODS = ['password', 'oidc', 'email_link', 'otp_via_sms', 'webauthn', 'totp', 'api'];
const CONSENT_LEVELS = ['necessary', 'analytics', 'marketing', 'retargeting', 'tracking'];
const USER_AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
];
const WORDS = ['alpha', 'bravo', 'delta', 'echo', 'kilo', 'lima', 'nova', 'orbit', 'pixel', 'quartz', 'sierra', 'tango'];
const STATUS_CODES = [200, 201, 204, 302, 400, 401, 403, 404, 429, 500, 502];
const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
// 2020-01-01 to 2030-01-01, seconds since the epoch.
const EPOCH_FROM = 1_577_836_800;
const EPOCH_SPAN = 315_619_200;

const int = (rng: Rng, min: number, max: number): number => min + Math.floor(rng() * (max - min + 1));
const pick = <T>(rng: Rng, items: readonly T[]): T => items[int(rng, 0, items.length - 1)] as T;
const hex = (rng: Rng, length: number): string => Array.from({ length }, () => int(rng, 0, 15).toString(16)).join('');
const word = (rng: Rng): string => `${pick(rng, WORDS)}-${hex(rng, 4)}`;

function uuid(rng: Rng): string {
  return `${hex(rng, 8)}-${hex(rng, 4)}-4${hex(rng, 3)}-${pick(rng, ['8', '9', 'a', 'b'])}${hex(rng, 3)}-${hex(rng, 12)}`;
}

function ip(rng: Rng): string {
  if (rng() < 0.5) return `${int(rng, 1, 223)}.${int(rng, 0, 255)}.${int(rng, 0, 255)}.${int(rng, 1, 254)}`;
  return `2001:db8:${Array.from({ length: 6 }, () => int(rng, 0, 0xffff).toString(16)).join(':')}`;
}

const seconds = (rng: Rng): number => EPOCH_FROM + int(rng, 0, EPOCH_SPAN);

function policyDocument(rng: Rng): string {
  const statement = { Effect: 'Allow', Action: [`s3:${pick(rng, ['GetObject', 'PutObject', 'ListBucket'])}`], Resource: `arn:aws:s3:::${word(rng)}/*` };
  return JSON.stringify({ Version: '2012-10-17', Statement: [statement] });
}

// Plain string fields whose names say what they hold; anything else gets "<field>-<word>".
const NAMED_STRINGS: Readonly<Record<string, (rng: Rng) => string>> = {
  region: (rng) => pick(rng, REGIONS),
  last_used_region: (rng) => pick(rng, AWS_REGIONS),
  user_agent: (rng) => pick(rng, USER_AGENTS),
  url: (rng) => `https://api.example.com/${pick(rng, WORDS)}/${hex(rng, 6)}`,
  window_location: (rng) => `https://app.example.com/${pick(rng, WORDS)}`,
  email: (rng) => `${word(rng)}@${word(rng)}.iam.gserviceaccount.com`,
  service_account_email: (rng) => `${word(rng)}@${word(rng)}.iam.gserviceaccount.com`,
  success_authn_method: (rng) => pick(rng, AUTHN_METHODS),
  failed_authn_method: (rng) => pick(rng, AUTHN_METHODS),
  authenticated_methods: (rng) => pick(rng, AUTHN_METHODS),
  consent_level: (rng) => pick(rng, CONSENT_LEVELS),
  gdpr_consents: (rng) => pick(rng, CONSENT_LEVELS),
  account_id: (rng) => String(int(rng, 100_000_000_000, 999_999_999_999)),
  role_arn: (rng) => `arn:aws:iam::${int(rng, 100_000_000_000, 999_999_999_999)}:role/${word(rng)}`,
  policy_arn: (rng) => `arn:aws:iam::aws:policy/${word(rng)}`,
  service_sdk_version: (rng) => `${int(rng, 1, 3)}.${int(rng, 0, 20)}.${int(rng, 0, 9)}`,
};
const ID_FIELDS = new Set(['person_id', 'token_id', 'org_id', 'suborganization_id', 'parent_organization_id', 'prev_anonymous_person_id', 'client_id']);

function randomString(field: FieldDef, message: MessageDef, rng: Rng): string {
  switch (field.format) {
    case 'uuid': return uuid(rng);
    case 'rfc3339': return formatRfc3339(seconds(rng), int(rng, 0, 999_999_999), 9);
    case 'rfc3339-micros': return formatRfc3339(seconds(rng), int(rng, 0, 999_999) * 1000, 6);
    case 'ip': return ip(rng);
    case 'json': return policyDocument(rng);
    case undefined: break;
  }
  if (field.name === 'method') return message.name === 'HttpRequestMetadata' ? pick(rng, HTTP_METHODS) : pick(rng, AUTHN_METHODS);
  if (ID_FIELDS.has(field.name)) return uuid(rng);
  return NAMED_STRINGS[field.name]?.(rng) ?? `${field.name}-${word(rng)}`;
}

function randomInteger(field: FieldDef, rng: Rng): number {
  if (field.name === 'status_code') return pick(rng, STATUS_CODES);
  if (field.name === 'max_session_duration') return int(rng, 3600, 43_200);
  if (field.name === 'sequence') return int(rng, 1, 100_000);
  return int(rng, 0, field.name === 'plugin_index' ? 9 : 1_000_000);
}

function randomJson(rng: Rng, depth: number): JsonValue {
  const kind = int(rng, 0, depth > 1 ? 3 : 5);
  if (kind === 0) return null;
  if (kind === 1) return rng() < 0.5;
  if (kind === 2) return int(rng, -1000, 1000) / 8;
  if (kind === 3) return word(rng);
  if (kind === 4) return Array.from({ length: int(rng, 0, 3) }, () => randomJson(rng, depth + 1));
  return Object.fromEntries(Array.from({ length: int(rng, 0, 3) }, () => [pick(rng, WORDS), randomJson(rng, depth + 1)]));
}

function randomSingle(field: FieldDef, message: MessageDef, rng: Rng): JsonValue {
  if (field.kind === 'enum') {
    const values = (enumDef(field.type)?.values ?? []).filter((v) => v.number !== 0);
    return pick(rng, values).name;
  }
  if (field.kind === 'message') {
    if (field.type === TIMESTAMP) return formatTimestamp({ seconds: seconds(rng), nanos: int(rng, 0, 999_999_999) });
    if (field.type === VALUE) return Object.fromEntries(Array.from({ length: int(rng, 1, 3) }, () => [word(rng), randomJson(rng, 1)]));
    return randomMessage(field.type, rng);
  }
  switch (field.type) {
    case 'string': return randomString(field, message, rng);
    case 'bool': return rng() < 0.5;
    case 'int32': return randomInteger(field, rng);
    case 'int64': case 'uint64': return String(randomInteger(field, rng));
    case 'double': return int(rng, 0, 5_000_000) / 1000;
    default: return Buffer.from(hex(rng, 16), 'hex').toString('base64');
  }
}

// Messages whose fields depend on each other: a handle's value matches its type; a timing's end follows its start.
const SPECIAL: Readonly<Record<string, (rng: Rng) => EventJson>> = {
  PersonHandle: (rng) => {
    const type = pick(rng, ['PhoneNumber', 'EmailAddress', 'Username']);
    const value = type === 'PhoneNumber' ? `+1${int(rng, 200, 999)}555${String(int(rng, 0, 9999)).padStart(4, '0')}`
      : type === 'EmailAddress' ? `${word(rng)}@example.com` : word(rng);
    return { type, value };
  },
  TimingMetadata: (rng) => {
    // Seconds and nanoseconds stay apart: nanoseconds since the epoch do not fit a double exactly.
    const start = { seconds: seconds(rng), nanos: int(rng, 0, 999_999_999) };
    const elapsedNanos = int(rng, 1000, 2_000_000_000);
    const endNanos = start.nanos + elapsedNanos;
    const end = { seconds: start.seconds + Math.floor(endNanos / 1e9), nanos: endNanos % 1e9 };
    return { start: formatTimestamp(start), end: formatTimestamp(end), elapsed: elapsedNanos / 1e9 };
  },
};

function randomMessage(name: string, rng: Rng, metadata?: EventJson): EventJson {
  const special = SPECIAL[name];
  if (special !== undefined) return special(rng);
  const message = messageDef(name);
  if (message === undefined) throw new RangeError(`unknown message ${name}`);
  const out: EventJson = {};
  for (const field of message.fields) {
    if (metadata !== undefined && field.name === 'event_metadata') out[field.name] = metadata;
    else if (field.repeated) out[field.name] = Array.from({ length: int(rng, 0, 3) }, () => randomSingle(field, message, rng));
    else if (!field.optional || rng() < 0.75) out[field.name] = randomSingle(field, message, rng);
  }
  return out;
}

/** A random event of the named message carrying the given event_metadata; every field set, optional ones mostly. */
export function randomEvent(messageName: string, metadata: EventJson, rng: Rng): EventJson {
  if (eventByMessageName(messageName) === undefined) throw new RangeError(`not an event message: ${messageName}`);
  return randomMessage(messageName, rng, metadata);
}
