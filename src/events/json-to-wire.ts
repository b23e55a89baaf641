// Checks the JSON form of a message against the catalog and turns it into the object protobufjs encodes.
import { MESSAGES, enumDef } from './catalog.js';
import { VALUE_FIELDS } from './event-json.js';
import { TIMESTAMP, VALUE, type FieldDef, type ScalarType } from './schema.js';
import { parseRfc3339 } from '../lib/time-text.js';

/** The JSON form does not fit the message; `path` names the offending field, e.g. `TokenMinted_v1.authentications[0]`. */
export class EventShapeError extends TypeError {
  override readonly name = 'EventShapeError';
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

// The path of a misfit is assembled only on failure: each level adds its segment as the fault passes through.
class ShapeFault extends Error {
  readonly segments: string[] = [];
}

function at(error: unknown, segment: string): unknown {
  if (error instanceof ShapeFault) error.segments.push(segment);
  return error;
}

type Convert = (value: unknown) => unknown;
type Plan = ReadonlyMap<string, { readonly def: FieldDef; readonly convert: Convert }>;

// Each level of a JSON value is two message levels on the wire (Value, then Struct or ListValue), and protobuf readers,
// protobufjs and protoc's alike, refuse messages nested beyond 100 levels: stay well below.
export const MAX_VALUE_DEPTH = 32;
export const INT32_MIN = -(2 ** 31);
export const INT32_MAX = 2 ** 31 - 1;
export const INTEGER_TEXT = /^-?\d+$/;
export const BASE64_TEXT = /^[A-Za-z0-9+/_-]*={0,2}$/;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

function fail(expected: string, value: unknown): never {
  throw new ShapeFault(`expected ${expected}, got ${describe(value)}`);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function int32(value: unknown): number {
  const n = typeof value === 'string' && INTEGER_TEXT.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX ? n : fail('an int32', value);
}

// proto3 JSON writes 64-bit integers as strings and accepts numbers. Safe integers go to protobufjs as numbers; larger
// ones as {low, high} bits, which it takes without needing long.js to parse text.
function int64(min: bigint, max: bigint, what: string): Convert {
  return (value) => {
    const text = typeof value === 'string' && INTEGER_TEXT.test(value);
    // Up to 15 characters a decimal is always a safe integer, so the common case skips BigInt.
    const n = typeof value === 'number' && Number.isSafeInteger(value) ? value : text && value.length <= 15 ? Number(value) : undefined;
    if (n !== undefined) return n >= 0 || min < 0n ? n : fail(`${what} in range`, value);
    if (!text) return fail(what, value);
    const big = BigInt(value);
    if (big < min || big > max) return fail(`${what} in range`, value);
    if (big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(big);
    const bits = BigInt.asUintN(64, big);
    return { low: Number(bits & 0xffffffffn), high: Number(bits >> 32n), unsigned: min === 0n };
  };
}

function double(value: unknown): number {
  if (typeof value === 'number') return value;
  if (value === 'NaN') return Number.NaN;
  if (value === 'Infinity') return Number.POSITIVE_INFINITY;
  if (value === '-Infinity') return Number.NEGATIVE_INFINITY;
  return fail('a number', value);
}

const SCALARS: Readonly<Record<ScalarType, Convert>> = {
  string: (v) => (typeof v === 'string' ? v : fail('a string', v)),
  bool: (v) => (typeof v === 'boolean' ? v : fail('a boolean', v)),
  int32,
  int64: int64(-(2n ** 63n), 2n ** 63n - 1n, 'an int64 as a decimal string'),
  uint64: int64(0n, 2n ** 64n - 1n, 'a uint64 as a decimal string'),
  double,
  bytes: (v) => (typeof v === 'string' && BASE64_TEXT.test(v) ? Buffer.from(v, 'base64') : fail('base64 text', v)),
};

function enumConvert(name: string): Convert {
  const def = enumDef(name);
  if (def === undefined) throw new Error(`catalog names an unknown enum ${name}`);
  const byName = new Map(def.values.map((v) => [v.name, v.number]));
  // proto3 enums are open: a number the catalog does not name is still a valid value.
  return (v) => {
    const number = typeof v === 'string' ? byName.get(v) : Number.isInteger(v) ? int32(v) : undefined;
    return number ?? fail(`a ${name} name`, v);
  };
}

function timestamp(value: unknown): unknown {
  const parts = typeof value === 'string' ? parseRfc3339(value) : undefined;
  return parts ?? fail('an RFC 3339 timestamp', value);
}

function jsonValue(value: unknown, depth: number): Record<string, unknown> {
  if (depth > MAX_VALUE_DEPTH) throw new ShapeFault('JSON value nested too deeply');
  if (value === null) return { [VALUE_FIELDS.null]: 0 };
  if (typeof value === 'boolean') return { [VALUE_FIELDS.bool]: value };
  if (typeof value === 'string') return { [VALUE_FIELDS.string]: value };
  if (typeof value === 'number') {
    return Number.isFinite(value) ? { [VALUE_FIELDS.number]: value } : fail('a finite number', value);
  }
  if (Array.isArray(value)) {
    const values = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      try {
        values[i] = jsonValue(value[i], depth + 1);
      } catch (error) {
        throw at(error, `[${i}]`);
      }
    }
    return { [VALUE_FIELDS.list]: { values } };
  }
  if (!isPlainObject(value)) return fail('a JSON value', value);
  // A prototype-less map, so a "__proto__" key stays an ordinary key.
  const fields = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    try {
      fields[key] = jsonValue(value[key], depth + 1);
    } catch (error) {
      throw at(error, `.${key}`);
    }
  }
  return { [VALUE_FIELDS.struct]: { fields } };
}

function singleConvert(def: FieldDef): Convert {
  if (def.kind === 'scalar') return SCALARS[def.type as ScalarType];
  if (def.kind === 'enum') return enumConvert(def.type);
  if (def.type === TIMESTAMP) return timestamp;
  if (def.type === VALUE) return (v) => jsonValue(v, 0);
  const type = def.type;
  return (v) => convertMessage(type, v);
}

function fieldConvert(def: FieldDef): Convert {
  const one = singleConvert(def);
  if (!def.repeated) return one;
  return (v) => {
    if (!Array.isArray(v)) return fail('an array', v);
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      try {
        out[i] = one(v[i]);
      } catch (error) {
        throw at(error, `[${i}]`);
      }
    }
    return out;
  };
}

