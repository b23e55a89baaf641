// A person's GDPR consents.
import { Type, type Static } from '@sinclair/typebox';
import { requirePerson } from '../../domain/lookup.js';
import { CONSENT_LEVELS, type GdprConsent } from '../../domain/state.js';
import { route, type Route } from '../route.js';
import { execute, type HandlerDeps } from './deps.js';

const ConsentLevel = Type.Union(CONSENT_LEVELS.map((l) => Type.Literal(l)));
const ConsentsBody = Type.Object({ consent_levels: Type.Array(ConsentLevel, { maxItems: CONSENT_LEVELS.length * 2 }) }, { additionalProperties: false });
const ConsentsRet = Type.Object({ consents: Type.Array(Type.Object({ consent_level: ConsentLevel, created_at: Type.String() })) });

const PATH = '/persons/{person_id}/consent/gdpr';

export function consentRoutes(deps: HandlerDeps): Route[] {
  const set = (req: Parameters<Route['handler']>[0], levels: Static<typeof ConsentsBody>['consent_levels']) =>
    execute<GdprConsent[]>(deps, req, { kind: 'SetGdprConsents', person_id: req.params['person_id'] as string, levels });
  return [
    route({
      method: 'get',
      path: PATH,
      summary: "A person's GDPR consents",
      tag: 'persons',
      auth: 'key',
      success: { status: 200, result: ConsentsRet },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: { consents: requirePerson(req.org.state, req.params['person_id'] as string).gdpr_consents } }),
    }),
    route<Static<typeof ConsentsBody>>({
      method: 'put',
      path: PATH,
      summary: "Replace a person's GDPR consents; a level kept from before keeps its created_at",
      tag: 'persons',
      auth: 'key',
      body: ConsentsBody,
      success: { status: 200, result: ConsentsRet },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => ({ status: 200, result: { consents: await set(req, req.body.consent_levels) } }),
    }),
    route<Static<typeof ConsentsBody>>({
      method: 'post',
      path: PATH,
      summary: "Add levels to a person's GDPR consents; levels held already keep their created_at",
      tag: 'persons',
      auth: 'key',
      body: ConsentsBody,
      success: { status: 201, result: ConsentsRet },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => ({
        status: 201,
        result: { consents: await execute<GdprConsent[]>(deps, req, { kind: 'AddGdprConsents', person_id: req.params['person_id'] as string, levels: req.body.consent_levels }) },
      }),
    }),
    route({
      method: 'delete',
      path: PATH,
      summary: "Remove every GDPR consent of a person",
      tag: 'persons',
      auth: 'key',
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await set(req, []);
        return { status: 204 };
      },
    }),
  ];
}
