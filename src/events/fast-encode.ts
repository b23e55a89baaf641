// Protobuf encoding of an event straight from its JSON form, compiled once per catalog message, byte for byte what
// jsonToWire followed by protobufjs writes; anything it is unsure of is left to that path, which names the misfit.
import { MESSAGES, enumDef } from './catalog.js';
import { TIMESTAMP, VALUE, type FieldDef, type MessageDef, type ScalarType } from './schema.js';
import { parseRfc3339 } from '../lib/time-text.js';
import { BASE64_TEXT, INT32_MAX, INT32_MIN, INTEGER_TEXT, isPlainObject, MAX_VALUE_DEPTH } from './json-to-wire.js';

/**
 * The encoding of `json` as the named message, in a Buffer of its own; undefined when the fast path declines (an
 * unknown message, a malformed or unusual input): the caller then takes the jsonToWire + protobufjs path.
 */
export type FastEncoder = (messageName: string, json: unknown) => Buffer | undefined;

// Thrown (one preallocated instance) to abandon an encoding; never escapes this module.
class Decline extends Error {}
const DECLINE = new Decline('declined');
function decline(): never {
  throw DECLINE;
}

// jsonToWire's limits and patterns, shared: what it accepts, this path encodes; everything else it declines.
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER);
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

// Wire types.
const VARINT = 0;
const FIXED64 = 1;
const LENGTH = 2;

// The encoder's state: a slab that encodings are written into one after another and returned as views of, as
// Buffer.allocUnsafe carves its pool, which saves copying each out; each encoding is synchronous and not re-entered.
// `base` is where the current encoding starts; positions kept across a write are relative to it, as ensure() may
// move the encoding to a new slab.
interface Out {
  buf: Buffer;
  /** `buf` as a DataView */
  view: DataView;
  base: number;
  pos: number;
}
const SLAB = 8192;
// An encoding starts on a fresh slab when less than this is left of the current one.
const SLAB_RESERVE = 1024;
const viewOf = (buf: Buffer): DataView => new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
const firstSlab = Buffer.allocUnsafe(SLAB);
const out: Out = { buf: firstSlab, view: viewOf(firstSlab), base: 0, pos: 0 };

function useSlab(buf: Buffer): void {
  out.buf = buf;
  out.view = viewOf(buf);
}

// Strings of 1 to 127 UTF-16 units are written all at once at the end of an encoding: a native write costs some 60 ns a
// call, as much as JS takes to write a 36-character ID, and a TokenMinted_v1 carries eleven strings. Each is laid out as
// ASCII (a one-byte length, one byte a unit) and queued; writeQueued writes the queue's text into `scratch` in one call
// and copies each string into its place. The text is ASCII exactly when its UTF-8 is as long as it; otherwise the layout
// was wrong and the encoding is redone with `on` false, writing each string by itself (about twice the cost, for the
// rare event with a non-ASCII string).
interface Queue {
  on: boolean;
  text: string;
  /** where each queued string starts, relative to the encoding's start, in increasing order */
  readonly at: number[];
  count: number;
}
const queue: Queue = { on: true, text: '', at: [], count: 0 };
// Where the queue's text is written before each string is copied into its place: kept from encoding to encoding, as
// it holds nothing once they are copied.
let scratch = Buffer.allocUnsafe(4096);
let scratchView = viewOf(scratch);
const float64 = new Float64Array(1);
const float64Bytes = new Uint8Array(float64.buffer);

function ensure(n: number): void {
  if (out.pos + n <= out.buf.length) return;
  const used = out.pos - out.base;
  const slab = Buffer.allocUnsafe(Math.max(SLAB, (used + n) * 2));
  out.buf.copy(slab, 0, out.base, out.pos);
  useSlab(slab);
  out.base = 0;
  out.pos = used;
}

function varint32(value: number): void {
  ensure(5);
  const buf = out.buf;
  let pos = out.pos;
  let v = value >>> 0;
  while (v > 127) {
    buf[pos++] = (v & 127) | 128;
    v >>>= 7;
  }
  buf[pos++] = v;
  out.pos = pos;
}

