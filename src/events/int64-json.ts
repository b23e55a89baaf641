// proto3's JSON form of a 64-bit integer is a decimal string. Parsers accept a number too, so an event may
// arrive with one (a Gate's report, an emitter that counted with a number); the stream must
// never hand one on: a consumer's protobuf library reads numbers only up to 2^53, so the mistake would show
// only once a value grew past that. The walkers are compiled once from the catalog, per message.
import { EVENT_MESSAGE_NAMES, messageDef } from './catalog.js';
import type { FieldDef } from './schema.js';

/** Returns the object itself when it holds no 64-bit number, else a copy with each one as a decimal string. */
type Walker = (value: Record<string, unknown>) => Record<string, unknown>;

const SIXTY_FOUR = new Set(['int64', 'uint64']);

/** The fields that are, or lead to, a 64-bit integer; undefined when the message has none. */
function walkerOf(name: string, seen: Map<string, Walker | undefined>): Walker | undefined {
  if (seen.has(name)) return seen.get(name);
  seen.set(name, undefined); // the catalog has no recursive messages; this only guards against one
  const def = messageDef(name);
  const steps: Array<{ field: FieldDef; convert: (v: unknown) => unknown }> = [];
  for (const field of def?.fields ?? []) {
    // The service writes event_metadata itself, its event_version as text (metadata.ts).
    if (field.name === 'event_metadata') continue;
    if (field.kind === 'scalar' && SIXTY_FOUR.has(field.type)) steps.push({ field, convert: decimal });
    else if (field.kind === 'message') {
      const inner = walkerOf(field.type, seen);
      if (inner !== undefined) steps.push({ field, convert: (v) => (isObject(v) ? inner(v) : v) });
    }
  }
  const walker: Walker | undefined =
    steps.length === 0
      ? undefined
      : (value) => {
          let out = value;
          for (const { field, convert } of steps) {
            const v = value[field.name];
            if (v === undefined || v === null) continue;
            const next = field.repeated && Array.isArray(v) ? mapArray(v, convert) : convert(v);
            if (next === v) continue;
            if (out === value) out = { ...value };
            out[field.name] = next;
          }
          return out;
        };
  seen.set(name, walker);
  return walker;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An integer as its decimal text (never exponent notation); anything else is left as it is, to validation. */
function decimal(v: unknown): unknown {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? String(v) : Number.isInteger(v) ? BigInt(v).toString() : v;
  return typeof v === 'bigint' ? v.toString() : v;
}

function mapArray(values: unknown[], convert: (v: unknown) => unknown): unknown[] {
  let out = values;
  values.forEach((v, i) => {
    const next = convert(v);
    if (next === v) return;
    if (out === values) out = [...values];
    out[i] = next;
  });
  return out;
}

const seen = new Map<string, Walker | undefined>();
const WALKERS: ReadonlyMap<string, Walker> = new Map(
  EVENT_MESSAGE_NAMES.flatMap((name) => {
    const w = walkerOf(name, seen);
    return w === undefined ? [] : [[name, w] as const];
  }),
);

/**
 * The event's body (or the whole event) with every 64-bit integer, nested ones included, in proto3's JSON form.
 * Most messages have none: for them this is one map lookup, and the body itself comes back.
 */
export function int64AsDecimal(messageName: string, body: Record<string, unknown>): Record<string, unknown> {
  const walk = WALKERS.get(messageName);
  return walk === undefined ? body : walk(body);
}
