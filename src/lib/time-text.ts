// RFC 3339 text ↔ seconds and nanoseconds since the epoch, within the range google.protobuf.Timestamp allows: the one
// time formatter of events, tokens and the domain.

export interface TimestampParts {
  readonly seconds: number;
  readonly nanos: number;
}

// google.protobuf.Timestamp is restricted to years 0001 through 9999.
const MIN_SECONDS = -62_135_596_800;
const MAX_SECONDS = 253_402_300_799;
const SECONDS_PER_DAY = 86_400;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

export type FractionDigits = 0 | 3 | 6 | 9;

// Days since 1970-01-01 of a proleptic Gregorian date, and back (H. Hinnant's civil-date algorithms). Plain integer
// arithmetic: Date is several times slower here, and Date.UTC maps years 0–99 to 1900–1999.
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
}

function civilFromDays(days: number): [year: number, month: number, day: number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, doy - Math.floor((153 * mp + 2) / 5) + 1];
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** Formats as UTC with exactly the given number of fraction digits (truncating, never rounding). */
export function formatRfc3339(seconds: number, nanos: number, digits: FractionDigits): string {
  if (!Number.isInteger(seconds) || seconds < MIN_SECONDS || seconds > MAX_SECONDS) {
    throw new RangeError(`timestamp seconds out of range: ${seconds}`);
  }
  if (!Number.isInteger(nanos) || nanos < 0 || nanos > 999_999_999) throw new RangeError(`timestamp nanos out of range: ${nanos}`);
  const days = Math.floor(seconds / SECONDS_PER_DAY);
  const [year, month, day] = civilFromDays(days);
  const inDay = seconds - days * SECONDS_PER_DAY;
  const time = `${pad2(Math.floor(inDay / 3600))}:${pad2(Math.floor(inDay / 60) % 60)}:${pad2(inDay % 60)}`;
  const base = `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}T${time}`;
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
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    return undefined;
  }
  let offset = 0;
  if (m[8] !== undefined) {
    const offsetHours = Number(m[9]);
    const offsetMinutes = Number(m[10]);
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    offset = (m[8] === '-' ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60);
  }
  const seconds = daysFromCivil(year, month, day) * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second - offset;
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS) return undefined;
  const nanos = m[7] === undefined ? 0 : Number(m[7].padEnd(9, '0'));
  return { seconds, nanos };
}

const NANOS_PER_SECOND = 1_000_000_000n;

/** Nanoseconds since the epoch as UTC RFC 3339 with all nine fraction digits, e.g. `2026-11-23T17:00:00.123456789Z`. */
export function rfc3339Nanos(epochNanos: bigint): string {
  // Floor division, so instants before 1970 get a non-negative fraction.
  let seconds = epochNanos / NANOS_PER_SECOND;
  let nanos = epochNanos % NANOS_PER_SECOND;
  if (nanos < 0n) {
    nanos += NANOS_PER_SECOND;
    seconds -= 1n;
  }
  return formatRfc3339(Number(seconds), Number(nanos), 9);
}

/** Whole seconds since the epoch (a JWT's iat or exp) in the same nine-digit form, e.g. `2026-11-23T17:00:00.000000000Z`. */
export function rfc3339Seconds(epochSeconds: number): string {
  return formatRfc3339(epochSeconds, 0, 9);
}
