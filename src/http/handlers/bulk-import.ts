// Persons in bulk: the CSV template, and the import of a CSV file (multipart/form-data, field `persons`) in
// batches through the organization's actor, with a report of the rows refused by line.
import { Type, type Static } from '@sinclair/typebox';
import { badRequest } from '../../errors.js';
import type { ImportRow } from '../../domain/commands.js';
import { MAX_IMPORT_BATCH, type ImportReply } from '../../domain/person-import.js';
import { bulkImportTemplate, failedCsv, parseBulkImport } from '../../persons/bulk-import.js';
import { route, type Route } from '../route.js';
import type { HandlerDeps } from './deps.js';

/** rows one file may hold; the body limit (SERVICE_BODY_LIMIT) bounds it too */
export const MAX_IMPORT_ROWS = 100_000;

const ImportBody = Type.Object({ persons: Type.String({ description: 'the CSV file (a file part or a text field)' }) }, { additionalProperties: false });
const ImportRet = Type.Object({
  successful_imports: Type.Integer(),
  failed_imports: Type.Integer(),
  failed_csv: Type.String({ description: "the refused rows as CSV: the file's columns, then `line` and `error`; empty when none was refused" }),
});

export function bulkImportRoutes(deps: HandlerDeps): Route[] {
  return [
    route({
      method: 'get',
      path: '/persons/bulk-import',
      summary: 'The CSV template of a bulk import: its header row',
      tag: 'persons',
      auth: 'key',
      success: { status: 200, description: 'text/csv' },
      errors: [400, 401, 403, 404],
      handler: () => ({
        status: 200,
        text: bulkImportTemplate(),
        contentType: 'text/csv; charset=utf-8',
        headers: { 'Content-Disposition': 'attachment; filename="persons-import-template.csv"' },
      }),
    }),
    route<Static<typeof ImportBody>>({
      method: 'post',
      path: '/persons/bulk-import',
      summary: 'Import persons from a CSV file: each row is created whole (PersonCreated) or refused with its line and reason',
      tag: 'persons',
      auth: 'key',
      codec: 'multipart',
      body: ImportBody,
      success: { status: 200, result: ImportRet },
      errors: [400, 401, 403, 404, 408, 413, 415],
      handler: async (req) => {
        const parsed = parseBulkImport(req.body.persons);
        if (parsed.rows.length + parsed.refused.length > MAX_IMPORT_ROWS) throw badRequest(`persons: a file holds at most ${MAX_IMPORT_ROWS} rows`);
        const refused = [...parsed.refused];
        const byLine = new Map(parsed.rows.map((r) => [r.line, r]));
        let created = 0;
        let offset = req.org.state.offset;
        // One command per batch: its accepted rows share one entry, and other commands of the organization
        // are decided between batches rather than waiting for the whole file.
        for (let i = 0; i < parsed.rows.length; i += MAX_IMPORT_BATCH) {
          const rows: ImportRow[] = parsed.rows.slice(i, i + MAX_IMPORT_BATCH).map((r) => ({ line: r.line, input: r.input }));
          const outcome = await req.org.execute<ImportReply>({ kind: 'ImportPersons', rows });
          offset = outcome.offset;
          created += outcome.reply.created;
          for (const r of outcome.reply.refused) refused.push({ ...(byLine.get(r.line) as (typeof parsed.rows)[number]), reason: r.reason });
        }
        await deps.consistency.wait(req.org.id, offset, req.consistency);
        return { status: 200, result: { successful_imports: created, failed_imports: refused.length, failed_csv: failedCsv(parsed.header, refused) } };
      },
    }),
  ];
}
