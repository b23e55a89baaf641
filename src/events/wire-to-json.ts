// Turns a message decoded by protobufjs into its JSON form: every field without presence is written, defaults included.
import { MESSAGES, enumDef } from './catalog.js';
import { VALUE_FIELDS, setOwn, type EventJson, type JsonValue } from './event-json.js';
import { TIMESTAMP, VALUE, type FieldDef, type ScalarType } from './schema.js';
import { formatTimestamp } from '../lib/time-text.js';

type Read = (wire: unknown) => JsonValue;

interface FieldReader {
  readonly name: string;
  readonly repeated: boolean;
  /** Message fields and proto3 `optional` fields appear only when set. */
  readonly presence: boolean;
  readonly read: Read;
  /** The JSON form of the default, written when a field without presence is absent on the wire. */
  readonly empty: JsonValue;
}

type Wire = Record<string, unknown>;

const hasOwn = (wire: Wire, key: string): boolean => Object.prototype.hasOwnProperty.call(wire, key);

interface Long {
  readonly high: number;
  readonly unsigned: boolean;
  toNumber(): number;
  toString(): string;
}

// 64-bit integers arrive as long.js Longs. Long's own toString divides in a loop; below 2^53 a double is exact and
// much faster to print.
const decimal: Read = (v) => {
  if (typeof v !== 'object' || v === null) return String(v);
  const long = v as Long;
  const safe = long.unsigned ? long.high >>> 0 < 0x200000 : long.high >= -0x200000 && long.high < 0x200000;
  return safe ? String(long.toNumber()) : long.toString();
};
const identity: Read = (v) => v as JsonValue;

const SCALARS: Readonly<Record<ScalarType, { read: Read; empty: JsonValue }>> = {
  string: { read: identity, empty: '' },
  bool: { read: identity, empty: false },
  int32: { read: identity, empty: 0 },
  int64: { read: decimal, empty: '0' },
  uint64: { read: decimal, empty: '0' },
  // proto3 JSON spells the non-finite doubles as the strings "NaN", "Infinity" and "-Infinity".
  double: { read: (v) => (Number.isFinite(v) ? (v as number) : String(v)), empty: 0 },
  bytes: { read: (v) => Buffer.from((v as Uint8Array).buffer, (v as Uint8Array).byteOffset, (v as Uint8Array).byteLength).toString('base64'), empty: '' },
};

// Timestamp seconds and nanos: within ±2^38, so a Long's toNumber is exact.
function toNumber(v: unknown): number {
  return typeof v === 'number' ? v : typeof v === 'object' && v !== null ? (v as Long).toNumber() : 0;
}

const readTimestamp: Read = (v) => formatTimestamp({ seconds: toNumber((v as Wire)['seconds']), nanos: toNumber((v as Wire)['nanos']) });

function readValue(v: unknown): JsonValue {
  const wire = v as Wire;
  if (hasOwn(wire, VALUE_FIELDS.number)) return wire[VALUE_FIELDS.number] as number;
  if (hasOwn(wire, VALUE_FIELDS.string)) return wire[VALUE_FIELDS.string] as string;
  if (hasOwn(wire, VALUE_FIELDS.bool)) return wire[VALUE_FIELDS.bool] as boolean;
  if (hasOwn(wire, VALUE_FIELDS.list)) {
    const values = (wire[VALUE_FIELDS.list] as Wire)['values'];
    return Array.isArray(values) ? values.map(readValue) : [];
  }
  if (hasOwn(wire, VALUE_FIELDS.struct)) {
    const fields = ((wire[VALUE_FIELDS.struct] as Wire)['fields'] ?? {}) as Wire;
    const out: Wire = {};
    for (const key of Object.keys(fields)) setOwn(out, key, readValue(fields[key]));
    return out as JsonValue;
  }
  // null_value, or a Value with no kind set, which proto3 JSON can only show as null.
  return null;
}

function enumReader(name: string): { read: Read; empty: JsonValue } {
  const def = enumDef(name);
  if (def === undefined) throw new Error(`catalog names an unknown enum ${name}`);
  const names = new Map(def.values.map((v) => [v.number, v.name]));
  // An unknown number (from a newer writer) stays a number, as proto3 JSON prints it.
  return { read: (v) => names.get(v as number) ?? (v as number), empty: names.get(0) ?? 0 };
}

function fieldReader(def: FieldDef): FieldReader {
  const base = { name: def.name, repeated: def.repeated, presence: def.optional || def.kind === 'message' };
  if (def.kind === 'scalar') return { ...base, ...SCALARS[def.type as ScalarType] };
  if (def.kind === 'enum') return { ...base, ...enumReader(def.type) };
  const type = def.type;
  const read: Read = type === TIMESTAMP ? readTimestamp : type === VALUE ? readValue : (v) => readMessage(type, v as Wire);
  return { ...base, read, empty: null };
}

// Compiled once from the constant catalog; read-only afterwards.
const READERS: ReadonlyMap<string, readonly FieldReader[]> = new Map(
  MESSAGES.map((message) => [message.name, message.fields.map(fieldReader)]),
);

function readMessage(type: string, wire: Wire): EventJson {
  const readers = READERS.get(type);
  if (readers === undefined) throw new Error(`unknown message ${type}`);
  const out: EventJson = {};
  for (const field of readers) {
    const v = wire[field.name];
    if (field.repeated) out[field.name] = Array.isArray(v) ? v.map((item: unknown) => field.read(item)) : [];
    else if (field.presence) {
      if (v != null && hasOwn(wire, field.name)) out[field.name] = field.read(v);
    } else out[field.name] = v == null ? field.empty : field.read(v);
  }
  return out;
}

/** The JSON form of a decoded protobufjs message (or a plain object of the same shape). */
export function wireToJson(messageName: string, wire: object): EventJson {
  return readMessage(messageName, wire as Wire);
}
