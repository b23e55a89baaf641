// The OpenAPI 3.1 document, generated from the same route declarations that validate requests.
import { STATUS_CODES } from 'node:http';
import type { TSchema } from '@sinclair/typebox';
import { authenticatorOf } from './auth.js';
import { codecs } from './codec.js';
import type { Route } from './route.js';

const ErrorEnvelope = {
  type: 'object',
  properties: { errors: { type: 'array', items: { type: 'object', properties: { httpcode: { type: 'integer' }, message: { type: 'string' } }, required: ['httpcode', 'message'] } } },
};

/** An error answer of an operation: the envelope with its errors. */
export const errorResponse = (status: number) => ({ description: STATUS_CODES[status] ?? '', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } });

/** TypeBox schemas carry symbol keys; JSON.stringify drops them, leaving plain JSON Schema. */
const plain = (s: TSchema) => JSON.parse(JSON.stringify(s)) as unknown;

function queryParameters(schema: TSchema | undefined) {
  const props = (schema as { properties?: Record<string, TSchema> } | undefined)?.properties ?? {};
  const required = new Set((schema as { required?: string[] } | undefined)?.required ?? []);
  return Object.entries(props).map(([name, s]) => ({ name, in: 'query', required: required.has(name), schema: plain(s) }));
}

/** `extra`: operations served outside the route table (WS /events), as OpenAPI path items. */
export function openApiDocument(routes: readonly Route[], info: { title: string; version: string; server: string }, extra: Record<string, Record<string, unknown>> = {}) {
  const paths: Record<string, Record<string, unknown>> = structuredClone(extra);
  // The security schemes are those the routes' authenticators name.
  const securitySchemes: Record<string, unknown> = {};
  for (const r of routes) {
    const auth = authenticatorOf(r.auth);
    Object.assign(securitySchemes, auth.schemes);
    const params = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const consistency =
      r.method === 'get'
        ? []
        : [
            { name: 'Service-Required-Consistency', in: 'header', required: false, schema: { type: 'string', enum: ['local_region', 'all_regions'], default: 'local_region' } },
            { name: 'Service-Required-Consistency-Timeout', in: 'header', required: false, schema: { type: 'integer', minimum: 1, maximum: 120, default: 30 } },
          ];
    const success: Record<string, unknown> = { description: r.success.description ?? STATUS_CODES[r.success.status] ?? '' };
    if (r.success.document) success['content'] = { 'application/json': { schema: plain(r.success.document) } };
    else if (r.success.status !== 204) {
      const properties: Record<string, unknown> = {};
      if (r.success.result) properties['result'] = plain(r.success.result);
      if (r.success.meta) properties['meta'] = plain(r.success.meta);
      success['content'] = { 'application/json': { schema: { type: 'object', properties } } };
    }
    const responses: Record<string, unknown> = { [String(r.success.status)]: success };
    for (const status of r.errors ?? []) {
      responses[String(status)] = errorResponse(status);
    }
    const op: Record<string, unknown> = {
      summary: r.summary,
      tags: [r.tag],
      operationId: `${r.method}${r.path.replace(/[{}]/g, '').replace(/[/-](\w)/g, (_, c: string) => c.toUpperCase())}`,
      security: auth.security,
      parameters: [...params, ...queryParameters(r.query), ...consistency],
      responses,
    };
    if (r.body) op['requestBody'] = { required: r.bodyOptional !== true, content: { [codecs[r.codec ?? 'json'].mediaType]: { schema: plain(r.body) } } };
    (paths[r.path] ??= {})[r.method] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    servers: [{ url: info.server }],
    paths,
    components: {
      schemas: { ErrorEnvelope },
      securitySchemes,
    },
  };
}
