// POST /persons/anonymous: an anonymous person and its token, for a browser with the organization's ID alone.
import { Type, type Static } from '@sinclair/typebox';
import type { AnonymousPersons } from '../../browser/anonymous.js';
import { route, type Route } from '../route.js';
import { Region } from '../schemas.js';

const AnonymousBody = Type.Object({ region: Type.Optional(Region) }, { additionalProperties: false });

export function anonymousRoutes(anonymous: AnonymousPersons): Route[] {
  return [
    route<Static<typeof AnonymousBody> | undefined>({
      method: 'post',
      path: '/persons/anonymous',
      summary: "Create an anonymous person (no handles; attributes and consents through the end-user routes) and answer its token; emits AnonymousPersonCreated and AnonymousTokenMinted",
      tag: 'browser',
      auth: 'org',
      cors: true,
      headers: ['service-analytics-correlation-id'],
      body: AnonymousBody,
      bodyOptional: true,
      success: { status: 201, result: Type.String({ description: "the anonymous person's identity token (person_type anonymous)" }) },
      errors: [400, 404, 408, 429],
      handler: async (req) => ({
        status: 201,
        result: await anonymous.create({
          org: req.org,
          region: req.body?.region,
          ip: req.ip,
          correlation_id: req.headers['service-analytics-correlation-id'],
          consistency: req.consistency,
        }),
      }),
    }),
  ];
}
