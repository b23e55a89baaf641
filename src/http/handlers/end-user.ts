// End-user routes: a person (anonymous or regular) reads and changes their own GDPR consents and attributes
// with their own identity token; each attribute bucket's end-user permission decides what they may do.
import { Type, type Static } from '@sinclair/typebox';
import { attributesOf } from '../../domain/attributes.js';
import { requirePerson } from '../../domain/lookup.js';
import { BUCKETS } from '../../domain/rules.js';
import { CONSENT_LEVELS, type AttributeSet as Attributes, type ConsentLevel as Level, type GdprConsent } from '../../domain/state.js';
import { badRequest, notFound, quote, ServiceError } from '../../errors.js';
import type { Authenticator } from '../auth.js';
import { route, type Request, type Route } from '../route.js';
import { AttributeSet, CommaList, splitList } from '../schemas.js';
import { execute, type HandlerDeps } from './deps.js';

const ConsentLevel = Type.Union(CONSENT_LEVELS.map((l) => Type.Literal(l)));
const ConsentsBody = Type.Object({ consent_levels: Type.Array(ConsentLevel, { maxItems: CONSENT_LEVELS.length * 2 }) }, { additionalProperties: false });
const ConsentsRet = Type.Object({ consents: Type.Array(Type.Object({ consent_level: ConsentLevel, created_at: Type.String() })) });
const NamesQuery = Type.Object({ attributes: CommaList('comma-separated attribute names; all when absent') }, { additionalProperties: false });

/** The person the token names (the authenticator made the principal). */
const personOf = (req: Request<unknown, unknown>) => (req.principal as { person_id: string }).person_id;

/** What the person may do in a bucket: read_write both, read_only reads, no_access nothing (403). */
function checkBucket(name: string, write: boolean): void {
  const bucket = BUCKETS.find((b) => b.name === name);
  if (!bucket) throw notFound(`attribute bucket ${quote(name)} not found`);
  if (bucket.end_user_permissions === 'no_access') throw new ServiceError('ERR_FORBIDDEN', `attribute bucket ${quote(name)} is not accessible to end users`);
  if (write && bucket.end_user_permissions === 'read_only') throw new ServiceError('ERR_FORBIDDEN', `attribute bucket ${quote(name)} is read-only for end users`);
}

function pick(set: Attributes, names: string[] | undefined): Attributes {
  if (names === undefined) return set;
  return Object.fromEntries(names.filter((n) => Object.hasOwn(set, n)).map((n) => [n, set[n]]));
}

export function endUserRoutes(deps: HandlerDeps, auth: Authenticator): Route[] {
  const setConsents = (req: Request<unknown, unknown>, levels: Level[]) => execute<GdprConsent[]>(deps, req, { kind: 'SetGdprConsents', person_id: personOf(req), levels });
  const common = { tag: 'end users', auth, cors: true } as const;
  const writeAttributes = (method: 'put' | 'patch', replace: boolean, summary: string) =>
    route<Attributes>({
      ...common,
      method,
      path: '/attributes/{bucket_name}',
      summary,
      body: AttributeSet,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const bucket = req.params['bucket_name'] as string;
        checkBucket(bucket, true);
        await execute(deps, req, { kind: 'SetAttributes', person_id: personOf(req), bucket, attributes: req.body, replace });
        return { status: 204 };
      },
    });
  return [
    route({
      ...common,
      method: 'get',
      path: '/consent/gdpr',
      summary: "The calling person's GDPR consents",
      success: { status: 200, result: ConsentsRet },
      errors: [401],
      handler: (req) => ({ status: 200, result: { consents: requirePerson(req.org.state, personOf(req)).gdpr_consents } }),
    }),
    route<Static<typeof ConsentsBody>>({
      ...common,
      method: 'put',
      path: '/consent/gdpr',
      summary: "Replace the calling person's GDPR consents; a level kept from before keeps its created_at",
      body: ConsentsBody,
      success: { status: 200, result: ConsentsRet },
      errors: [400, 401, 408],
      handler: async (req) => ({ status: 200, result: { consents: await setConsents(req, req.body.consent_levels) } }),
    }),
    route<Static<typeof ConsentsBody>>({
      ...common,
      method: 'post',
      path: '/consent/gdpr',
      summary: "Add GDPR consent levels to the calling person's; those held already are kept as they are",
      body: ConsentsBody,
      success: { status: 201, result: ConsentsRet },
      errors: [400, 401, 408],
      handler: async (req) => {
        const held = requirePerson(req.org.state, personOf(req)).gdpr_consents.map((c) => c.consent_level);
        return { status: 201, result: { consents: await setConsents(req, [...held, ...req.body.consent_levels.filter((l) => !held.includes(l))]) } };
      },
    }),
    route({
      ...common,
      method: 'delete',
      path: '/consent/gdpr',
      summary: "Remove every GDPR consent of the calling person",
      success: { status: 204 },
      errors: [401, 408],
      handler: async (req) => {
        await setConsents(req, []);
        return { status: 204 };
      },
    }),
    writeAttributes('put', true, "Replace the calling person's attributes in a bucket their end-user permission lets them write"),
    writeAttributes('patch', false, "Merge into the calling person's attributes in a bucket their end-user permission lets them write"),
    route<unknown, { attributes?: string }>({
      ...common,
      method: 'get',
      path: '/attributes/{bucket_name}',
      summary: "Read the calling person's attributes in a bucket their end-user permission lets them read",
      query: NamesQuery,
      success: { status: 200, result: AttributeSet },
      errors: [400, 401, 403, 404],
      handler: (req) => {
        const bucket = req.params['bucket_name'] as string;
        checkBucket(bucket, false);
        return { status: 200, result: pick(attributesOf(req.org.state, personOf(req), bucket), splitList(req.query.attributes)) };
      },
    }),
    route<unknown, { attributes?: string }>({
      ...common,
      method: 'delete',
      path: '/attributes/{bucket_name}',
      summary: "Delete the calling person's attributes in a bucket (the named ones, or all) their end-user permission lets them write",
      query: NamesQuery,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const bucket = req.params['bucket_name'] as string;
        checkBucket(bucket, true);
        const names = splitList(req.query.attributes);
        if (names !== undefined && names.length === 0) throw badRequest('attributes: names no attribute; leave the parameter out to delete them all');
        await execute(deps, req, { kind: 'DeleteAttributes', person_id: personOf(req), bucket, ...(names === undefined ? {} : { names }) });
        return { status: 204 };
      },
    }),
  ];
}