// A 64-bit two's complement value as low and high 32-bit halves, written as protobufjs's writeVarint64 does.
function varint64(lo: number, hi: number): void {
  ensure(10);
  const buf = out.buf;
  let pos = out.pos;
  while (hi) {
    buf[pos++] = (lo & 127) | 128;
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi >>>= 7;
  }
  while (lo > 127) {
    buf[pos++] = (lo & 127) | 128;
    lo >>>= 7;
  }
  buf[pos++] = lo;
  out.pos = pos;
}

// protobufjs's LongBits.fromNumber: an integral number as its 64-bit two's complement.
function varintNumber(value: number): void {
  if (value === 0) return varint64(0, 0);
  const negative = value < 0;
  if (negative) value = -value;
  let lo = value >>> 0;
  let hi = ((value - lo) / 4294967296) >>> 0;
  if (negative) {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
    if (++lo > 4294967295) {
      lo = 0;
      if (++hi > 4294967295) hi = 0;
    }
  }
  varint64(lo, hi);
}

function varintBig(value: bigint): void {
  const bits = BigInt.asUintN(64, value);
  varint64(Number(bits & 0xffffffffn), Number(bits >> 32n));
}

/** protobufjs's Writer.int32: negative values take ten bytes. */
function int32Value(value: number): void {
  if (value < 0) varintNumber(value);
  else varint32(value);
}

function double(value: number): void {
  ensure(8);
  float64[0] = value;
  out.buf.set(float64Bytes, out.pos);
  out.pos += 8;
}

// protobufjs's own UTF-8 writer, which BufferWriter uses for strings under 40 UTF-16 units: a lone surrogate becomes
// its 3-byte form rather than U+FFFD as Buffer writes it.
function utf8Short(text: string, buf: Buffer, offset: number): number {
  const start = offset;
  for (let i = 0; i < text.length; ++i) {
    let c1 = text.charCodeAt(i);
    let c2: number;
    if (c1 < 128) {
      buf[offset++] = c1;
    } else if (c1 < 2048) {
      buf[offset++] = (c1 >> 6) | 192;
      buf[offset++] = (c1 & 63) | 128;
    } else if ((c1 & 0xfc00) === 0xd800 && ((c2 = text.charCodeAt(i + 1)) & 0xfc00) === 0xdc00) {
      c1 = 0x10000 + ((c1 & 0x03ff) << 10) + (c2 & 0x03ff);
      ++i;
      buf[offset++] = (c1 >> 18) | 240;
      buf[offset++] = ((c1 >> 12) & 63) | 128;
      buf[offset++] = ((c1 >> 6) & 63) | 128;
      buf[offset++] = (c1 & 63) | 128;
    } else {
      buf[offset++] = (c1 >> 12) | 224;
      buf[offset++] = ((c1 >> 6) & 63) | 128;
      buf[offset++] = (c1 & 63) | 128;
    }
  }
  return offset - start;
}

type Utf8Writer = Buffer & { utf8Write(text: string, offset: number): number };
// ES2024, in Node 20 but not in this project's TypeScript lib.
type WellFormed = string & { isWellFormed(): boolean };

/** A length-delimited string exactly as protobufjs's BufferWriter.string writes it. */
function string(text: string): void {
  const n = text.length;
  if (n === 0) {
    ensure(1);
    out.buf[out.pos++] = 0;
    return;
  }
  if (n < 128 && queue.on) {
    ensure(n + 1);
    out.buf[out.pos++] = n;
    queue.at[queue.count++] = out.pos - out.base;
    queue.text += text;
    out.pos += n;
    return;
  }
  if (n < 128) {
    ensure(n * 3 + 5);
    const start = out.pos;
    // A JS loop costs a few ns a character, a native write some 60 ns a call: the loop for short text. The native
    // write matches protobufjs's own writer on text without lone surrogates.
    const len = n < 40 && (n <= 16 || !(text as WellFormed).isWellFormed()) ? utf8Short(text, out.buf, start + 1) : (out.buf as Utf8Writer).utf8Write(text, start + 1);
    out.pos = start + 1 + len;
    return endDelimited(start - out.base);
  }
  const len = Buffer.byteLength(text);
  varint32(len);
  ensure(len);
  (out.buf as Utf8Writer).utf8Write(text, out.pos);
  out.pos += len;
}

function bytes(value: Uint8Array): void {
  varint32(value.length);
  ensure(value.length);
  out.buf.set(value, out.pos);
  out.pos += value.length;
}

/**
 * Reserves one byte for the length of what follows and answers its place (relative to the encoding's start);
 * endDelimited writes the length there, moving the body when the length needs more.
 */
