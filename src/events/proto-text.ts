// Renders the catalog as the text of events.proto, so the shipped .proto can never drift from the code.
import { EVENT_TYPES, ENUMS, MESSAGES } from './catalog.js';
import type { EnumDef, FieldDef, MessageDef, StringFormat } from './schema.js';

const FORMAT_NOTES: Readonly<Record<StringFormat, string>> = {
  uuid: 'UUID',
  rfc3339: 'RFC 3339 with nanoseconds',
  'rfc3339-micros': 'RFC 3339 UTC, truncated to microseconds',
  ip: 'IPv4 or IPv6 text',
  json: 'JSON text',
};

function renderEnum(def: EnumDef): string[] {
  const lines = [`enum ${def.name} {`];
  for (const value of def.values) lines.push(`  ${value.name} = ${value.number};`);
  for (const reserved of def.reserved ?? []) lines.push(`  reserved ${reserved.number}; // ${reserved.comment}`);
  lines.push('}');
  return lines;
}

function renderField(field: FieldDef): string {
  const label = field.repeated ? 'repeated ' : field.optional ? 'optional ' : '';
  const note = field.format === undefined ? '' : ` // ${FORMAT_NOTES[field.format]}`;
  return `  ${label}${field.type} ${field.name} = ${field.number};${note}`;
}

function messageHeader(def: MessageDef): string[] {
  const event = EVENT_TYPES.find((e) => e.messageName === def.name);
  const lines: string[] = [];
  if (event !== undefined) {
    const number = event.number === null ? 'no type number' : `type ${event.number}`;
    lines.push(`// ${event.type}: ${number}, version ${event.version}, source ${event.emitters.join(' or ')}.`);
  }
  if (def.comment !== undefined) lines.push(`// ${def.comment}`);
  return lines;
}

function renderMessage(def: MessageDef): string[] {
  return [...messageHeader(def), `message ${def.name} {`, ...def.fields.map(renderField), '}'];
}

export function renderProto(): string {
  const blocks: string[][] = [
    [
      '// Generated from src/events/catalog.ts by scripts/gen-proto.ts; do not edit by hand.',
      'syntax = "proto3";',
      '',
      'package events;',
      '',
      'import "google/protobuf/struct.proto";',
      'import "google/protobuf/timestamp.proto";',
    ],
    ...ENUMS.map(renderEnum),
    ...MESSAGES.map(renderMessage),
  ];
  return blocks.map((lines) => lines.join('\n')).join('\n\n') + '\n';
}
