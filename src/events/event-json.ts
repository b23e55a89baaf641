// The in-memory form of an event: its proto3 JSON form with the seed's original (snake_case) field names.

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** An event message as JSON: enums by name, 64-bit integers as decimal strings, timestamps as RFC 3339 text. */
export type EventJson = { [field: string]: JsonValue };

/** The field names protobufjs gives google.protobuf.Value, Struct and ListValue: its bundled copies are camelCase. */
export const VALUE_FIELDS = {
  null: 'nullValue',
  number: 'numberValue',
  string: 'stringValue',
  bool: 'boolValue',
  struct: 'structValue',
  list: 'listValue',
} as const;

/** Writes a key that may be "__proto__" as an own property instead of replacing the prototype. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