function beginDelimited(): number {
  ensure(1);
  return out.pos++ - out.base;
}

function endDelimited(place: number): void {
  const start = out.base + place;
  const len = out.pos - start - 1;
  if (len < 128) {
    out.buf[start] = len;
    return;
  }
  const size = len < 16384 ? 2 : len < 2097152 ? 3 : len < 268435456 ? 4 : 5;
  ensure(size - 1);
  const buf = out.buf;
  const at = out.base + place;
  buf.copyWithin(at + size, at + 1, out.pos);
  let v = len;
  let pos = at;
  while (v > 127) {
    buf[pos++] = (v & 127) | 128;
    v >>>= 7;
  }
  buf[pos] = v;
  out.pos += size - 1;
  // The queued strings in the moved body move with it.
  for (let i = queue.count - 1; i >= 0 && (queue.at[i] as number) > place; i--) (queue.at as number[])[i] = (queue.at[i] as number) + size - 1;
}

/** Writes the queued strings into their places; false, writing nothing in them, when their text is not all ASCII. */
function writeQueued(): boolean {
  const text = queue.text;
  const n = text.length;
  if (n === 0) return true;
  // Room for the longest UTF-8 the text can have, so a non-ASCII text is written whole and shows as longer.
  if (3 * n > scratch.length) {
    scratch = Buffer.allocUnsafe(3 * n);
    scratchView = viewOf(scratch);
  }
  if ((scratch as Utf8Writer).utf8Write(text, 0) !== n) return false;
  const buf = out.buf;
  const view = out.view;
  let from = 0;
  for (let i = 0; i < queue.count; i++) {
    const at = out.base + (queue.at[i] as number);
    // The length byte before the string, written when it was queued.
    const len = buf[at - 1] as number;
    // Four bytes a step through DataViews, which the compiler inlines: copyWithin is a call into the runtime that
    // costs more than this loop for an ID.
    let j = 0;
    for (; j + 4 <= len; j += 4) view.setUint32(at + j, scratchView.getUint32(from + j));
    for (; j < len; j++) buf[at + j] = scratch[from + j] as number;
    from += len;
  }
  return true;
}

// --- conversions of the JSON form, as jsonToWire makes them ---

function toInt32(value: unknown): number {
  const n = typeof value === 'string' && INTEGER_TEXT.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX ? n : decline();
}

/** A 64-bit integer: a number when safe, else a bigint; declines what jsonToWire refuses. */
function toInt64(value: unknown, unsigned: boolean): number | bigint {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || (unsigned && value < 0)) decline();
    return value;
  }
  if (typeof value !== 'string' || !INTEGER_TEXT.test(value)) return decline();
  if (value.length <= 15) {
    const n = Number(value);
    return unsigned && n < 0 ? decline() : n;
  }
  const big = BigInt(value);
  if (big < (unsigned ? 0n : INT64_MIN) || big > (unsigned ? UINT64_MAX : INT64_MAX)) decline();
  return big >= SAFE_MIN && big <= SAFE_MAX ? Number(big) : big;
}

function toDouble(value: unknown): number {
  if (typeof value === 'number') return value;
  if (value === 'NaN') return Number.NaN;
  if (value === 'Infinity') return Number.POSITIVE_INFINITY;
  if (value === '-Infinity') return Number.NEGATIVE_INFINITY;
  return decline();
}

// --- field writers: each takes the JSON value of a field (never null or undefined) and writes tag and value ---

type FieldWriter = (value: unknown) => void;

/** A field's key, computed once: each writer writes it with varint32 rather than through a closure of its own. */
function tagOf(number: number, wireType: number): number {
  return ((number << 3) | wireType) >>> 0;
}

/**
 * One value of a scalar or enum field. `implicit`: proto3 without `optional`, where protobufjs leaves out the
 * default value (the field is written only when the test it generates passes).
 */
