// RFC 3339 parsing and formatting within the range of google.protobuf.Timestamp, and the nine-digit form events use.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatRfc3339, formatTimestamp, parseRfc3339, rfc3339Nanos, rfc3339Seconds } from '../../src/lib/time-text.js';

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
