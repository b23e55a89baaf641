// Offset and cursor paging over a sorted list of keys. Cursors are opaque and authenticated: an HMAC
// binds each to the organization and the list it walks, so a forged, altered or foreign cursor is a 400.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { badRequest } from '../errors.js';
import { lowerBound } from '../domain/state.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export const PagingQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `page size, default ${DEFAULT_LIMIT}` })),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: 'offset paging: items to skip' })),
  cursor: Type.Optional(Type.String({ maxLength: 512, description: 'cursor paging: a cursor the previous page returned' })),
  paging: Type.Optional(Type.Union([Type.Literal('offset'), Type.Literal('cursor')], { description: 'cursor starts a cursor walk' })),
};
const PagingObject = Type.Object(PagingQuery);
export type PagingParams = Static<typeof PagingObject>;

export const PaginationMeta = Type.Object({
  pagination: Type.Optional(Type.Object({ limit: Type.Integer(), offset: Type.Integer(), total_count: Type.Integer() })),
  cursor_pagination: Type.Optional(
    Type.Object({
      limit: Type.Integer(),
      next_cursor: Type.Optional(Type.String()),
      prev_cursor: Type.Optional(Type.String()),
      last_cursor: Type.String(),
      total_count: Type.Optional(Type.Integer()),
    }),
  ),
});

interface CursorBody {
  o: string;
  k: string;
  d: 'n' | 'p' | 'l';
  a?: string;
  l: number;
}

export interface Pager {
  page(keys: readonly string[], params: PagingParams, scope: { org: string; list: string }): { keys: string[]; meta: Record<string, unknown> };
}

/** One page of a map keyed by IDs in sorted order, each entry answered through `view`. */
export function pageOfMap<T>(pager: Pager, orgId: string, query: PagingParams, map: ReadonlyMap<string, T>, list: string, view: (item: T) => unknown) {
  const page = pager.page([...map.keys()].sort(), query, { org: orgId, list });
  return { status: 200, result: page.keys.map((k) => view(map.get(k) as T)), meta: page.meta };
}

export function createPager(secret: Buffer): Pager {
  const mac = (text: string) => createHmac('sha256', secret).update(text).digest().subarray(0, 16);
  const seal = (body: CursorBody) => {
    const text = JSON.stringify(body);
    return `${Buffer.from(text).toString('base64url')}.${mac(text).toString('base64url')}`;
  };
  // A list is named by a digest, so that a cursor stays short whatever filter the list has.
  const listId = (list: string) => createHash('sha256').update(list).digest().subarray(0, 12).toString('base64url');
  const open = (cursor: string, scope: { org: string; list: string }): CursorBody => {
    const forged = () => badRequest('cursor: not a cursor this service issued');
    const [payload, tag, ...rest] = cursor.split('.');
    if (!payload || !tag || rest.length > 0) throw forged();
    const text = Buffer.from(payload, 'base64url').toString();
    // base64url decoding skips stray characters and ignores spare bits, so several strings decode to
    // the same bytes: only the exact text this service sealed is accepted.
    const given = Buffer.from(cursor);
    const expected = Buffer.from(`${Buffer.from(text).toString('base64url')}.${mac(text).toString('base64url')}`);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw forged();
    const body = JSON.parse(text) as CursorBody;
    if (body.o !== scope.org || body.k !== listId(scope.list)) throw badRequest('cursor: this cursor belongs to another list');
    return body;
  };

  return {
    page(keys, params, scope) {
      const cursorMode = params.cursor !== undefined || params.paging === 'cursor';
      if (!cursorMode) {
        const limit = params.limit ?? DEFAULT_LIMIT;
        const offset = params.offset ?? 0;
        return { keys: keys.slice(offset, offset + limit), meta: { pagination: { limit, offset, total_count: keys.length } } };
      }
      if (params.offset !== undefined) throw badRequest('offset: cannot be combined with cursor paging');
      const c = params.cursor === undefined ? undefined : open(params.cursor, scope);
      const limit = params.limit ?? c?.l ?? DEFAULT_LIMIT;
      let start: number;
      if (!c) start = 0;
      else if (c.d === 'n') start = lowerBound(keys, c.a ?? '') + (keys[lowerBound(keys, c.a ?? '')] === c.a ? 1 : 0);
      else if (c.d === 'p') start = Math.max(0, lowerBound(keys, c.a ?? '') - limit);
      else start = keys.length === 0 ? 0 : keys.length - (keys.length % limit || limit);
      const end = c?.d === 'p' ? Math.min(keys.length, lowerBound(keys, c.a ?? '')) : Math.min(keys.length, start + limit);
      const page = keys.slice(start, end);
      const base = { o: scope.org, k: listId(scope.list), l: limit };
      const meta: Record<string, unknown> = { limit };
      if (end < keys.length && page.length > 0) meta['next_cursor'] = seal({ ...base, d: 'n', a: page[page.length - 1] as string });
      if (start > 0) meta['prev_cursor'] = seal({ ...base, d: 'p', a: (page[0] ?? keys[start]) as string });
      meta['last_cursor'] = seal({ ...base, d: 'l' });
      if (!c) meta['total_count'] = keys.length;
      return { keys: page, meta: { cursor_pagination: meta } };
    },
  };
}
