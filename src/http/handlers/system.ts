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
  /** with several processes in the region: this process's role, its leases and how far it follows the stream */
  quorum?: {
    view(): { role: string; process: string; leases: number; epochs: Record<string, number>; lag_entries: number; snapshots_installed: number };
    lease(org: string): { org: string; holder: string | null; url: string | null; epoch: number | null; writing: boolean; offset: number };
  };
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
      query: Type.Object({ org: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'narrows the lease fields to this organization' })) }, { additionalProperties: false }),
      success: {
        status: 200,
        result: Type.Object({
          status: Type.String(),
          native_http: Type.Boolean(),
          regions: Type.Array(Type.Object({ name: Type.String(), state: Type.String(), lag_entries: Type.Integer() })),
          role: Type.Optional(Type.String({ description: 'writer (holds at least one lease) or standby; absent with a single process per region' })),
          process: Type.Optional(Type.String()),
          leases: Type.Optional(Type.Integer({ description: 'organizations this process writes' })),
          epoch: Type.Optional(Type.Record(Type.String(), Type.Integer(), { description: "each held lease's epoch" })),
          lag_entries: Type.Optional(Type.Integer({ description: "messages of the region's commit stream not yet applied here" })),
          snapshots_installed: Type.Optional(Type.Integer({ description: "organizations caught up from their writer's snapshot since this process started (behind the commit stream's retention)" })),
          lease: Type.Optional(Type.Object({ org: Type.String(), holder: Type.Union([Type.String(), Type.Null()]), url: Type.Union([Type.String(), Type.Null()]), epoch: Type.Union([Type.Integer(), Type.Null()]), writing: Type.Boolean(), offset: Type.Integer({ description: "the organization's last entry applied by this process" }) })),
        }),
      },
      handler: (req: { query: { org?: string } }) => {
        const base = { status: 'ok', native_http: deps.nativeHttp, regions: deps.regions() };
        if (!deps.quorum) return { status: 200, result: base };
        const v = deps.quorum.view();
        const org = req.query.org;
        const epoch = org === undefined ? v.epochs : org in v.epochs ? { [org]: v.epochs[org] as number } : {};
        return { status: 200, result: { ...base, role: v.role, process: v.process, leases: v.leases, epoch, lag_entries: v.lag_entries, snapshots_installed: v.snapshots_installed, ...(org === undefined ? {} : { lease: deps.quorum.lease(org) }) } };
      },
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
