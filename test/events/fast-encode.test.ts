// The compiled encoder writes every event message byte for byte as jsonToWire + protobufjs do, and declines every misfit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { EVENT_MESSAGE_NAMES, enumDef, messageDef } from '../../src/events/catalog.js';
import { createEventCodec } from '../../src/events/codec.js';
import { createFastEncoder } from '../../src/events/fast-encode.js';
import { EventShapeError, jsonToWire } from '../../src/events/json-to-wire.js';
import { randomEvent } from '../../src/events/random.js';
import { TIMESTAMP, VALUE, type FieldDef } from '../../src/events/schema.js';
import { sampleMetadata } from '../support/event-metadata.js';
import { seededRng } from '../support/seeded-rng.js';

type Rng = () => number;
const root = new protobuf.Root().loadSync(fileURLToPath(new URL('../../src/events/events.proto', import.meta.url)), { keepCase: true });
const fast = createFastEncoder(EVENT_MESSAGE_NAMES);
const codec = createEventCodec();

/** The path the codec took before the fast one: bytes, or the error it throws. */
function slow(name: string, json: unknown): { bytes: Uint8Array } | { error: unknown } {
  try {
    return { bytes: root.lookupType(`events.${name}`).encode(jsonToWire(name, json)).finish() };
  } catch (error) {
    return { error };
  }
}

const show = (json: unknown): string => JSON.stringify(json, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v === undefined ? '<undefined>' : v));

/** Valid input: the same bytes as the slow path, and the fast path does not decline it. */
function assertSame(name: string, json: unknown): void {
  const expected = slow(name, json);
  assert.ok('bytes' in expected, `${name} ${show(json)}: the slow path refuses it: ${String((expected as { error: unknown }).error)}`);
  const bytes = fast(name, json);
  assert.ok(bytes !== undefined, `${name} declined: ${show(json)}`);
  assert.ok(Buffer.from(expected.bytes).equals(bytes), `${name} ${show(json)}\n fast ${bytes.toString('hex')}\n slow ${Buffer.from(expected.bytes).toString('hex')}`);
}

/** Any input: what the slow path refuses the fast one declines, and what both take they write alike. */
function assertConsistent(name: string, json: unknown): 'refused' | 'same' | 'declined' {
  const expected = slow(name, json);
  const bytes = fast(name, json);
  if ('error' in expected) {
    assert.ok(expected.error instanceof EventShapeError, `${name}: ${String(expected.error)}`);
    assert.equal(bytes, undefined, `${name} accepted what jsonToWire refuses (${expected.error.message}): ${show(json)}`);
    // And the codec still throws the very error jsonToWire names.
    assert.throws(() => codec.encodeEvent(name, json as never), (e: unknown) => e instanceof EventShapeError && e.message === (expected.error as Error).message);
    return 'refused';
  }
  if (bytes === undefined) return 'declined';
  assert.ok(Buffer.from(expected.bytes).equals(bytes), `${name} ${show(json)}`);
  return 'same';
}

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;

