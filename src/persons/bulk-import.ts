// The bulk-import CSV (the original's columns with the prefix `service:`): its template, the rows it asks
// for with the refusals of rows malformed on their own, and the CSV of refused rows. Pure; the organization
// decides the rest (handles taken, groups and regions that exist) in domain/person-import.ts.
import { parse, CsvError } from 'csv-parse/sync';
import { badRequest, ServiceError } from '../errors.js';
import type { PersonInput } from '../domain/commands.js';
import { MAX_PERSON_HANDLES } from '../domain/persons.js';
import { checkHandle } from '../domain/rules.js';
import type { Handle, HandleType } from '../domain/state.js';

export const PREFIX = 'service:';
const HANDLE_COLUMNS: ReadonlyArray<[string, HandleType]> = [
  [`${PREFIX}emails`, 'email_address'],
  [`${PREFIX}phone_numbers`, 'phone_number'],
  [`${PREFIX}usernames`, 'username'],
];
export const COLUMNS: readonly string[] = [...HANDLE_COLUMNS.map(([c]) => c), `${PREFIX}region`, `${PREFIX}groups`, `${PREFIX}attributes`];

/** The columns the failed CSV adds after the file's own; unprefixed, so an import of the fixed file ignores them. */
const FAILED_COLUMNS = ['line', 'error'];

export interface ImportLine {
  /** the line of the file the row starts on; the header is line 1 */
  line: number;
  fields: string[];
}

export interface ParsedImport {
  header: string[];
  rows: Array<ImportLine & { input: PersonInput }>;
  refused: Array<ImportLine & { reason: string }>;
}

/** GET /persons/bulk-import: the header row, every column quoted as the original writes it. */
export function bulkImportTemplate(): string {
  return `${COLUMNS.map((c) => `"${c}"`).join(',')}\n`;
}

/**
 * A cell a spreadsheet would run as a formula (OWASP's CSV injection list): the failed CSV prefixes it with
 * a quote, and an import takes that quote off again, so the file a person fixes and uploads reads as it did.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const neutralised = (f: string) => (FORMULA_START.test(f) ? `'${f}` : f);
const unneutralised = (f: string) => (f.startsWith("'") && FORMULA_START.test(f.slice(1)) ? f.slice(1) : f);

const list = (text: string) => text.split(',').map((s) => s.trim()).filter((s) => s !== '');

/** The person a row asks for; throws a 400 naming the column for a row malformed on its own. */
function rowInput(header: readonly string[], fields: readonly string[]): PersonInput {
  const at = (column: string) => {
    const i = header.indexOf(column);
    return i < 0 ? '' : unneutralised((fields[i] ?? '').trim());
  };
  const handles: Handle[] = [];
  for (const [column, type] of HANDLE_COLUMNS) {
    list(at(column)).forEach((value, i) => {
      const h = { type, value };
      checkHandle(h, `${column}[${i}]`);
      handles.push(h);
    });
  }
  if (handles.length === 0) throw badRequest(`the row has no handle: give at least one of ${HANDLE_COLUMNS.map(([c]) => c).join(', ')}`);
  if (handles.length > MAX_PERSON_HANDLES) throw badRequest(`a person holds at most ${MAX_PERSON_HANDLES} handles; the row gives ${handles.length}`);
  const input: PersonInput = { handles };
  const region = at(`${PREFIX}region`);
  if (region !== '') input.region = region;
  const groups = list(at(`${PREFIX}groups`));
  if (groups.length > 0) input.groups = groups;
  const attributes = at(`${PREFIX}attributes`);
  if (attributes !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(attributes);
    } catch (error) {
      throw badRequest(`${PREFIX}attributes: malformed JSON (${(error as Error).message})`);
    }
    const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
    if (!isObject(parsed)) throw badRequest(`${PREFIX}attributes: must be a JSON object of attribute buckets`);
    for (const [bucket, set] of Object.entries(parsed)) {
      if (!isObject(set)) throw badRequest(`${PREFIX}attributes.${bucket}: must be an object of attributes`);
    }
    input.attributes = parsed as Record<string, Record<string, unknown>>;
  }
  return input;
}

/** The header's problems are the whole file's: a 400. */
function checkHeader(header: readonly string[]): void {
  const seen = new Set<string>();
  for (const column of header) {
    if (seen.has(column)) throw badRequest(`persons: column "${column.slice(0, 100)}" is given twice`);
    seen.add(column);
    // An unprefixed column is ignored (the failed CSV's own, say); a misspelt prefixed one is a mistake.
    if (column.startsWith(PREFIX) && !COLUMNS.includes(column)) throw badRequest(`persons: unknown column "${column.slice(0, 100)}" (known: ${COLUMNS.join(', ')})`);
  }
  if (!HANDLE_COLUMNS.some(([c]) => seen.has(c))) throw badRequest(`persons: the header names no handle column (${HANDLE_COLUMNS.map(([c]) => c).join(', ')})`);
}

/**
 * The rows of a CSV file. A file that is not CSV, or whose header is wrong, is a 400 naming the problem (and
 * the line); a row with the wrong number of fields, no handle, a malformed handle or attributes is refused alone.
 */
export function parseBulkImport(text: string): ParsedImport {
  // One line ending for the line numbers to count; a CR LF inside a quoted value becomes LF.
  const normalized = text.replace(/\r\n?/g, '\n');
  let records: Array<{ record: string[]; raw: string; info: { lines: number } }>;
  try {
    records = parse(normalized, { bom: true, info: true, raw: true, relax_column_count: true, skip_empty_lines: true }) as unknown as typeof records;
  } catch (error) {
    if (error instanceof CsvError) throw badRequest(`persons: not a valid CSV file (${error.message})`);
    throw error;
  }
  const [first, ...rest] = records;
  if (!first) throw badRequest('persons: the CSV file is empty; its first line names the columns');
  const header = first.record.map((c) => c.trim());
  checkHeader(header);
  const out: ParsedImport = { header, rows: [], refused: [] };
  for (const { record, raw, info } of rest) {
    // info.lines is the line the record ends on; the lines inside it (after any skipped empty ones) go back to its start.
    const inner = raw.replace(/^\n+/, '').replace(/\n$/, '').split('\n').length - 1;
    const line = info.lines - inner;
    if (record.length !== header.length) {
      out.refused.push({ line, fields: record, reason: `the row has ${record.length} fields; the header has ${header.length}` });
      continue;
    }
    try {
      out.rows.push({ line, fields: record, input: rowInput(header, record) });
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      out.refused.push({ line, fields: record, reason: error.message });
    }
  }
  return out;
}

const quoteField = (f: string) => (/[",\n\r]/.test(f) || f !== f.trim() ? `"${f.replace(/"/g, '""')}"` : f);

/** The refused rows as CSV: the file's own columns, then the line and the reason; '' when none was refused. */
export function failedCsv(header: readonly string[], refused: ReadonlyArray<ImportLine & { reason: string }>): string {
  if (refused.length === 0) return '';
  const lines = [[...header, ...FAILED_COLUMNS], ...[...refused].sort((a, b) => a.line - b.line).map((r) => [...header.map((_, i) => r.fields[i] ?? ''), String(r.line), r.reason])];
  return lines.map((l) => l.map((f) => quoteField(neutralised(f))).join(',')).join('\n') + '\n';
}
