// The one error type: a stable code, an HTTP status and a message that is safe to show.
export type ErrorCode =
  | 'ERR_TEMPORARY_REDIRECT'
  | 'ERR_BAD_REQUEST'
  | 'ERR_UNAUTHORIZED'
  | 'ERR_FORBIDDEN'
  | 'ERR_NOT_FOUND'
  | 'ERR_METHOD_NOT_ALLOWED'
  | 'ERR_TIMEOUT'
  | 'ERR_CONFLICT'
  | 'ERR_TOO_LARGE'
  | 'ERR_UNSUPPORTED_MEDIA_TYPE'
  | 'ERR_TOO_MANY_REQUESTS'
  | 'ERR_INTERNAL'
  | 'ERR_BAD_GATEWAY'
  | 'ERR_UNAVAILABLE';

const STATUS: Record<ErrorCode, number> = {
  ERR_TEMPORARY_REDIRECT: 307,
  ERR_BAD_REQUEST: 400,
  ERR_UNAUTHORIZED: 401,
  ERR_FORBIDDEN: 403,
  ERR_NOT_FOUND: 404,
  ERR_METHOD_NOT_ALLOWED: 405,
  ERR_TIMEOUT: 408,
  ERR_CONFLICT: 409,
  ERR_TOO_LARGE: 413,
  ERR_UNSUPPORTED_MEDIA_TYPE: 415,
  ERR_TOO_MANY_REQUESTS: 429,
  ERR_INTERNAL: 500,
  ERR_BAD_GATEWAY: 502,
  ERR_UNAVAILABLE: 503,
};

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string> | undefined;
  /** the RFC 6749 5.2 error code (invalid_client, invalid_scope, ...) on routes that answer OAuth errors */
  readonly oauth: string | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; headers?: Record<string, string>; oauth?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = STATUS[code];
    this.headers = options?.headers;
    this.oauth = options?.oauth;
  }
}

/** A caller's value for a message: quoted, and cut short so a huge input is not echoed back whole. */
export function quote(value: string, max = 64): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value);
}

export const badRequest = (message: string) => new ServiceError('ERR_BAD_REQUEST', message);
export const notFound = (message: string) => new ServiceError('ERR_NOT_FOUND', message);
export const conflict = (message: string) => new ServiceError('ERR_CONFLICT', message);

/** Any thrown value as a ServiceError; what is not one already becomes a 500 that reveals nothing. */
export function toServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  return new ServiceError('ERR_INTERNAL', 'internal error', { cause: error });
}
