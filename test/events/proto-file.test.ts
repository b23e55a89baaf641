// The checked-in events.proto against the catalog: generated text, and what protobufjs reads from it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { ENUMS, MESSAGES } from '../../src/events/catalog.js';
import { renderProto } from '../../src/events/proto-text.js';

const protoPath = fileURLToPath(new URL('../../src/events/events.proto', import.meta.url));
const checkedIn = readFileSync(protoPath, 'utf8');

describe('events.proto', () => {
  it('is exactly what scripts/gen-proto.ts renders from the catalog now', () => {
    assert.equal(checkedIn, renderProto(), 'run `npx tsx scripts/gen-proto.ts` and commit the result');
  });

  const parsed = protobuf.parse(checkedIn, { keepCase: true });
  const ns = parsed.root.lookup('events') as protobuf.Namespace;

  it('declares proto3 package events and imports Timestamp and Struct', () => {
    assert.match(checkedIn, /^syntax = "proto3";$/m);
    assert.equal(parsed.package, 'events');
    assert.deepEqual([...(parsed.imports ?? [])].sort(), ['google/protobuf/struct.proto', 'google/protobuf/timestamp.proto']);
  });

  it('holds exactly the catalog enums and messages, nothing else', () => {
    const declared = ns.nestedArray.map((n) => `${n instanceof protobuf.Enum ? 'enum' : 'message'} ${n.name}`);
    const expected = [...ENUMS.map((e) => `enum ${e.name}`), ...MESSAGES.map((m) => `message ${m.name}`)];
    assert.deepEqual(declared, expected);
  });

  it('gives every enum exactly the catalog values and reserved numbers', () => {
    for (const def of ENUMS) {
      const parsedEnum = ns.lookupEnum(def.name);
      assert.deepEqual({ ...parsedEnum.values }, Object.fromEntries(def.values.map((v) => [v.name, v.number])), def.name);
      const reserved = (def.reserved ?? []).map((r) => [r.number, r.number]);
      assert.deepEqual(parsedEnum.reserved ?? [], reserved, def.name);
    }
  });

  it('gives every message exactly the catalog fields, numbers, types and labels', () => {
    for (const def of MESSAGES) {
      const type = ns.lookupType(def.name);
      const actual = type.fieldsArray.map((f) => ({
        name: f.name,
        number: f.id,
        type: f.type,
        repeated: f.repeated,
        optional: (f.options as Record<string, unknown> | undefined)?.['proto3_optional'] === true,
      }));
      const expected = def.fields.map((f) => ({ name: f.name, number: f.number, type: f.type, repeated: f.repeated, optional: f.optional }));
      assert.deepEqual(actual, expected, def.name);
    }
  });

  it('resolves every type reference once loaded with its imports', () => {
    const root = new protobuf.Root().loadSync(protoPath, { keepCase: true });
    for (const def of MESSAGES) {
      // loadSync has already resolved every reference, or thrown.
      for (const field of root.lookupType(`events.${def.name}`).fieldsArray) {
        const kind = def.fields.find((f) => f.name === field.name)?.kind;
        if (kind === 'enum') assert.ok(field.resolvedType instanceof protobuf.Enum, `${def.name}.${field.name}`);
        else if (kind === 'message') assert.ok(field.resolvedType instanceof protobuf.Type, `${def.name}.${field.name}`);
        else assert.equal(field.resolvedType, null, `${def.name}.${field.name}`);
      }
    }
  });
});
