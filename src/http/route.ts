// A route is declared once: method, path, auth, schemas and handler. The same declaration validates
// requests and produces the OpenAPI document.
import type { TSchema } from '@sinclair/typebox';
import type { OrgActor } from '../org/actor.js';
import type { Consistency } from '../regions/consistency.js';
import type { Auth, Principal } from './auth.js';
import type { CodecName } from './codec.js';

export type { Consistency };

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface Request<B = unknown, Q = Record<string, unknown>> {
  params: Record<string, string>;
  query: Q;
  body: B;
  /** who is calling, as the route's authenticator established it */
  principal: Principal;
  /** the principal's organization (routes with auth org or key); undefined for a principal without one */
  org: OrgActor;
  consistency: Consistency;
  /** the caller: set for end-user routes and routes that declare `client`, '' otherwise */
  ip: string;
  origin: string;
  userAgent: string;
  /** only the headers the front copied for this route: authentication, body, consistency, client */
  headers: Record<string, string>;
}

export interface Response {
  status: number;
  /** the envelope's result; absent for a bare envelope */
  result?: unknown;
  /**
   * set when result is a string JSON.stringify would copy unchanged (a compact JWT: base64url and dots), so
   * the envelope quotes it without scanning it: scanning a freshly joined token makes V8 copy it flat first
   */
  resultNeedsNoEscape?: true;
  meta?: unknown;
  /** a JSON document sent as is (key sets, discovery), not in an envelope */
  document?: unknown;
  /** plain text, e.g. /metrics */
  text?: string;
  /** raw bytes with their contentType, e.g. the MITM detection image */
  bytes?: Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface Route<B = any, Q = any> {
  method: Method;
  /** OpenAPI form: /persons/{person_id} */
  path: string;
  summary: string;
  tag: string;
  /**
   * Who may call, checked once before anything else is read: 'none' public; 'org' Service-OrgID only
   * (end-user routes); 'key' Service-OrgID and Service-API-Key; 'operator' Service-Operator-Key; or an
   * Authenticator made for the route (see auth.ts).
   */
  auth: Auth;
  /** more request headers (lower case) the handler reads, e.g. cookie and accept */
  headers?: readonly string[];
  /**
   * Browsers may call it from the origins SERVICE_CORS_ORIGINS lists (preflight included). Defaults to what
   * the authenticator allows (public and end-user routes yes); true on a route whose authenticator takes an
   * API key or the operator key is refused at start-up: credentialed management calls never go cross-origin.
   */
  cors?: boolean;
  /** the handler reads ip, origin and userAgent; end-user routes (auth org) always get them, others get '' */
  client?: boolean;
  body?: TSchema;
  /** how the body is read: 'json' (the default), 'form' (application/x-www-form-urlencoded) or 'multipart' (multipart/form-data); form and multipart fields are strings */
  codec?: CodecName;
  /** bytes the body may have, when the route's is smaller than the service's (SERVICE_BODY_LIMIT) */
  bodyLimit?: number;
  /** the body may be left out entirely; the handler then sees body undefined */
  bodyOptional?: boolean;
  query?: TSchema;
  /** status and result schema of success, for the OpenAPI document */
  success: { status: number; result?: TSchema; meta?: TSchema; document?: TSchema; description?: string };
  /** error statuses this route may answer, for the document */
  errors?: number[];
  /** how errors are written: the envelope (default), or 'oauth' for RFC 6749 5.2 `{error, error_description}` */
  errorFormat?: 'envelope' | 'oauth';
  handler(req: Request<B, Q>): Response | Promise<Response>;
}

export function route<B = any, Q = any>(r: Route<B, Q>): Route<B, Q> {
  return r;
}

export function isMutating(method: Method): boolean {
  return method !== 'get';
}
