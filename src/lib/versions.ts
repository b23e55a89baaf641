// Stored formats that change over time: a record carries its format version in `v`, and one written by an
// earlier version is upgraded step by step when it is read, so a data dir written before a change still opens.

/** A record as stored by some version; an older format has no static type, only its upgrade steps know it. */
export type StoredRecord = { v?: number } & Record<string, any>;

export interface Format {
  /** what the records are, for messages */
  readonly name: string;
  /**
   * steps[n] turns a record of version n into one of version n + 1, so the current version is steps.length.
   * A record without `v` is version 0: it was written before formats had versions. Steps are only ever
   * appended: the data dirs already written depend on every earlier one.
   */
  readonly steps: ReadonlyArray<(record: StoredRecord) => StoredRecord>;
}

export class FormatVersionError extends Error {
  override name = 'FormatVersionError';
}

export const currentVersion = (format: Format): number => format.steps.length;

/** The record in the current format; a record of the current version is returned as it is. */
export function upgrade<T>(format: Format, record: StoredRecord): T {
  const current = format.steps.length;
  let v = record.v ?? 0;
  if (v === current) return record as T;
  // Not corrupt, so never cut: a newer version wrote it, and this one must not start on a log it cannot read.
  if (!Number.isSafeInteger(v) || v < 0 || v > current) {
    throw new FormatVersionError(`${format.name} of format version ${String(record.v)} cannot be read: this version reads versions 0 to ${current}`);
  }
  let out = record;
  for (; v < current; v++) out = (format.steps[v] as (r: StoredRecord) => StoredRecord)(out);
  out.v = current;
  return out as T;
}
