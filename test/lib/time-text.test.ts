// RFC 3339 parsing and formatting within the range of google.protobuf.Timestamp, and the nine-digit form events use.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatRfc3339, formatTimestamp, parseRfc3339, rfc3339Nanos, rfc3339Seconds } from '../../src/lib/time-text.js';
import { seededRng } from '../support/seeded-rng.js';

describe('RFC 3339 timestamps', () => {
  it('formats with the fewest of 0, 3, 6 or 9 fraction digits that lose nothing', () => {
    assert.equal(formatTimestamp({ seconds: 0, nanos: 0 }), '1970-01-01T00:00:00Z');
    assert.equal(formatTimestamp({ seconds: 0, nanos: 120_000_000 }), '1970-01-01T00:00:00.120Z');
    assert.equal(formatTimestamp({ seconds: 0, nanos: 123_456_000 }), '1970-01-01T00:00:00.123456Z');
    assert.equal(formatTimestamp({ seconds: 0, nanos: 1 }), '1970-01-01T00:00:00.000000001Z');
  });

  it('formats with a fixed number of digits by truncating', () => {
    assert.equal(formatRfc3339(1_795_453_200, 123_456_789, 9), '2026-11-23T17:00:00.123456789Z');
    assert.equal(formatRfc3339(1_795_453_200, 123_456_789, 6), '2026-11-23T17:00:00.123456Z');
    assert.equal(formatRfc3339(1_795_453_200, 999_999_999, 0), '2026-11-23T17:00:00Z');
  });

  it('covers years 0001 to 9999 and refuses beyond', () => {
    assert.equal(formatTimestamp({ seconds: -62_135_596_800, nanos: 0 }), '0001-01-01T00:00:00Z');
    assert.equal(formatTimestamp({ seconds: 253_402_300_799, nanos: 999_999_999 }), '9999-12-31T23:59:59.999999999Z');
    assert.throws(() => formatTimestamp({ seconds: 253_402_300_800, nanos: 0 }), RangeError);
    assert.throws(() => formatTimestamp({ seconds: 0, nanos: 1e9 }), RangeError);
    assert.deepEqual(parseRfc3339('0001-01-01T00:00:00Z'), { seconds: -62_135_596_800, nanos: 0 });
    assert.deepEqual(parseRfc3339('0050-03-01T00:00:00Z'), { seconds: -60_584_198_400, nanos: 0 });
    assert.equal(parseRfc3339('0000-12-31T23:59:59Z'), undefined);
  });

  it('parses any offset and 1–9 fraction digits to UTC seconds and nanoseconds', () => {
    assert.deepEqual(parseRfc3339('2026-11-23T17:00:00.123456789Z'), { seconds: 1_795_453_200, nanos: 123_456_789 });
    assert.deepEqual(parseRfc3339('2026-11-23T18:30:00.5+01:30'), { seconds: 1_795_453_200, nanos: 500_000_000 });
    assert.deepEqual(parseRfc3339('2026-11-23t12:00:00-05:00'), { seconds: 1_795_453_200, nanos: 0 });
    assert.deepEqual(parseRfc3339('1969-12-31T23:59:59.999Z'), { seconds: -1, nanos: 999_000_000 });
  });

  it('refuses text that is not a valid instant', () => {
    for (const text of [
      '', '2026-11-23', '2026-11-23 17:00:00Z', '2026-11-23T17:00:00', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z',
      '2026-11-23T24:00:00Z', '2026-11-23T23:59:60Z', '2026-11-23T17:00:00.1234567891Z', '2026-11-23T17:00:00+24:00',
    ]) {
      assert.equal(parseRfc3339(text), undefined, text);
    }
  });
});

