// The shape of the event catalog: messages, fields and enums as plain data, and the helpers that write them tersely.

export type ScalarType = 'string' | 'bool' | 'int32' | 'int64' | 'uint64' | 'double' | 'bytes';

export const SCALAR_TYPES: readonly ScalarType[] = ['string', 'bool', 'int32', 'int64', 'uint64', 'double', 'bytes'];

export const TIMESTAMP = 'google.protobuf.Timestamp';
export const VALUE = 'google.protobuf.Value';

/** What a string field holds, as the seed describes it; drives documentation and random content. */
export type StringFormat = 'uuid' | 'rfc3339' | 'rfc3339-micros' | 'ip' | 'json';

export type FieldKind = 'scalar' | 'enum' | 'message';

export interface FieldDef {
  readonly name: string;
  readonly number: number;
  readonly kind: FieldKind;
  /** A ScalarType, an enum name, a message name of this package, or TIMESTAMP / VALUE. */
  readonly type: string;
  readonly repeated: boolean;
  /** proto3 `optional`: the field has presence, so absence and the default value differ. */
  readonly optional: boolean;
  readonly format?: StringFormat;
}

export interface MessageDef {
  readonly name: string;
  readonly fields: readonly FieldDef[];
  readonly comment?: string;
}

export interface EnumDef {
  readonly name: string;
  readonly values: readonly { readonly name: string; readonly number: number }[];
  readonly reserved?: readonly { readonly number: number; readonly comment: string }[];
}

export interface FieldOptions {
  readonly repeated?: boolean;
  readonly optional?: boolean;
  readonly format?: StringFormat;
}

export const REPEATED: FieldOptions = { repeated: true };
export const OPTIONAL: FieldOptions = { optional: true };

function field(name: string, number: number, kind: FieldKind, type: string, options: FieldOptions): FieldDef {
  const def: FieldDef = {
    name,
    number,
    kind,
    type,
    repeated: options.repeated === true,
    optional: options.optional === true,
  };
  return options.format === undefined ? def : { ...def, format: options.format };
}

export function scalar(name: string, number: number, type: ScalarType, options: FieldOptions = {}): FieldDef {
  return field(name, number, 'scalar', type, options);
}

/** The seed types most fields as strings, or leaves the type out where "others are strings". */
export function str(name: string, number: number, options: FieldOptions = {}): FieldDef {
  return field(name, number, 'scalar', 'string', options);
}

export function enumField(name: string, number: number, type: string, options: FieldOptions = {}): FieldDef {
  return field(name, number, 'enum', type, options);
}

export function msg(name: string, number: number, type: string, options: FieldOptions = {}): FieldDef {
  return field(name, number, 'message', type, options);
}

export function message(name: string, fields: readonly FieldDef[], comment?: string): MessageDef {
  return comment === undefined ? { name, fields } : { name, fields, comment };
}
