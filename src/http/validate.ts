// Request validation compiled once from the route schemas; failures name the field.
import { Kind, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { DefaultErrorFunction, SetErrorFunction, ValueErrorType } from '@sinclair/typebox/errors';
import { ValuePointer } from '@sinclair/typebox/value';
import { badRequest } from '../errors.js';

SetErrorFunction((e) => {
  const s = e.schema as TSchema & { anyOf?: TSchema[]; const?: unknown };
  if (e.errorType === ValueErrorType.Union && s.anyOf?.every((m) => m[Kind] === 'Literal')) {
    return `must be one of ${s.anyOf.map((m) => String((m as { const?: unknown }).const)).join(', ')}`;
  }
  if (e.errorType === ValueErrorType.ObjectAdditionalProperties) return 'unknown field';
  if (e.errorType === ValueErrorType.ObjectRequiredProperty) return 'is required';
  return DefaultErrorFunction(e);
});

/** JSON pointer /handles/0/type → handles[0].type */
export function fieldName(pointer: string, root: string): string {
  if (pointer === '') return root;
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc === '' ? p : `${acc}.${p}`), '');
}

export type Validator = (value: unknown) => unknown;

/**
 * Query strings to the types the schema wants, strictly: only plain decimal text becomes a number and
 * only true/false a boolean; anything else stays a string and fails validation by name. (TypeBox's
 * Value.Convert reads "1.5" and "1e2" as the integer 1, and "0x10" as 16.)
 */
function convertQuery(schema: TSchema, value: unknown): unknown {
  const props = (schema as { properties?: Record<string, TSchema> }).properties;
  if (!props || typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [name, raw] of Object.entries(out)) {
    const kind = props[name]?.[Kind];
    if (typeof raw !== 'string') continue;
    if (kind === 'Integer' && /^-?\d{1,15}$/.test(raw)) out[name] = Number(raw);
    else if (kind === 'Number' && /^-?\d{1,15}(\.\d{1,15})?$/.test(raw)) out[name] = Number(raw);
    else if (kind === 'Boolean' && (raw === 'true' || raw === 'false')) out[name] = raw === 'true';
  }
  return out;
}

export function compileValidator(schema: TSchema, root: string, convert: boolean): Validator {
  const check = TypeCompiler.Compile(schema);
  return (value) => {
    const v = convert ? convertQuery(schema, value) : value;
    if (check.Check(v)) return v;
    const first = check.Errors(v).First();
    if (!first) throw badRequest(`${root}: invalid`);
    let path = first.path;
    // For an unknown field TypeBox reports the object; name the field itself.
    if (first.type === ValueErrorType.ObjectAdditionalProperties && v && typeof v === 'object') {
      const parent = path === '' ? v : ValuePointer.Get(v, path);
      const props = (first.schema as { properties?: Record<string, unknown> }).properties ?? {};
      const extra = parent && typeof parent === 'object' ? Object.keys(parent).find((k) => !(k in props)) : undefined;
      if (extra !== undefined) path = `${path}/${extra}`;
    }
    throw badRequest(`${fieldName(path, root)}: ${first.message}`);
  };
}

/** Rejects JSON nested deeper than maxDepth before it reaches any recursive code. */
export function checkDepth(text: string, maxDepth: number): void {
  if (fewOpenings(text, maxDepth)) return;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > maxDepth) throw badRequest(`body: JSON nested deeper than ${maxDepth} levels`);
    } else if (c === 125 || c === 93) depth--;
  }
}

/**
 * Whether the text holds at most max opening brackets, inside strings or not: each level of nesting needs
 * one, so such a text cannot be too deep. Counted with indexOf, about ten times faster than the scan by
 * character that a text with more of them still gets (a small body is then checked for a few dozen ns).
 */
function fewOpenings(text: string, max: number): boolean {
  if (text.length <= max) return true;
  let n = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++n > max) return false;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++n > max) return false;
  return true;
}

/**
 * Refuses strings holding a lone UTF-16 surrogate ("\ud800" in JSON): they are not Unicode text, and the
 * log's encoding would store them as something else, so the value would change across a restart. Only
 * a body that spells such an escape is walked.
 */
export function checkUnicode(text: string, value: unknown): void {
  if (!/\\u[dD][89a-fA-F]/.test(text)) return;
  const lone = /\p{Cs}/u;
  const walk = (v: unknown, path: string): void => {
    if (typeof v === 'string') {
      if (lone.test(v)) throw badRequest(`${path}: holds a lone UTF-16 surrogate, which is not a Unicode character`);
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, `${path}[${i}]`));
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, item] of Object.entries(v)) {
        if (lone.test(k)) throw badRequest(`${path}: a key holds a lone UTF-16 surrogate, which is not a Unicode character`);
        walk(item, path === 'body' ? k : `${path}.${k}`);
      }
    }
  };
  walk(value, 'body');
}