function scalarWriter(def: FieldDef, implicit: boolean): FieldWriter {
  if (def.kind === 'enum') {
    const enumeration = enumDef(def.type);
    if (enumeration === undefined) throw new Error(`catalog names an unknown enum ${def.type}`);
    const byName = new Map(enumeration.values.map((v) => [v.name, v.number]));
    // protobufjs compares with the enum's first value, its type default.
    const typeDefault = enumeration.values[0]?.number ?? 0;
    const tag = tagOf(def.number, VARINT);
    return (value) => {
      const n = typeof value === 'string' ? byName.get(value) : Number.isInteger(value) ? toInt32(value) : undefined;
      if (n === undefined) decline();
      if (implicit && n === typeDefault) return;
      varint32(tag);
      int32Value(n);
    };
  }
  const type = def.type as ScalarType;
  switch (type) {
    case 'string': {
      const tag = tagOf(def.number, LENGTH);
      return (value) => {
        if (typeof value !== 'string') decline();
        if (implicit && value === '') return;
        varint32(tag);
        string(value);
      };
    }
    case 'bool': {
      const tag = tagOf(def.number, VARINT);
      return (value) => {
        if (typeof value !== 'boolean') decline();
        if (implicit && value === false) return;
        varint32(tag);
        ensure(1);
        out.buf[out.pos++] = value ? 1 : 0;
      };
    }
    case 'int32': {
      const tag = tagOf(def.number, VARINT);
      return (value) => {
        const n = toInt32(value);
        if (implicit && n === 0) return;
        varint32(tag);
        int32Value(n);
      };
    }
    case 'int64':
    case 'uint64': {
      const tag = tagOf(def.number, VARINT);
      const unsigned = type === 'uint64';
      return (value) => {
        const n = toInt64(value, unsigned);
        // A bigint here is beyond 2^53, never zero.
        if (implicit && n === 0) return;
        varint32(tag);
        if (typeof n === 'number') varintNumber(n);
        else varintBig(n);
      };
    }
    case 'double': {
      const tag = tagOf(def.number, FIXED64);
      return (value) => {
        const n = toDouble(value);
        if (implicit && Object.is(n, 0)) return;
        varint32(tag);
        double(n);
      };
    }
    case 'bytes': {
      const tag = tagOf(def.number, LENGTH);
      return (value) => {
        if (typeof value !== 'string' || !BASE64_TEXT.test(value)) decline();
        const data = Buffer.from(value, 'base64');
        if (implicit && data.length === 0) return;
        varint32(tag);
        bytes(data);
      };
    }
    default:
      throw new Error(`catalog names an unknown scalar type ${String(type)}`);
  }
}

/** google.protobuf.Timestamp: seconds (#1) and nanos (#2), each left out when zero (proto3, implicit presence). */
function timestampBody(value: unknown): void {
  const parts = typeof value === 'string' ? parseRfc3339(value) : undefined;
  if (parts === undefined) return decline();
  if (parts.seconds !== 0) {
    varint32(8);
    varintNumber(parts.seconds);
  }
  if (parts.nanos !== 0) {
    varint32(16);
    int32Value(parts.nanos);
  }
}

/**
 * google.protobuf.Value: the member of its oneof that the JSON value is (written even when a default), a Struct's
 * map entries in Object.keys order, a ListValue's values in order.
 */
function valueBody(value: unknown, depth: number): void {
  if (depth > MAX_VALUE_DEPTH) decline();
  if (value === null) {
    varint32(8); // null_value #1
    ensure(1);
    out.buf[out.pos++] = 0;
  } else if (typeof value === 'boolean') {
    varint32(32); // bool_value #4
    ensure(1);
    out.buf[out.pos++] = value ? 1 : 0;
  } else if (typeof value === 'string') {
    varint32(26); // string_value #3
    string(value);
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value)) decline();
    varint32(17); // number_value #2
    double(value);
  } else if (Array.isArray(value)) {
    varint32(50); // list_value #6
    const list = beginDelimited();
    for (let i = 0; i < value.length; i++) {
      varint32(10); // ListValue.values #1
      const item = beginDelimited();
      valueBody(value[i], depth + 1);
      endDelimited(item);
    }
    endDelimited(list);
  } else if (isPlainObject(value)) {
    varint32(42); // struct_value #5
    const struct = beginDelimited();
    for (const key of Object.keys(value)) {
      varint32(10); // Struct.fields #1, a map entry
      const entry = beginDelimited();
      varint32(10); // key #1
      string(key);
      varint32(18); // value #2
      const inner = beginDelimited();
      valueBody(value[key], depth + 1);
      endDelimited(inner);
      endDelimited(entry);
    }
    endDelimited(struct);
  } else {
    decline();
  }
}

