// The envelope: every JSON response is {result?, meta?, errors?}; errors carry httpcode and message.
import type { ServiceError } from '../errors.js';
import type { Response } from './route.js';

/** What JSON.stringify escapes in a string (and surrogates, paired or not, which are left to it). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

export function envelope(r: Response): string {
  // The common shape, a result alone, without building the object around it.
  if (r.meta === undefined) {
    // A string JSON.stringify would copy unchanged (a token, an ID) is quoted as it is.
    if (typeof r.result === 'string' && (r.resultNeedsNoEscape === true || !NEEDS_ESCAPE.test(r.result))) return `{"result":"${r.result}"}`;
    const result = r.result === undefined ? undefined : JSON.stringify(r.result);
    return result === undefined ? '{}' : `{"result":${result}}`;
  }
  const body: Record<string, unknown> = {};
  if (r.result !== undefined) body['result'] = r.result;
  if (r.meta !== undefined) body['meta'] = r.meta;
  return JSON.stringify(body);
}

/**
 * RFC 6749 5.2, for the routes standard OAuth clients call: `{error, error_description}`. An error raised
 * without an OAuth code (the front's own: validation, media type, size) gets the one its status means.
 */
export function oauthErrorBody(error: ServiceError): string {
  const code = error.oauth ?? (error.status === 401 ? 'invalid_client' : error.status === 503 ? 'temporarily_unavailable' : error.status >= 500 ? 'server_error' : 'invalid_request');
  return JSON.stringify({ error: code, error_description: error.message });
}

export function errorBody(error: ServiceError): string {
  return JSON.stringify({ errors: [{ httpcode: error.status, message: error.message }] });
}