// Compiled once from the constant catalog; read-only afterwards.
const PLANS: ReadonlyMap<string, Plan> = new Map(
  MESSAGES.map((message) => [message.name, new Map(message.fields.map((def) => [def.name, { def, convert: fieldConvert(def) }]))]),
);

function convertMessage(type: string, json: unknown): Record<string, unknown> {
  const plan = PLANS.get(type);
  if (plan === undefined) throw new ShapeFault(`unknown message ${type}`);
  if (!isPlainObject(json)) return fail(`a ${type} object`, json);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(json)) {
    try {
      const field = plan.get(key);
      if (field === undefined) throw new ShapeFault(`unknown field of ${type}`);
      const value = json[key];
      // proto3 JSON: null stands for the default, except in a Value, where it is the JSON null itself.
      if (value === null && (field.def.type !== VALUE || field.def.repeated)) continue;
      out[key] = field.convert(value);
    } catch (error) {
      throw at(error, `.${key}`);
    }
  }
  return out;
}

/** The protobufjs-encodable object for a message given in JSON form; throws EventShapeError when it does not fit. */
export function jsonToWire(messageName: string, json: unknown): Record<string, unknown> {
  try {
    return convertMessage(messageName, json);
  } catch (error) {
    if (!(error instanceof ShapeFault)) throw error;
    throw new EventShapeError(messageName + error.segments.reverse().join(''), error.message);
  }
}