const LONG_ASCII = 'x'.repeat(200);
const STRINGS = [
  '', 'a', 'héllo wörld', '日本語のテキスト', '😀 emoji 🎉', 'lone \ud800 high', 'lone \udc00 low', '\ud83d', 'a'.repeat(39), 'é'.repeat(39),
  'a'.repeat(40), '日'.repeat(40), '😀'.repeat(20), 'x\ud800'.repeat(30), 'b'.repeat(127), 'c'.repeat(128), LONG_ASCII, 'ü'.repeat(300),
  '\ud800'.repeat(50), '\u0000nul', '0190a0b1-0000-7000-8000-000000000001',
];
const INT32 = [0, -0, 1, -1, 127, 128, 300, 2 ** 31 - 1, -(2 ** 31), '0', '42', '-42', '007', '2147483647', '-2147483648'];
const INT64 = [
  0, -0, 1, -1, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 32, -(2 ** 32), '0', '-0', '1', '-1', '123456789012345', '-12345678901234',
  '9007199254740991', '9007199254740993', '-9007199254740993', '9223372036854775807', '-9223372036854775808', '0000000000000000000042',
  '4294967296', '-4294967297',
];
const UINT64 = [0, 1, 2 ** 53 - 1, '0', '-0', '1', '18446744073709551615', '9223372036854775808', '9007199254740993', '000000000000000000001'];
const DOUBLES = [0, -0, 1.5, -2.5, 1e300, -1e-300, 5e-324, Number.MAX_VALUE, 'NaN', 'Infinity', '-Infinity', 2 ** 53 + 2, 123];
const BYTES = ['', 'AA==', 'AAEC', 'ab-_', '////', 'aGVsbG8gd29ybGQ='];
const TIMESTAMPS = [
  '1970-01-01T00:00:00Z', '1969-12-31T23:59:59.999999999Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999999Z',
  '2026-11-23T18:00:00.5+01:00', '2026-11-23T17:00:01.000001z', '1970-01-01T00:00:00.000000001Z', '2000-02-29T12:00:00-12:00',
];
const KEYS = ['a', '', '__proto__', '0', '1', '10', 'ключ', '😀', 'constructor', 'k'.repeat(130), 'nested'];

