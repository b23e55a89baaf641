import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { bulkImportTemplate, failedCsv, parseBulkImport } from '../../src/persons/bulk-import.js';
import { ServiceError } from '../../src/errors.js';

const HEADER = bulkImportTemplate().trimEnd();

function fileRefused(text: string, ...mentions: string[]): void {
  assert.throws(() => parseBulkImport(text), (e: unknown) => e instanceof ServiceError && e.status === 400 && mentions.every((m) => e.message.includes(m)));
}

describe('the bulk-import CSV', () => {
  test('rows become persons: handles split by commas, groups, region and JSON attributes', () => {
    const { rows, refused } = parseBulkImport(`${HEADER}\n"a@example.com, b@example.com",+14155550100,ada,us-iowa,"staff,ops","{""end_user_read_write"":{""n"":1}}"\n`);
    assert.deepEqual(refused, []);
    assert.deepEqual(rows.map((r) => [r.line, r.input]), [
      [2, {
        handles: [{ type: 'email_address', value: 'a@example.com' }, { type: 'email_address', value: 'b@example.com' }, { type: 'phone_number', value: '+14155550100' }, { type: 'username', value: 'ada' }],
        region: 'us-iowa',
        groups: ['staff', 'ops'],
        attributes: { end_user_read_write: { n: 1 } },
      }],
    ]);
  });

  test('line numbers are where each row starts, past multi-line values, CR LF and empty lines', () => {
    const text = ['"service:usernames","service:attributes"', 'a,', '', '"b","{', '}"', 'c,"{', '""x"":1}"', 'bad name!,'].join('\r\n');
    const { rows, refused } = parseBulkImport(text);
    // b's attributes are "{\n}", an empty object; c's bucket is no object
    assert.deepEqual(rows.map((r) => r.line), [2, 4]);
    assert.deepEqual(refused.map((r) => r.line), [6, 8]);
    assert.match(refused[0]?.reason ?? '', /^service:attributes\.x: must be an object/);
    assert.match(refused[1]?.reason ?? '', /^service:usernames\[0\]/);
  });

  test('rows refused alone: no handle, wrong field count, malformed attributes, bad handles', () => {
    const { rows, refused } = parseBulkImport(`${HEADER}\n,,,,,\nx@example.com\nx@example.com,,,,,[1]\nx@example.com,,,,,"{""a"":1}"\nnot-email,,,,,\n`);
    assert.equal(rows.length, 0);
    assert.deepEqual(refused.map((r) => [r.line, r.reason.split(/[:;(]/)[0]]), [
      [2, 'the row has no handle'],
      [3, 'the row has 1 fields'],
      [4, 'service'],
      [5, 'service'],
      [6, 'service'],
    ]);
    assert.match(refused[3]?.reason ?? '', /attributes\.a: must be an object/);
  });

  test('the whole file refused: empty, no handle column, unknown or repeated service: columns, not CSV', () => {
    fileRefused('', 'empty');
    fileRefused('"name"\nada\n', 'no handle column');
    fileRefused('"service:emails","service:roles"\n', 'unknown column "service:roles"');
    fileRefused('"service:emails","service:emails"\n', 'given twice');
    fileRefused(`${HEADER}\n"unclosed,,,,,\n`, 'not a valid CSV');
  });

  test('the failed CSV repeats the refused rows in line order with line and error, and reads back as CSV', () => {
    const header = ['service:usernames', 'note'];
    const csv = failedCsv(header, [{ line: 9, fields: ['b', 'x "quoted", y'], reason: 'r9' }, { line: 3, fields: ['a'], reason: 'r3, with comma' }]);
    assert.deepEqual(parse(csv, { columns: true }), [
      { 'service:usernames': 'a', note: '', line: '3', error: 'r3, with comma' },
      { 'service:usernames': 'b', note: 'x "quoted", y', line: '9', error: 'r9' },
    ]);
    assert.equal(failedCsv(header, []), '');
  });
});
