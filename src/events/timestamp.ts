// RFC 3339 text ↔ seconds and nanoseconds since the epoch, within the range google.protobuf.Timestamp allows.

export interface TimestampParts {
  readonly seconds: number;
  readonly nanos: number;
}

// google.protobuf.Timestamp is restricted to years 0001 through 9999.
const MIN_SECONDS = -62_135_596_800;
const MAX_SECONDS = 253_402_300_799;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

export type FractionDigits = 0 | 3 | 6 | 9;

/** Formats as UTC with exactly the given number of fraction digits (truncating, never rounding). */
export function formatRfc3339(seconds: number, nanos: number, digits: FractionDigits): string {
  if (!Number.isInteger(seconds) || seconds < MIN_SECONDS || seconds > MAX_SECONDS) {
    throw new RangeError(`timestamp seconds out of range: ${seconds}`);
  }
  if (!Number.isInteger(nanos) || nanos < 0 || nanos > 999_999_999) throw new RangeError(`timestamp nanos out of range: ${nanos}`);
  // toISOString writes four-digit years for the whole 0001–9999 range.
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (digits === 0) return `${base}Z`;
  return `${base}.${String(nanos).padStart(9, '0').slice(0, digits)}Z`;
}

/** The proto3 JSON form: UTC, with 0, 3, 6 or 9 fraction digits, the fewest that lose nothing. */
export function formatTimestamp(parts: TimestampParts): string {
  const { nanos } = parts;
  const digits: FractionDigits = nanos === 0 ? 0 : nanos % 1_000_000 === 0 ? 3 : nanos % 1000 === 0 ? 6 : 9;
  return formatRfc3339(parts.seconds, nanos, digits);
}

/** Parses RFC 3339 with any offset and 0–9 fraction digits; undefined when the text is not a valid timestamp. */
export function parseRfc3339(text: string): TimestampParts | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 to 1900–1999.
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCDate() !== day) return undefined;
  let offset = 0;
  if (m[8] !== undefined) {
    const offsetHours = Number(m[9]);
    const offsetMinutes = Number(m[10]);
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    offset = (m[8] === '-' ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60);
  }
  const seconds = date.getTime() / 1000 + hour * 3600 + minute * 60 + second - offset;
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS) return undefined;
  const nanos = m[7] === undefined ? 0 : Number(m[7].padEnd(9, '0'));
  return { seconds, nanos };
}
