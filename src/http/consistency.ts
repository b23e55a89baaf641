// Consistency tokens at the front: a write's outcome answered as Service-Consistency-Token (on success and on a
// 408), and a request carrying one held until the serving region has applied it (read-your-writes).
import { badRequest } from '../errors.js';
import type { ConsistencyMark, ConsistencyTokens } from '../regions/consistency-token.js';
import type { ReadWaiter } from '../regions/read-wait.js';
import { parseConsistency } from './request.js';
import type { Request } from './route.js';

export interface FrontConsistency {
  tokens: ConsistencyTokens;
  reads: ReadWaiter;
}

/** The token's mark, or a 400 naming what is wrong; `org`, when the request has one, must be the token's. */
export function openToken(tokens: ConsistencyTokens, token: string, org: string | undefined, where = 'Service-Consistency-Token'): ConsistencyMark {
  const mark = tokens.open(token);
  if (typeof mark === 'string') throw badRequest(`${where}: ${mark}`);
  if (org !== undefined && mark.org !== org) throw badRequest(`${where}: issued for another organization`);
  return mark;
}

/**
 * Resolves once the request may be answered: at once without a token (undefined, so the front keeps its
 * synchronous path), else once the serving region has applied the token's offset.
 */
export function readAfter(c: FrontConsistency, req: Request<unknown, unknown>): Promise<void> | undefined {
  const token = req.headers['service-consistency-token'];
  if (token === undefined) return undefined;
  // Routes without an organization of their own (/token/validate) wait on the token's.
  const mark = openToken(c.tokens, token, (req.org as typeof req.org | undefined)?.id);
  return c.reads.wait(mark.org, mark.offset, parseConsistency(req.headers).timeoutMs);
}
