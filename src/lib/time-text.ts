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

// Character codes the parser compares with.
const DASH = 45;
const COLON = 58;
const DOT = 46;
const PLUS = 43;
const LOWER_T = 116;
const LOWER_Z = 122;
// Multiplies a fraction of n digits into nanoseconds.
const FRACTION_SCALE = [0, 100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1000, 100, 10, 1];

/** The two-digit decimal number at text[i], or -1 unless both characters are ASCII digits. */
function twoDigits(text: string, i: number): number {
  const tens = text.charCodeAt(i) - 48;
  const ones = text.charCodeAt(i + 1) - 48;
  // Written so that NaN (past the end of the text) fails too.
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : -1;
}

/**
 * Parses RFC 3339 with any offset and 0–9 fraction digits; undefined when the text is not a valid timestamp.
 * Accepts exactly `YYYY-MM-DD[Tt]hh:mm:ss(.f{1,9})?([Zz]|[+-]hh:mm)`, read by character code: the event encoder parses
 * every timestamp of every event it writes, and a regular expression's match array and substrings cost several
 * times the rest of the parse.
 */
export function parseRfc3339(text: string): TimestampParts | undefined {
  const length = text.length;
  // `c | 32` lowercases a letter, and maps nothing else onto 't' or 'z'.
  if (length < 20 || text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH || (text.charCodeAt(10) | 32) !== LOWER_T) return undefined;
  if (text.charCodeAt(13) !== COLON || text.charCodeAt(16) !== COLON) return undefined;
  const century = twoDigits(text, 0);
  const yearOf = twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  if (century < 0 || yearOf < 0) return undefined;
  const year = century * 100 + yearOf;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
    return undefined;
  }
  let at = 19;
  let nanos = 0;
  if (text.charCodeAt(at) === DOT) {
    const start = ++at;
    // A tenth digit is left for the zone, which refuses it.
    for (; at < length && at - start < 9; at++) {
      const digit = text.charCodeAt(at) - 48;
      if (!(digit >= 0 && digit <= 9)) break;
      nanos = nanos * 10 + digit;
    }
    const count = at - start;
    if (count === 0) return undefined;
    nanos *= FRACTION_SCALE[count] as number;
  }
  let offset = 0;
  const zone = text.charCodeAt(at);
  if ((zone | 32) === LOWER_Z) {
    if (at + 1 !== length) return undefined;
  } else if (zone === PLUS || zone === DASH) {
    if (at + 6 !== length || text.charCodeAt(at + 3) !== COLON) return undefined;
    const offsetHours = twoDigits(text, at + 1);
    const offsetMinutes = twoDigits(text, at + 4);
    if (offsetHours < 0 || offsetHours > 23 || offsetMinutes < 0 || offsetMinutes > 59) return undefined;
    offset = (zone === DASH ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60);
  } else {
    return undefined;
  }
  const seconds = daysFromCivil(year, month, day) * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second - offset;
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS) return undefined;
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