function jsonValue(rng: Rng, depth: number): unknown {
  const r = rng();
  if (depth >= 4 || r < 0.5) {
    return pick(rng, [null, true, false, 0, -0, 1, -1.5, 1e21, 2 ** 60, 5e-324, ...STRINGS]);
  }
  if (r < 0.75) return Array.from({ length: Math.floor(rng() * 4) }, () => jsonValue(rng, depth + 1));
  // Built as JSON.parse would, so "__proto__" is an ordinary own key.
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(rng() * 4); i > 0; i--) {
    Object.defineProperty(out, pick(rng, KEYS), { value: jsonValue(rng, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function deepValue(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { d: value };
  return value;
}

function single(def: FieldDef, rng: Rng): unknown {
  if (def.kind === 'enum') {
    const values = enumDef(def.type)?.values ?? [];
    return rng() < 0.7 ? pick(rng, values).name : pick(rng, [0, 1, 7, 2 ** 31 - 1, -1, -(2 ** 31)]);
  }
  if (def.kind === 'message') {
    if (def.type === TIMESTAMP) return pick(rng, TIMESTAMPS);
    if (def.type === VALUE) return rng() < 0.1 ? deepValue(32) : jsonValue(rng, 0);
    return message(def.type, rng);
  }
  switch (def.type) {
    case 'string': return pick(rng, STRINGS);
    case 'bool': return rng() < 0.5;
    case 'int32': return pick(rng, INT32);
    case 'int64': return pick(rng, INT64);
    case 'uint64': return pick(rng, UINT64);
    case 'double': return pick(rng, DOUBLES);
    case 'bytes': return pick(rng, BYTES);
    default: throw new Error(`no sample of ${def.type}`);
  }
}

/** Any valid JSON form: fields omitted, null, defaults or edge values, in shuffled key order. */
function message(name: string, rng: Rng): Record<string, unknown> {
  const def = messageDef(name);
  if (def === undefined) throw new Error(`unknown message ${name}`);
  const fields = [...def.fields].sort(() => rng() - 0.5);
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const r = rng();
    if (r < 0.15) continue;
    if (r < 0.22) out[field.name] = null;
    else if (field.repeated) out[field.name] = Array.from({ length: Math.floor(rng() * 4) }, () => single(field, rng));
    else out[field.name] = single(field, rng);
  }
  return out;
}

// Misfits of each kind of field, and of objects as such.
const MISFITS: readonly unknown[] = [
  undefined, 1.5, 'abc', '', true, [], {}, [null], [1], { x: 1 }, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, -(2 ** 31) - 1,
  '2147483648', '-1', '18446744073709551616', '-9223372036854775809', '1e3', ' 1', '2026-13-01T00:00:00Z', '2026-11-23 18:00:00Z',
  'not base64!', new Date(0), () => 1, 10n, Symbol('s'), Object.create({ inherited: 1 }) as unknown, new Map(), deepValue(33), [undefined],
  { a: undefined }, { a: Number.NaN }, { a: new Date(0) }, 'Unknown_Enum_Name', 2 ** 53, -(2 ** 53),
];

/** A valid message with one field, somewhere in it, replaced by a misfit (or an unknown key added). */
function mutate(name: string, json: Record<string, unknown>, rng: Rng): Record<string, unknown> {
  const def = messageDef(name);
  const copy = { ...json };
  if (def === undefined || rng() < 0.1) return { ...copy, no_such_field: 'x' };
  const field = pick(rng, def.fields);
  const current = copy[field.name];
  if (field.kind === 'message' && field.type !== TIMESTAMP && field.type !== VALUE && rng() < 0.5) {
    if (field.repeated && Array.isArray(current) && current.length > 0) {
      copy[field.name] = current.map((item, i) => (i === 0 ? mutate(field.type, item as Record<string, unknown>, rng) : item));
    } else if (!field.repeated && current !== null && typeof current === 'object') {
      copy[field.name] = mutate(field.type, current as Record<string, unknown>, rng);
    }
    return copy;
  }
  const misfit = pick(rng, MISFITS);
  copy[field.name] = field.repeated && rng() < 0.5 ? [single(field, rng), misfit] : misfit;
  return copy;
}

describe('fast event encoder', () => {
  it('writes the generated sample of every event message as protobufjs does', () => {
    for (const name of EVENT_MESSAGE_NAMES) {
      const type = name.replace(/_v1$/, '');
      for (let seed = 1; seed <= 20; seed++) {
        assertSame(name, randomEvent(name, sampleMetadata({ type }), seededRng(seed)));
      }
    }
  });

  it('writes edge values of every field kind as protobufjs does: unicode, defaults, nulls, 64-bit, nested values', () => {
    const rng = seededRng(7);
    for (const name of EVENT_MESSAGE_NAMES) {
      assertSame(name, {});
      for (let i = 0; i < 150; i++) assertSame(name, message(name, rng));
    }
  });

  it('writes hand-picked cases byte for byte', () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ['GateHeartbeat_v1', { sequence: '9223372036854775807' }],
      ['GateHeartbeat_v1', { event_metadata: { event_version: '18446744073709551615' } }],
      ['GateHeartbeat_v1', { sequence: '-9223372036854775808' }],
      ['GateHeartbeat_v1', { sequence: 0 }],
      ['GateHeartbeat_v1', { sequence: '-0' }],
      ['PasswordChanged_v1', { initiated_by: 'PasswordChangeInitiator_UNSPECIFIED', person_id: '' }],
      ['PasswordChanged_v1', { initiated_by: -5 }],
      ['PersonCreated_v1', { prev_person_type: '', handles: [], gdpr_consents: ['', ''] }],
      ['GateServerStarted_v1', { version: { build_date: '1970-01-01T00:00:00Z', build_commit: '', built_by: null } }],
      ['GateRequestHandled_v1', { timing_metadata: { elapsed: -0 }, plugins: [{ plugin_metadata: null }, { plugin_metadata: {} }, { plugin_metadata: [] }] }],
      ['GateRequestHandled_v1', { plugins: [{ plugin_metadata: JSON.parse('{"__proto__":{"c":[]},"2":1,"b":null,"1":"x"}') as unknown }] }],
      ['GateRequestHandled_v1', { plugins: [{ plugin_metadata: { big: 'y'.repeat(20_000), list: Array.from({ length: 300 }, (_, i) => i) } }] }],
      ['GateRequestHandled_v1', { plugins: [{ plugin_metadata: deepValue(32) }] }],
      ['AWSIAMRoleCreated_v1', { max_session_duration: '-1', created_at: '0001-01-01T00:00:00Z', description: 'z'.repeat(70_000) }],
      ['GateRequestHandled_v1', { http_request_metadata: { status_code: '-2147483648', request_length: '9007199254740993' } }],
    ];
    for (const [name, json] of cases) assertSame(name, json);
  });

  it('declines every misfit jsonToWire refuses, and the codec still throws its EventShapeError', () => {
    const rng = seededRng(11);
    const outcomes = { refused: 0, same: 0, declined: 0 };
    for (const name of EVENT_MESSAGE_NAMES) {
      for (let i = 0; i < 60; i++) outcomes[assertConsistent(name, mutate(name, message(name, rng), rng))]++;
      for (const misfit of [null, [], 'x', 1, new Date(0), Object.create({}) as unknown]) outcomes[assertConsistent(name, misfit)]++;
    }
    // The mutations do produce misfits, and the fast path declines nothing valid beyond them.
    assert.ok(outcomes.refused > 1000, JSON.stringify(outcomes));
    assert.equal(outcomes.declined, 0, JSON.stringify(outcomes));
  });

  it('never writes over bytes it returned, across slabs and encodings that outgrow one', () => {
    const rng = seededRng(3);
    const kept: Array<{ name: string; json: unknown; bytes: Buffer }> = [];
    for (let i = 0; i < 400; i++) {
      const name = pick(rng, EVENT_MESSAGE_NAMES);
      const json = i % 50 === 7 ? { event_metadata: { event_id: 'é'.repeat(5000 + i) } } : message(name, rng);
      const bytes = fast(name, json);
      if (i % 3 === 0) fast(name, { no_such_field: 1 }); // a declined encoding between
      assert.ok(bytes !== undefined);
      kept.push({ name, json, bytes });
    }
    for (const { name, json, bytes } of kept) assert.ok(Buffer.from((slow(name, json) as { bytes: Uint8Array }).bytes).equals(bytes), name);
  });

  it('writes strings of every length and alphabet in the fields of the hot events, ASCII or not, first or last', () => {
    // Lengths either side of where the encoder changes how it writes a string (17, 40, 128 units), ASCII up to its last
    // character and just past it, and non-ASCII of every UTF-8 length, lone surrogates included.
    const variants = [
      'a', 'x'.repeat(16), 'x'.repeat(17), 'y'.repeat(39), 'y'.repeat(40), 'z'.repeat(127), 'z'.repeat(128), '\u007f', 'a\u007f'.repeat(20),
      '\u0080', 'é', 'josé@example.com', 'ü'.repeat(40), '日本', '😀', 'id-😀-'.repeat(10), '\ud800', 'x\ud800'.repeat(25), '\udc00x'.repeat(64),
    ];
    const hot = ['TokenMinted_v1', 'PersonCreated_v1', 'AuthenticationSucceeded_v1'];
    for (const name of hot) {
      const sample = randomEvent(name, sampleMetadata({ type: name.replace(/_v1$/, '') }), seededRng(4)) as Record<string, Record<string, unknown>>;
      const metadata = sample['event_metadata'] as Record<string, unknown>;
      const top = messageDef(name)?.fields.filter((f) => f.kind === 'scalar' && f.type === 'string' && !f.repeated).map((f) => f.name) ?? [];
      assert.ok(top.length > 0, name);
      for (const text of variants) {
        // The first string written (event_id), the last (a top-level field), and a nested one.
        assertSame(name, { ...sample, event_metadata: { ...metadata, event_id: text } });
        assertSame(name, { ...sample, [top.at(-1) as string]: text });
        assertSame(name, { ...sample, event_metadata: { ...metadata, organization_id: text, root_organization_id: text } });
        for (const field of top) assertSame(name, { ...sample, [field]: text });
      }
    }
    assertSame('PersonCreated_v1', { person_id: 'p', handles: [{ type: 'EmailAddress', value: 'ascii@example.com' }, { type: 'EmailAddress', value: 'jürgen@exämple.com' }] });
    assertSame('AuthenticationSucceeded_v1', { handle: { type: 'EmailAddress', value: '用户@例子.广告' }, authenticated_methods: ['password', 'otp', ''] });
  });

  it('keeps queued strings in place when the body around them outgrows a one-, two- or three-byte length', () => {
    const ids = (n: number, width: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`key-${i}`, `${i}`.padStart(width, '0')]));
    for (const [n, width] of [[3, 40], [20, 90], [200, 100], [2000, 120]] as const) {
      const metadata = ids(n, width);
      assertSame('GateRequestHandled_v1', { plugins: [{ plugin_id: 'before', plugin_metadata: metadata }, { plugin_id: 'after', plugin_metadata: { nested: [metadata, 'tail'] } }] });
      // One non-ASCII string anywhere sends the whole encoding the other way.
      assertSame('GateRequestHandled_v1', { plugins: [{ plugin_id: 'before', plugin_metadata: { ...metadata, last: 'ñ' } }] });
    }
    const long = 'u'.repeat(100);
    const metadata = { event_id: long, event_type: long, event_name: long, organization_id: long, root_organization_id: long, timestamp: '2026-11-25T16:00:00.123456789Z' };
    assertSame('TokenMinted_v1', { event_metadata: metadata, token_id: 't', person_id: long, authentications: [{ timestamp: long, method: long, handle: { type: 'EmailAddress', value: long } }] });
  });

  it('never writes over bytes it returned when ASCII and non-ASCII encodings alternate', () => {
    const kept: Array<{ json: Record<string, unknown>; bytes: Buffer }> = [];
    for (let i = 0; i < 300; i++) {
      const json = { person_id: i % 3 === 0 ? `pérson-${i}` : `person-${i}`, region: 'r'.repeat(i % 130), handles: [{ type: 'EmailAddress', value: i % 5 === 0 ? '😀'.repeat(i % 50) : `h${i}@example.com` }] };
      const bytes = fast('PersonCreated_v1', json);
      assert.ok(bytes !== undefined);
      kept.push({ json, bytes });
    }
    for (const { json, bytes } of kept) assert.ok(Buffer.from((slow('PersonCreated_v1', json) as { bytes: Uint8Array }).bytes).equals(bytes), show(json));
  });

  it('declines misfits of a JSON value: too deep, not finite, not JSON', () => {
    for (const misfit of [deepValue(33), [deepValue(32)], { a: Number.NaN }, [Number.NEGATIVE_INFINITY], { d: new Date(0) }, [undefined], { u: undefined }, new Map()]) {
      assert.equal(assertConsistent('GateRequestHandled_v1', { plugins: [{ plugin_metadata: misfit }] }), 'refused', show(misfit));
    }
  });

  it('names the misfit as before', () => {
    assert.throws(() => codec.encodeEvent('TokenMinted_v1', { authentications: [{ handle: { type: 'Nope' } }] }), {
      name: 'EventShapeError',
      message: 'TokenMinted_v1.authentications[0].handle.type: expected a PersonHandleType name, got "Nope"',
    });
    assert.throws(() => codec.encodeEvent('TokenMinted_v1', { token_idd: 'x' }), { name: 'EventShapeError', path: 'TokenMinted_v1.token_idd' });
    assert.throws(() => codec.encodeEvent('EventMetadata', {}), RangeError);
  });

  it('leaves messages outside the event catalog to protobufjs', () => {
    assert.equal(fast('EventMetadata', {}), undefined);
    assert.equal(fast('NoSuchMessage_v1', {}), undefined);
  });
});
