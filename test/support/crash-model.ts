// What the crash workload knows about the data: every write acknowledged with a 2xx, and, per writer, the one
// write still in flight when the process died. After a restart the service must hold every acknowledged write;
// an in-flight write may or may not have landed, and nothing else may appear.
import assert from 'node:assert/strict';
import { Client } from './server.js';

export interface Tenant {
  orgId: string;
  apiKey: string;
}

export interface PersonRecord {
  id: string;
  /** sorted, as the service normalizes them */
  groups: string[];
  /** groups of a PUT whose answer never came */
  pendingGroups?: string[];
}

/** One sequential writer: it owns one attribute bucket of its organization and the persons it creates. */
export interface Writer {
  name: string;
  tenant: Tenant;
  bucket: string;
  seq: number;
  /** seq of the last acknowledged PUT of the bucket */
  attribute: number | undefined;
  /** seq of a PUT of the bucket whose answer never came */
  pendingAttribute?: number;
  /** handle of a POST /persons whose answer never came */
  pendingPerson?: string;
}

export interface TenantModel {
  tenant: Tenant;
  groups: string[];
  /** handle → person, for every person the service acknowledged (or was found to hold after a crash) */
  persons: Map<string, PersonRecord>;
}

export interface Resolution {
  /** writes with no answer before the kill */
  inFlight: number;
  /** of those, how many the restarted service holds */
  applied: number;
  persons: number;
}

const sorted = (xs: readonly string[]) => [...xs].sort();

interface ListedPerson {
  person_id: string;
  handles: Array<{ type: string; value: string }>;
  groups: string[];
}

async function listPersons(client: Client): Promise<ListedPerson[]> {
  const out: ListedPerson[] = [];
  for (let offset = 0; ; offset += 1000) {
    const r = await client.get(`/persons?fields=handles,groups&limit=1000&offset=${offset}`);
    assert.equal(r.status, 200, `GET /persons: ${r.text}`);
    out.push(...(r.body.result as ListedPerson[]));
    if (offset + 1000 >= r.body.meta.pagination.total_count) return out;
  }
}

/**
 * Checks one organization against the model after a restart, then folds what was in flight into the model,
 * so that the next cycle starts from what is now known to be durable. `where` prefixes every failure message.
 */
export async function verifyTenant(base: string, model: TenantModel, writers: Writer[], where: string): Promise<Resolution> {
  const client = new Client(base, model.tenant.orgId, model.tenant.apiKey);
  const res: Resolution = { inFlight: 0, applied: 0, persons: 0 };
  const org = model.tenant.orgId;

  const groups = await client.get('/groups');
  assert.deepEqual(groups.body.result, model.groups, `${where}: groups of ${org}`);

  const listed = await listPersons(client);
  const byHandle = new Map<string, ListedPerson>();
  for (const p of listed) {
    assert.equal(p.handles.length, 1, `${where}: person ${p.person_id} of ${org} has handles ${JSON.stringify(p.handles)}`);
    const handle = p.handles[0]?.value as string;
    assert.ok(!byHandle.has(handle), `${where}: two persons with handle ${handle} in ${org}`);
    byHandle.set(handle, p);
  }

  for (const [handle, person] of model.persons) {
    const found = byHandle.get(handle);
    assert.ok(found, `${where}: acknowledged person ${handle} (${person.id}) of ${org} is missing`);
    assert.equal(found.person_id, person.id, `${where}: person ${handle} of ${org} has another ID`);
    const actual = sorted(found.groups);
    const allowed = [person.groups, ...(person.pendingGroups ? [person.pendingGroups] : [])];
    assert.ok(
      allowed.some((g) => JSON.stringify(g) === JSON.stringify(actual)),
      `${where}: groups of ${handle} are ${JSON.stringify(actual)}, acknowledged ${JSON.stringify(person.groups)}, in flight ${JSON.stringify(person.pendingGroups)}`,
    );
    if (person.pendingGroups) {
      res.inFlight++;
      if (JSON.stringify(actual) === JSON.stringify(person.pendingGroups)) res.applied++;
    }
    person.groups = actual;
    delete person.pendingGroups;
  }

  for (const w of writers) {
    if (w.pendingPerson !== undefined) {
      res.inFlight++;
      const found = byHandle.get(w.pendingPerson);
      if (found) {
        res.applied++;
        assert.deepEqual(found.groups, [], `${where}: in-flight person ${w.pendingPerson} was created with groups`);
        model.persons.set(w.pendingPerson, { id: found.person_id, groups: [] });
      }
      delete w.pendingPerson;
    }

    const r = await client.get(`/organizations/attributes/${w.bucket}`);
    assert.equal(r.status, 200, `${where}: GET attributes of ${w.name}: ${r.text}`);
    const value = r.body.result as { writer?: string; seq?: number };
    const seq = value.seq;
    if (seq !== undefined) assert.equal(value.writer, w.name, `${where}: bucket ${w.bucket} of ${org} holds another writer's value`);
    const allowed = [w.attribute, ...(w.pendingAttribute !== undefined ? [w.pendingAttribute] : [])];
    assert.ok(
      allowed.includes(seq),
      `${where}: ${w.name} reads seq ${seq} from ${w.bucket}, acknowledged ${w.attribute}, in flight ${w.pendingAttribute}`,
    );
    if (w.pendingAttribute !== undefined) {
      res.inFlight++;
      if (seq === w.pendingAttribute) res.applied++;
    }
    w.attribute = seq;
    delete w.pendingAttribute;
  }

  // Nothing that was never written may appear: every person listed is one the model now knows.
  for (const handle of byHandle.keys()) {
    assert.ok(model.persons.has(handle), `${where}: ${org} holds person ${handle}, which no writer created`);
  }
  res.persons = model.persons.size;
  return res;
}
