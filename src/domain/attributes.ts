// Decisions about attribute sets, of the organization or of one person, in a named bucket.
import { notFound, quote } from '../errors.js';
import type { Change } from './changes.js';
import { decision, type Decision } from './decision.js';
import { checkAttributes, isBucket } from './rules.js';
import type { AttributeSet, OrgState } from './state.js';
import { requirePerson } from './lookup.js';

export function requireBucket(bucket: string): void {
  if (!isBucket(bucket)) throw notFound(`attribute bucket ${quote(bucket)} not found`);
}

/** The attribute set a read or write addresses: the organization's, or the person's when person_id is given. */
export function attributesOf(state: OrgState, personId: string | undefined, bucket: string): AttributeSet {
  // The person first: a request for someone who does not exist is about that, whichever bucket it names.
  const person = personId === undefined ? undefined : requirePerson(state, personId);
  requireBucket(bucket);
  if (person === undefined) return state.attributes.get(bucket) ?? {};
  return person.attributes[bucket] ?? {};
}

export function setAttributes(state: OrgState, personId: string | undefined, bucket: string, attributes: AttributeSet, replace: boolean): Decision<null> {
  attributesOf(state, personId, bucket);
  checkAttributes(attributes);
  return decision(null, [
    personId === undefined
      ? { t: 'AttributesSet', bucket, attributes, replace }
      : { t: 'AttributesSet', person_id: personId, bucket, attributes, replace },
  ]);
}

export function deleteAttributes(state: OrgState, personId: string | undefined, bucket: string, names: string[] | undefined): Decision<null> {
  const current = attributesOf(state, personId, bucket);
  const present = names === undefined ? Object.keys(current).length > 0 : names.some((n) => Object.hasOwn(current, n));
  if (!present) return decision(null);
  const base = personId === undefined ? {} : { person_id: personId };
  return decision(null, [names === undefined ? { t: 'AttributesDeleted', ...base, bucket } : { t: 'AttributesDeleted', ...base, bucket, names }]);
}

/**
 * Several buckets in one entry, each checked as the single-bucket write checks it, all before any is
 * written: one unknown bucket or bad attribute refuses the whole request.
 */
export function setAttributeBuckets(state: OrgState, personId: string | undefined, buckets: Record<string, AttributeSet>, replace: boolean): Decision<null> {
  // Looked up even when no bucket is named, which the loop alone would never do.
  if (personId !== undefined) requirePerson(state, personId);
  const changes: Change[] = [];
  for (const [bucket, attributes] of Object.entries(buckets)) {
    attributesOf(state, personId, bucket);
    checkAttributes(attributes, bucket);
    changes.push(personId === undefined ? { t: 'AttributesSet', bucket, attributes, replace } : { t: 'AttributesSet', person_id: personId, bucket, attributes, replace });
  }
  return decision(null, changes);
}
