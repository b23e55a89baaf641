// Operator fault injection on replication links: cut a link, bring it up, change its simulated delay.
import { Type, type Static } from '@sinclair/typebox';
import type { FaultView } from '../../regions/regions.js';
import type { LinkConditions } from '../../regions/transport.js';
import { route, type Route } from '../route.js';

const LinkBody = Type.Object(
  {
    link: Type.Union([Type.Literal('up'), Type.Literal('cut')]),
    latency_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000, description: 'one-way latency of the link, ms' })),
    jitter_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000, description: 'extra one-way delay, uniform in [0, jitter_ms]' })),
  },
  { additionalProperties: false },
);

const LinkRet = Type.Object({
  name: Type.String(),
  state: Type.Union([Type.Literal('catching_up'), Type.Literal('streaming'), Type.Literal('lagging'), Type.Literal('cut')]),
  lag_entries: Type.Integer(),
  latency_ms: Type.Integer(),
  jitter_ms: Type.Integer(),
});

export interface RegionOps {
  setLink(region: string, change: Partial<LinkConditions>): FaultView;
}

export function regionRoutes(ops: RegionOps): Route[] {
  return [
    route<Static<typeof LinkBody>>({
      method: 'put',
      path: '/ops/regions/{region}',
      summary: 'Fault injection: cut the replication link to a region or bring it up, and set its simulated latency',
      tag: 'operations',
      auth: 'operator',
      body: LinkBody,
      success: { status: 200, result: LinkRet },
      // 409: the region is reached over a real transport, which has no fault injection.
      errors: [400, 401, 404, 409],
      handler: (req) => {
        const change: Partial<LinkConditions> = { up: req.body.link === 'up' };
        if (req.body.latency_ms !== undefined) change.latencyMs = req.body.latency_ms;
        if (req.body.jitter_ms !== undefined) change.jitterMs = req.body.jitter_ms;
        return { status: 200, result: ops.setLink(req.params['region'] as string, change) };
      },
    }),
  ];
}