/** The grammar parseRfc3339 implements, as a regular expression, with the range checks it makes: the reference it is held to. */
const GRAMMAR = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
function referenceParse(text: string): { seconds: number; nanos: number } | undefined {
  const m = GRAMMAR.exec(text);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (hour > 23 || minute > 59 || second > 59 || Number(m[9] ?? 0) > 23 || Number(m[10] ?? 0) > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  // Date rolls an impossible day (February 30th) over into the next month.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  const offset = m[8] === undefined ? 0 : (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 3600 + Number(m[10]) * 60);
  const seconds = date.getTime() / 1000 + hour * 3600 + minute * 60 + second - offset;
  if (seconds < -62_135_596_800 || seconds > 253_402_300_799) return undefined;
  return { seconds, nanos: m[7] === undefined ? 0 : Number(m[7].padEnd(9, '0')) };
}

describe('RFC 3339 parsing against its grammar', () => {
  it('accepts and refuses exactly what the grammar does, on timestamps altered one character at a time', () => {
    const rng = seededRng(5);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
    const bases = [
      '2026-11-25T16:00:00.123456789Z', '2026-11-25t16:00:00z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999999Z',
      '2000-02-29T12:00:00.5+01:30', '1969-12-31T23:59:59-00:00', '0001-01-01T00:00:00+00:01', '9999-12-31T23:59:59-00:01',
      '2026-11-25T16:00:00.1234567891Z', '2026-11-25T16:00:00.Z', '2026-11-25T16:00:00.000000001Z',
    ];
    const replacements = ['0', '0', '1', '1', '2', '3', '5', '9', '-', '+', ':', '.', 'T', 't', 'Z', 'z', ' ', 'a', '/', '\u0660', '\uff10', '\u0000', '', '00', '5Z'];
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      let text = pick(bases);
      for (let edits = rng() < 0.6 ? 1 : 2 + Math.floor(rng() * 2); edits > 0; edits--) {
        const at = Math.floor(rng() * (text.length + 1));
        text = text.slice(0, at) + pick(replacements) + text.slice(at + (rng() < 0.8 ? 1 : 0));
      }
      const expected = referenceParse(text);
      if (expected !== undefined) accepted++;
      assert.deepEqual(parseRfc3339(text), expected, text);
    }
    // The edits keep a fair share valid, so acceptance is tested as well as refusal.
    assert.ok(accepted > 1000, String(accepted));
  });

  it('reads every fraction length and offset as the grammar does', () => {
    for (let digits = 0; digits <= 11; digits++) {
      const fraction = digits === 0 ? '' : `.${'987654321098'.slice(0, digits)}`;
      for (const zone of ['Z', 'z', '+00:00', '-00:00', '+23:59', '-23:59', '+24:00', '+05:60', '+5:00', '+05:00:00', '+0500', 'Z ', '']) {
        const text = `2026-11-25T16:00:00${fraction}${zone}`;
        assert.deepEqual(parseRfc3339(text), referenceParse(text), text);
      }
    }
  });
});

describe('RFC 3339 timestamps against Date', () => {
  it('agree with Date on every day of years 0001–0004, 1899–1901, 1968–1972, 1999–2001, 2099–2101 and 9997–9999', () => {
    const years = [1, 2, 3, 4, 1899, 1900, 1901, 1968, 1969, 1970, 1971, 1972, 1999, 2000, 2001, 2099, 2100, 2101, 9997, 9998, 9999];
    for (const year of years) {
      const first = new Date(0);
      first.setUTCFullYear(year, 0, 1);
      for (let day = 0; day < 366; day++) {
        const seconds = first.getTime() / 1000 + day * 86_400 + 45_296;
        if (seconds > 253_402_300_799) break;
        const iso = new Date(seconds * 1000).toISOString();
        const text = formatTimestamp({ seconds, nanos: 0 });
        assert.equal(text, iso.replace('.000Z', 'Z'));
        assert.deepEqual(parseRfc3339(text), { seconds, nanos: 0 });
      }
    }
  });

  it('knows leap days', () => {
    assert.ok(parseRfc3339('2000-02-29T00:00:00Z'));
    assert.ok(parseRfc3339('2024-02-29T00:00:00Z'));
    assert.equal(parseRfc3339('1900-02-29T00:00:00Z'), undefined);
    assert.equal(parseRfc3339('2026-02-29T00:00:00Z'), undefined);
    assert.equal(parseRfc3339('2026-04-31T00:00:00Z'), undefined);
  });
});

describe('rfc3339Nanos', () => {
  it('writes all nine fraction digits in UTC', () => {
    assert.equal(rfc3339Nanos(1_795_453_200_123_456_789n), '2026-11-23T17:00:00.123456789Z');
    assert.equal(rfc3339Nanos(0n), '1970-01-01T00:00:00.000000000Z');
    assert.equal(rfc3339Nanos(1n), '1970-01-01T00:00:00.000000001Z');
  });

  it('counts instants before 1970 down from the second above', () => {
    assert.equal(rfc3339Nanos(-1n), '1969-12-31T23:59:59.999999999Z');
    assert.equal(rfc3339Nanos(-1_000_000_000n), '1969-12-31T23:59:59.000000000Z');
  });

  it('writes whole seconds (a token iat or exp) with nine zero fraction digits', () => {
    assert.equal(rfc3339Seconds(1_795_453_200), '2026-11-23T17:00:00.000000000Z');
    assert.equal(rfc3339Seconds(1_795_453_200), rfc3339Nanos(1_795_453_200n * 1_000_000_000n));
  });

  it('refuses instants a Timestamp cannot hold', () => {
    assert.throws(() => rfc3339Nanos(253_402_300_800_000_000_000n), RangeError);
  });
});
