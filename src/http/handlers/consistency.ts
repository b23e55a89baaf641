// GET /consistency/{token}: what became of a write, by the token it answered (after a 408 too): whether it is
// committed, and which regions have applied it; ?wait= waits for a level as the write itself would have.
import { Type, type Static } from '@sinclair/typebox';
import { ServiceError } from '../../errors.js';
import type { ConsistencyTokens } from '../../regions/consistency-token.js';
import type { ConsistencyWaiter } from '../../regions/consistency.js';
import { openToken } from '../consistency.js';
import { parseConsistency } from '../request.js';
import { route, type Route } from '../route.js';

const WaitQuery = Type.Object(
  { wait: Type.Optional(Type.Union([Type.Literal('local_region'), Type.Literal('all_regions')], { description: 'wait for this level, up to Service-Required-Consistency-Timeout (408 past it)' })) },
  { additionalProperties: false },
);

const ConsistencyRet = Type.Object({
  offset: Type.Integer({ description: "the write's offset in the organization's log" }),
  committed: Type.Boolean({ description: 'the write is durable in the origin region' }),
  regions: Type.Array(Type.Object({ name: Type.String(), applied: Type.Boolean() })),
});

export interface ConsistencyDeps {
  tokens: ConsistencyTokens;
  waiter: ConsistencyWaiter;
  /** the organization's last durable WAL offset in the origin region */
  committed(org: string): number;
  /** every region, the local one first, and whether it has applied the offset */
  regions(org: string, offset: number): Array<{ name: string; applied: boolean }>;
}

export function consistencyRoutes(deps: ConsistencyDeps): Route[] {
  return [
    route<unknown, Static<typeof WaitQuery>>({
      method: 'get',
      path: '/consistency/{token}',
      summary: 'What became of a write, by its Service-Consistency-Token: committed or not, and the regions that have applied it',
      tag: 'consistency',
      auth: 'key',
      query: WaitQuery,
      success: { status: 200, result: ConsistencyRet },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const mark = openToken(deps.tokens, req.params['token'] as string, req.org.id, 'token');
        const wait = req.query.wait;
        if (wait !== undefined) {
          const consistency = parseConsistency({ ...req.headers, 'service-required-consistency': wait });
          // The origin answers a write only once it is committed there: a token past its log was never committed here.
          if (mark.offset > deps.committed(mark.org)) throw new ServiceError('ERR_TIMEOUT', `entry ${mark.offset} is not committed in the origin region`);
          await deps.waiter.wait(mark.org, mark.offset, consistency);
        }
        return { status: 200, result: { offset: mark.offset, committed: mark.offset <= deps.committed(mark.org), regions: deps.regions(mark.org, mark.offset) } };
      },
    }),
  ];
}
