// Request body codecs: how a route's body bytes become the value its schema validates (JSON, form-encoded,
// multipart).
import { ServiceError, badRequest } from '../errors.js';
import { uws } from './uws.js';
import { checkDepth, checkUnicode } from './validate.js';

const JSON_MAX_DEPTH = 64;

export interface BodyCodec {
  /** the media type the route takes: in 415 messages and the OpenAPI document */
  readonly mediaType: string;
  /** whether the schema's numbers and booleans are read from text, strictly, as for a query string */
  readonly fromText: boolean;
  /** Throws a 415 for another Content-Type; an absent header is taken to mean this codec's type. */
  checkType(contentType: string | undefined): void;
  /** The body's value for the schema to validate; throws a 400 naming what is wrong. contentType: the request's header. */
  decode(bytes: Buffer, contentType?: string): unknown;
}

function typeCheck(mediaType: string): (contentType: string | undefined) => void {
  const accepts = new RegExp(`^${mediaType.replace(/[.+]/g, '\\$&')}\\s*(;|$)`, 'i');
  return (contentType) => {
    if (contentType !== undefined && contentType !== mediaType && !accepts.test(contentType)) {
      throw new ServiceError('ERR_UNSUPPORTED_MEDIA_TYPE', `Content-Type must be ${mediaType}, got "${contentType}"`);
    }
  };
}

const json: BodyCodec = {
  mediaType: 'application/json',
  fromText: false,
  checkType: typeCheck('application/json'),
  decode(bytes) {
    if (bytes.length === 0) throw badRequest('body: a JSON request body is required');
    const text = bytes.toString('utf8');
    checkDepth(text, JSON_MAX_DEPTH);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw badRequest(`body: malformed JSON (${(error as Error).message})`);
    }
    checkUnicode(text, parsed);
    return parsed;
  },
};

/**
 * application/x-www-form-urlencoded, as OAuth's token, introspection and revocation endpoints take it: an
 * object of strings. A parameter given twice is refused (RFC 6749 3.2: parameters MUST NOT repeat); an
 * empty body is an empty object, so the schema names the first missing field. Percent-decoding cannot
 * yield a lone surrogate (invalid UTF-8 becomes U+FFFD), so no Unicode check is needed.
 */
const form: BodyCodec = {
  mediaType: 'application/x-www-form-urlencoded',
  fromText: true,
  checkType: typeCheck('application/x-www-form-urlencoded'),
  decode(bytes) {
    const out: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(bytes.toString('utf8'))) {
      // Own properties only: "__proto__" or "constructor" is an ordinary (unknown) field name here.
      if (Object.hasOwn(out, name)) throw badRequest(`${name.slice(0, 100)}: given more than once`);
      Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  },
};

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * multipart/form-data (RFC 7578), as the original's bulk import takes its CSV file: an object of the parts'
 * text by field name, files included. The parts are split by uWebSockets.js's native getParts; a field given
 * twice, a part that is not UTF-8, or a body without the boundary's parts is refused.
 */
const multipart: BodyCodec = {
  mediaType: 'multipart/form-data',
  fromText: true,
  checkType: typeCheck('multipart/form-data'),
  decode(bytes, contentType) {
    const getParts = (uws as unknown as { getParts?: typeof uws.getParts }).getParts;
    if (getParts === undefined) throw new ServiceError('ERR_UNSUPPORTED_MEDIA_TYPE', 'multipart/form-data bodies need the native HTTP server, not its fallback');
    if (!contentType || !/;\s*boundary=/i.test(contentType)) throw badRequest('Content-Type: multipart/form-data needs its boundary parameter');
    // getParts reads the bytes only during the call; the parts' data are views into them, copied out below.
    const parts = getParts(bytes, contentType);
    if (parts === undefined || (parts.length === 0 && bytes.length > 0)) throw badRequest('body: malformed multipart/form-data (no part ends with the boundary)');
    const out: Record<string, string> = {};
    for (const part of parts) {
      if (Object.hasOwn(out, part.name)) throw badRequest(`${part.name.slice(0, 100)}: given more than once`);
      let text: string;
      try {
        text = utf8.decode(new Uint8Array(part.data));
      } catch {
        throw badRequest(`${part.name.slice(0, 100)}: not UTF-8 text`);
      }
      Object.defineProperty(out, part.name, { value: text, enumerable: true, writable: true, configurable: true });
    }
    return out;
  },
};

/**
 * Either, by Content-Type: for end-user routes that a page's form posts and a client's JSON call reaches alike
 * (POST /password-reset). Strings only, as a form has them; the OpenAPI document names JSON.
 */
const jsonOrForm: BodyCodec = {
  mediaType: 'application/json',
  fromText: true,
  checkType(contentType) {
    if (contentType !== undefined && !/^application\/(json|x-www-form-urlencoded)\s*(;|$)/i.test(contentType)) {
      throw new ServiceError('ERR_UNSUPPORTED_MEDIA_TYPE', `Content-Type must be application/json or application/x-www-form-urlencoded, got "${contentType}"`);
    }
  },
  decode: (bytes, contentType) => (contentType !== undefined && /^application\/x-www-form-urlencoded/i.test(contentType) ? form : json).decode(bytes),
};

export const codecs = { json, form, jsonOrForm, multipart } satisfies Record<string, BodyCodec>;

export type CodecName = keyof typeof codecs;
