// Attribute buckets and attribute sets, of the organization and of each person.
import { Type } from '@sinclair/typebox';
import { attributesOf, requireBucket } from '../../domain/attributes.js';
import { requirePerson } from '../../domain/lookup.js';
import { BUCKETS } from '../../domain/rules.js';
import type { AttributeSet as Attributes } from '../../domain/state.js';
import { badRequest } from '../../errors.js';
import { route, type Request, type Route } from '../route.js';
import { AttributeSet, CommaList, splitList } from '../schemas.js';
import { execute, type HandlerDeps } from './deps.js';

const NamesQuery = Type.Object({ attributes: CommaList('comma-separated attribute names; all when absent') }, { additionalProperties: false });

type AttrRequest = Request<Attributes, { attributes?: string }>;

function pick(set: Attributes, names: string[] | undefined): Attributes {
  if (names === undefined) return set;
  return Object.fromEntries(names.filter((n) => Object.hasOwn(set, n)).map((n) => [n, set[n]]));
}

/** The four operations on one bucket, mounted for the organization and for a person. */
function bucketRoutes(deps: HandlerDeps, base: string, owner: 'organization' | 'person'): Route[] {
  const personOf = (req: AttrRequest) => (owner === 'person' ? (req.params['person_id'] as string) : undefined);
  const bucketOf = (req: AttrRequest) => req.params['bucket_name'] as string;
  const write = (method: 'put' | 'patch', replace: boolean, summary: string) =>
    route<Attributes>({
      method,
      path: `${base}/attributes/{bucket_name}`,
      summary,
      tag: 'attributes',
      auth: 'key',
      body: AttributeSet,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const person_id = personOf(req);
        const common = { kind: 'SetAttributes' as const, bucket: bucketOf(req), attributes: req.body, replace };
        await execute(deps, req, person_id === undefined ? common : { ...common, person_id });
        return { status: 204 };
      },
    });
  const whose = owner === 'person' ? "a person's" : "the organization's";
  return [
    write('put', true, `Replace ${whose} attributes in a bucket: keys not in the body are deleted`),
    write('patch', false, `Merge into ${whose} attributes in a bucket: keys not in the body are kept`),
    route<unknown, { attributes?: string }>({
      method: 'get',
      path: `${base}/attributes/{bucket_name}`,
      summary: `Read ${whose} attributes in a bucket`,
      tag: 'attributes',
      auth: 'key',
      query: NamesQuery,
      success: { status: 200, result: AttributeSet },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: pick(attributesOf(req.org.state, personOf(req as AttrRequest), bucketOf(req as AttrRequest)), splitList(req.query.attributes)) }),
    }),
    route<unknown, { attributes?: string }>({
      method: 'delete',
      path: `${base}/attributes/{bucket_name}`,
      summary: `Delete ${whose} attributes in a bucket: the named ones, or all`,
      tag: 'attributes',
      auth: 'key',
      query: NamesQuery,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const person_id = personOf(req as AttrRequest);
        const names = splitList(req.query.attributes);
        // ?attributes= naming nothing is more likely a client's empty list than a wish to delete all
        if (names !== undefined && names.length === 0) throw badRequest('attributes: names no attribute; leave the parameter out to delete them all');
        const common = { kind: 'DeleteAttributes' as const, bucket: bucketOf(req as AttrRequest), ...(names === undefined ? {} : { names }) };
        await execute(deps, req, person_id === undefined ? common : { ...common, person_id });
        return { status: 204 };
      },
    }),
  ];
}

const Buckets = Type.Record(Type.String(), AttributeSet, { description: 'bucket name → attributes', maxProperties: BUCKETS.length });
const BucketsQuery = Type.Object({ buckets: CommaList('comma-separated bucket names; all when absent') }, { additionalProperties: false });

/** The original's multi-bucket writes: every bucket named in one entry, or none when one is refused. */
function multiBucketRoutes(deps: HandlerDeps, base: string, owner: 'organization' | 'person'): Route[] {
  const whose = owner === 'person' ? "a person's" : "the organization's";
  const write = (method: 'put' | 'patch', replace: boolean, summary: string) =>
    route<Record<string, Attributes>>({
      method,
      path: `${base}/attributes`,
      summary,
      tag: 'attributes',
      auth: 'key',
      body: Buckets,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const common = { kind: 'SetAttributeBuckets' as const, buckets: req.body, replace };
        await execute(deps, req, owner === 'person' ? { ...common, person_id: req.params['person_id'] as string } : common);
        return { status: 204 };
      },
    });
  return [
    write('put', true, `Replace ${whose} attributes in each named bucket (keys not in the body are deleted); buckets not named are left alone`),
    write('patch', false, `Merge into ${whose} attributes in each named bucket: keys not in the body are kept`),
  ];
}

export function attributeRoutes(deps: HandlerDeps): Route[] {
  return [
    ...multiBucketRoutes(deps, '/organizations', 'organization'),
    ...multiBucketRoutes(deps, '/persons/{person_id}', 'person'),
    route<unknown, { buckets?: string }>({
      method: 'get',
      path: '/organizations/attributes',
      summary: "Read the organization's attributes in the named buckets (?buckets=a,b), or in every bucket",
      tag: 'attributes',
      auth: 'key',
      query: BucketsQuery,
      success: { status: 200, result: Buckets },
      errors: [400, 401, 403, 404],
      handler: (req) => {
        const given = req.query.buckets;
        if (given !== undefined && given.split(',').some((n) => n.trim() === '')) throw badRequest('buckets: empty bucket names are not permitted; leave the parameter out for every bucket');
        const all = req.org.state.attributes;
        // Named buckets answer even when empty; without names, the buckets that hold attributes.
        const names = splitList(given);
        for (const n of names ?? []) requireBucket(n);
        return { status: 200, result: Object.fromEntries((names ?? [...all.keys()]).map((n) => [n, all.get(n) ?? {}])) };
      },
    }),
    route({
      method: 'get',
      path: '/organizations/attribute-buckets',
      summary: 'List the attribute buckets of the organization',
      tag: 'attributes',
      auth: 'key',
      success: {
        status: 200,
        result: Type.Array(Type.Object({ name: Type.String(), sharing_scope: Type.String(), owner_organization_id: Type.String(), end_user_permissions: Type.String() })),
      },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: BUCKETS.map((b) => ({ ...b, owner_organization_id: req.org.id })) }),
    }),
    ...bucketRoutes(deps, '/organizations', 'organization'),
    ...bucketRoutes(deps, '/persons/{person_id}', 'person'),
    route({
      method: 'get',
      path: '/persons/{person_id}/attributes',
      summary: "Read a person's attributes in every bucket",
      tag: 'attributes',
      auth: 'key',
      success: { status: 200, result: Type.Record(Type.String(), AttributeSet) },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: requirePerson(req.org.state, req.params['person_id'] as string).attributes }),
    }),
  ];
}