function messageWriter(def: FieldDef): FieldWriter {
  const tag = tagOf(def.number, LENGTH);
  let body: (value: unknown) => void;
  if (def.type === TIMESTAMP) body = timestampBody;
  else if (def.type === VALUE) body = (value) => valueBody(value, 0);
  else {
    const type = def.type;
    // Resolved on first use: messages may name messages declared after them.
    let encode: ((json: unknown) => void) | undefined;
    body = (value) => (encode ??= messageBody(type))(value);
  }
  return (value) => {
    varint32(tag);
    const start = beginDelimited();
    body(value);
    endDelimited(start);
  };
}

function fieldWriter(def: FieldDef): FieldWriter {
  // proto3: a field without `optional` has no presence unless it is a message.
  const one = def.kind === 'message' ? messageWriter(def) : scalarWriter(def, !def.optional && !def.repeated);
  if (!def.repeated) return one;
  if (def.kind !== 'message' && def.type !== 'string' && def.type !== 'bytes') {
    // protobufjs packs repeated numbers; the catalog has none, so they are left to it.
    return () => decline();
  }
  return (value) => {
    if (!Array.isArray(value)) decline();
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      // jsonToWire refuses null and missing items of a list.
      if (item === null || item === undefined) decline();
      one(item);
    }
  };
}

const bodies = new Map<string, (json: unknown) => void>();

/** The fields of a message in field-number order, as protobufjs writes them, whatever order the JSON has. */
function messageBody(name: string): (json: unknown) => void {
  const known = bodies.get(name);
  if (known !== undefined) return known;
  const def = MESSAGES.find((m) => m.name === name);
  if (def === undefined) throw new Error(`catalog names an unknown message ${name}`);
  const body = compile(def);
  bodies.set(name, body);
  return body;
}

/**
 * Generated once per message so each field is read by its constant name: a loop over the field names would make one
 * megamorphic keyed load of every read, about as costly as the rest of the encoding. The names come from the constant
 * catalog and enter the code as JSON string literals; the field writers are passed in, one variable each.
 */
function compile(def: MessageDef): (json: unknown) => void {
  const fields = [...def.fields].sort((a, b) => a.number - b.number);
  const lines = ['return function encode(json) {', '  if (!isPlainObject(json)) decline();', '  let present = 0;', '  let v;'];
  fields.forEach((field, i) => {
    // proto3 JSON: null stands for the default (not written), except in a Value, where it is the JSON null itself.
    const nullIsValue = field.type === VALUE && !field.repeated;
    lines.push(`  v = json[${JSON.stringify(field.name)}];`, `  if (v !== undefined) { present++; ${nullIsValue ? '' : 'if (v !== null) '}w${i}(v); }`);
  });
  // A key that is no field of the message (or one set to undefined): jsonToWire names it.
  lines.push('  if (present !== Object.keys(json).length) decline();', '};');
  const factory = new Function('isPlainObject', 'decline', ...fields.map((_, i) => `w${i}`), lines.join('\n')) as (
    ...args: unknown[]
  ) => (json: unknown) => void;
  return factory(isPlainObject, decline, ...fields.map(fieldWriter));
}

/** Compiles the encoders of the given messages (by default every message of the catalog) once. */
export function createFastEncoder(messageNames: readonly string[] = MESSAGES.map((m) => m.name)): FastEncoder {
  const encoders = new Map(messageNames.map((name) => [name, messageBody(name)]));
  return (messageName, json) => {
    const body = encoders.get(messageName);
    if (body === undefined) return undefined;
    if (out.buf.length - out.pos < SLAB_RESERVE) {
      useSlab(Buffer.allocUnsafe(SLAB));
      out.pos = 0;
    }
    out.base = out.pos;
    queue.text = '';
    queue.count = 0;
    try {
      body(json);
      if (!writeQueued()) {
        out.pos = out.base;
        queue.count = 0;
        queue.on = false;
        try {
          body(json);
        } finally {
          queue.on = true;
        }
      }
    } catch (error) {
      // What a declined encoding wrote is written over by the next.
      out.pos = out.base;
      if (error === DECLINE) return undefined;
      throw error;
    } finally {
      // Not kept alive until the next encoding.
      queue.text = '';
    }
    // The slab is never written before `pos` again: the view stays the caller's.
    return out.buf.subarray(out.base, out.pos);
  };
}
