// GET /stats/billing: the seed's reader of BillableProtectedIdentitiesCounted for one UTC month: the latest
// row per region for that month's window (by publication order), the sums across regions, and beside them
// the distinct identities per class of each connection's latest snapshot in the window.
import { Type, type Static } from '@sinclair/typebox';
import { monthWindow, type CloudSnapshot } from '../../domain/cloud.js';
import { badRequest } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { route, type Route } from '../route.js';

const Query = Type.Object({ month: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}$', description: 'YYYY-MM (UTC); default the current month' })) }, { additionalProperties: false });
const Counts = {
  user_identities_count: Type.Integer(),
  non_human_identities_count: Type.Integer(),
  credentials_count: Type.Integer(),
};
const Billing = Type.Object({
  window_start: Type.String(),
  window_end: Type.String(),
  regions: Type.Array(Type.Object({ region: Type.String(), ...Counts, computed_at: Type.String() })),
  total: Type.Object(Counts),
  identities: Type.Object({ user_identities: Type.Integer(), non_human_identities: Type.Integer(), credentials: Type.Integer() }, { description: "distinct identities of each connection's latest snapshot in the window" }),
});

export function cloudBillingRoutes(clock: Clock): Route[] {
  return [
    route<unknown, Static<typeof Query>>({
      method: 'get',
      path: '/stats/billing',
      summary: "The billing counts of a UTC month: the latest row per region and their sums (the seed's reader rule)",
      tag: 'cloud',
      auth: 'key',
      query: Query,
      success: { status: 200, result: Billing },
      errors: [400, 401, 403, 404],
      handler: (req) => {
        let start: number;
        if (req.query.month === undefined) {
          const now = new Date(clock.nowMs());
          start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
        } else {
          const [y, m] = req.query.month.split('-').map(Number) as [number, number];
          if (m < 1 || m > 12) throw badRequest('month: YYYY-MM with a month from 01 to 12');
          start = Date.UTC(y, m - 1, 1);
        }
        const w = monthWindow(start);
        const state = req.org.state;
        const regions = [...state.billing_rows.values()]
          .filter((r) => r.window_start === w.window_start && r.window_end === w.window_end)
          .sort((a, b) => (a.region < b.region ? -1 : 1))
          .map(({ window_start: _s, window_end: _e, ...r }) => r);
        const total = { user_identities_count: 0, non_human_identities_count: 0, credentials_count: 0 };
        for (const r of regions) {
          total.user_identities_count += r.user_identities_count;
          total.non_human_identities_count += r.non_human_identities_count;
          total.credentials_count += r.credentials_count;
        }
        const latest = new Map<string, CloudSnapshot>();
        for (const s of state.cloud_snapshots) if (s.at_ms > w.start_ms && s.at_ms < w.end_ms) latest.set(s.connection_id, s);
        const identities = { user_identities: 0, non_human_identities: 0, credentials: 0 };
        for (const s of latest.values()) {
          identities.user_identities += s.user_identities;
          identities.non_human_identities += s.non_human_identities;
          identities.credentials += s.credentials;
        }
        return { status: 200, result: { window_start: w.window_start, window_end: w.window_end, regions, total, identities } };
      },
    }),
  ];
}
