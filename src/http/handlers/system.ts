// Health, metrics and the OpenAPI document: no authentication.
import { Type } from '@sinclair/typebox';
import type { Metrics } from '../../lib/metrics.js';
import { openApiDocument } from '../openapi.js';
import { EVENTS_OPERATION } from '../ws.js';
import { route, type Route } from '../route.js';

export interface SystemDeps {
  metrics: Metrics;
  nativeHttp: boolean;
  issuer(): string;
  version: string;
  regions(): Array<{ name: string; state: string; lag_entries: number }>;
}

export function systemRoutes(deps: SystemDeps, allRoutes: () => readonly Route[]): Route[] {
  let document: unknown;
  return [
    route({
      method: 'get',
      path: '/health',
      summary: 'Liveness, the HTTP engine in use, and each region link',
      tag: 'operations',
      auth: 'none',
      success: {
        status: 200,
        result: Type.Object({
          status: Type.String(),
          native_http: Type.Boolean(),
          regions: Type.Array(Type.Object({ name: Type.String(), state: Type.String(), lag_entries: Type.Integer() })),
        }),
      },
      handler: () => ({ status: 200, result: { status: 'ok', native_http: deps.nativeHttp, regions: deps.regions() } }),
    }),
    route({
      method: 'get',
      path: '/metrics',
      summary: 'Prometheus metrics',
      tag: 'operations',
      auth: 'none',
      success: { status: 200, description: 'text/plain; version=0.0.4' },
      handler: () => ({ status: 200, text: deps.metrics.render(), contentType: 'text/plain; version=0.0.4; charset=utf-8' }),
    }),
    route({
      method: 'get',
      path: '/openapi.json',
      summary: 'This document',
      tag: 'operations',
      auth: 'none',
      success: { status: 200, document: Type.Object({ openapi: Type.String() }, { additionalProperties: true }) },
      handler: () => {
        document ??= openApiDocument(allRoutes(), { title: 'Identity service', version: deps.version, server: deps.issuer() }, { '/events': { get: EVENTS_OPERATION } });
        return { status: 200, document };
      },
    }),
  ];
}
