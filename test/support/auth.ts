// Helpers for tests that need an organization of their own.
import type { Client, TestServer } from './server.js';

export interface Org {
  id: string;
  /** with the organization's API key */
  admin: Client;
  /** Service-OrgID only, as an end user's browser calls */
  user: Client;
}

/** A new suborganization, so a test's webhooks, persons and throttling counters are its own. */
export async function newOrg(server: TestServer, name = 'test'): Promise<Org> {
  const r = await server.client.post('/organizations/suborganizations', { sub_org_name: name });
  if (r.status !== 200) throw new Error(`creating a suborganization answered ${r.status}: ${r.text}`);
  const { id, api_key } = r.body.result as { id: string; api_key: string };
  return { id, admin: server.client.as(id, api_key), user: server.client.as(id, '') };
}

/** The same organization, reached through another server (after a restart, the old one's clients would
 * keep talking to the stopped process over kept-alive connections). */
export function sameOrgOn(server: TestServer, org: Org): Org {
  return { id: org.id, admin: server.client.as(org.id, org.admin.apiKey), user: server.client.as(org.id, '') };
}
