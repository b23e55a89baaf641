// Request body codecs: how a route's body bytes become the value its schema validates (JSON, form-encoded).
import { ServiceError, badRequest } from '../errors.js';
import { checkDepth, checkUnicode } from './validate.js';

const JSON_MAX_DEPTH = 64;

export interface BodyCodec {
  /** the media type the route takes: in 415 messages and the OpenAPI document */
  readonly mediaType: string;
  /** whether the schema's numbers and booleans are read from text, strictly, as for a query string */
  readonly fromText: boolean;
  /** Throws a 415 for another Content-Type; an absent header is taken to mean this codec's type. */
  checkType(contentType: string | undefined): void;
  /** The body's value for the schema to validate; throws a 400 naming what is wrong. */
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

export const codecs = { json, form, jsonOrForm } satisfies Record<string, BodyCodec>;

export type CodecName = keyof typeof codecs;
