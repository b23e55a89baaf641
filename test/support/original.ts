// Checks our answers against the original's OpenAPI shapes (test/fixtures/original-openapi.json, written by
// scripts/original-shapes.ts): the subset of JSON Schema that document uses, OpenAPI 3.0's `nullable` included.
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';

type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  nullable?: boolean;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  additionalProperties?: boolean | Schema;
};
type Operation = { requestBody?: Schema | null; responses: Record<string, Schema | null> };

export const original = JSON.parse(readFileSync(new URL('../fixtures/original-openapi.json', import.meta.url), 'utf8')) as {
  document: string;
  source: string;
  operations: Record<string, Operation>;
};

/** Where `value` departs from `schema`, as `path: problem` lines; empty when it conforms. */
export function shapeProblems(schema: Schema | null | undefined, value: unknown, at = '$'): string[] {
  if (!schema) return [];
  if (value === null) return schema.nullable || schema.type === undefined ? [] : [`${at}: null where ${schema.type} is expected`];
  const problems: string[] = [];
  for (const s of schema.allOf ?? []) problems.push(...shapeProblems(s, value, at));
  for (const alternatives of [schema.oneOf, schema.anyOf]) {
    if (alternatives && !alternatives.some((s) => shapeProblems(s, value, at).length === 0)) problems.push(`${at}: matches none of ${alternatives.length} alternatives`);
  }
  if (schema.enum && !schema.enum.includes(value)) problems.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  const actual = Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
  if (schema.type && !(schema.type === actual || (schema.type === 'number' && actual === 'integer'))) return [...problems, `${at}: ${actual} where ${schema.type} is expected`];
  if (actual === 'array' && schema.items) (value as unknown[]).forEach((v, i) => problems.push(...shapeProblems(schema.items, v, `${at}[${i}]`)));
  if (actual === 'object') {
    const record = value as Record<string, unknown>;
    for (const name of schema.required ?? []) if (!(name in record)) problems.push(`${at}.${name}: required, missing`);
    for (const [name, v] of Object.entries(record)) {
      const s = schema.properties?.[name] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (s) problems.push(...shapeProblems(s, v, `${at}.${name}`));
    }
  }
  return problems;
}

/** Asserts that a success answer (status and parsed body) of `operation` ("GET /persons/{person_id}/handles")
 * has the status and the shape the original documents for it. */
export function assertOriginalShape(operation: string, status: number, body: unknown): void {
  const op = original.operations[operation];
  assert.ok(op, `${operation} is not an operation of ${original.document}`);
  assert.ok(String(status) in op.responses, `${operation}: the original answers ${Object.keys(op.responses).join(' or ')}, not ${status}`);
  const problems = shapeProblems(op.responses[String(status)], body);
  assert.deepEqual(problems, [], `${operation} ${status} departs from ${original.document}:\n${problems.join('\n')}`);
}

/** Asserts that a request body the original's clients send validates against its request schema. */
export function assertOriginalRequest(operation: string, body: unknown): void {
  const op = original.operations[operation];
  assert.ok(op, `${operation} is not an operation of ${original.document}`);
  assert.deepEqual(shapeProblems(op.requestBody, body), [], `${operation}: this request body is not one the original documents`);
}

/** "GET /persons/{person_id}/handles" → "GET /persons/{}/handles": operations compare by method and path template. */
export const templateOf = (operation: string) => operation.replace(/\{[^}]+\}/g, '{}');
