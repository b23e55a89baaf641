// The request's framing and header fields as HTTP/1.1 says to refuse them, read in one pass over what
// uWebSockets.js parsed: duplicate or malformed Content-Length, Content-Length with Transfer-Encoding, and
// a header the route reads given twice or given empty.
import { ServiceError, badRequest } from '../errors.js';

/** A refusal that must close the connection: after it, the bytes on the connection cannot be framed. */
export class FramingError extends ServiceError {
  readonly close = true;
}

const DIGITS = /^\d{1,15}$/;

/** Headers read as a list by HTTP: repeating them is allowed and means the values joined by commas. */
const LIST_HEADERS = new Set(['transfer-encoding', 'x-forwarded-for']);

/**
 * Copies the wanted headers out of a request's header fields (uWS's `req.forEach`), and throws what must be
 * refused. Unlike `getHeader`, which returns the first of repeated fields and '' for an empty one, this sees
 * every field, so a second Content-Length cannot slip past and an empty value is kept as '' (present).
 *
 * Content-Length (RFC 9112 6.3): a second one with another value, or one that is not a decimal number, makes
 * the message unframeable: 400 and the connection closed, since uWS would read the body by the first and
 * whatever follows as the next request. With Transfer-Encoding it is refused the same way (6.1: a server
 * MAY reject it, and must close after answering).
 */
export function copyFields<S>(source: S, forEach: (source: S, cb: (key: string, value: string) => void) => void, wanted: ReadonlySet<string>, out: Record<string, string>): void {
  let lengths: string[] | undefined;
  let repeated: string | undefined;
  forEach(source, (key, value) => {
    if (key === 'content-length') (lengths ??= []).push(value);
    if (!wanted.has(key)) return;
    const prior = out[key];
    if (prior === undefined) out[key] = value;
    else if (LIST_HEADERS.has(key)) out[key] = `${prior}, ${value}`;
    else if (key !== 'content-length') repeated ??= key;
  });
  if (lengths !== undefined) {
    for (const v of lengths) {
      if (!DIGITS.test(v)) throw new FramingError('ERR_BAD_REQUEST', `Content-Length: must be a decimal number of bytes, got "${v.slice(0, 40)}"`);
    }
    if (lengths.some((v) => Number(v) !== Number(lengths?.[0]))) {
      throw new FramingError('ERR_BAD_REQUEST', `Content-Length: given ${lengths.length} times with different values (${lengths.join(', ').slice(0, 80)}); the body cannot be framed`);
    }
    if (out['transfer-encoding'] !== undefined) {
      throw new FramingError('ERR_BAD_REQUEST', 'Content-Length and Transfer-Encoding: a request may carry only one of them');
    }
  }
  if (repeated !== undefined) throw badRequest(`${displayName(repeated)}: given more than once`);
}

/** The header's usual spelling, for messages: service-orgid → Service-OrgID. */
export function displayName(lower: string): string {
  if (lower === 'service-orgid') return 'Service-OrgID';
  if (lower === 'service-api-key') return 'Service-API-Key';
  return lower.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}
