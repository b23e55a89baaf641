// Helpers for end-user sign-in tests: a fresh organization per test, committed events, token verification.
import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose';
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

export const emailHandle = (value: string) => ({ type: 'email_address', value });

/** A person with an email handle and a password; returns the person ID. */
export async function personWithPassword(org: Org, email: string, password: string): Promise<string> {
  const created = await org.admin.post('/persons', { handles: [emailHandle(email)] });
  if (created.status !== 201) throw new Error(`creating a person answered ${created.status}: ${created.text}`);
  const id = created.body.result.person_id as string;
  const set = await org.admin.put(`/persons/${id}/credentials/password`, { password });
  if (set.status !== 204) throw new Error(`setting the password answered ${set.status}: ${set.text}`);
  return id;
}

export function signIn(org: Org, email: string, password: string, headers?: Record<string, string>) {
  return org.user.post('/authenticate/password', { handle: emailHandle(email), password }, headers);
}

/** Every event committed from now on, per organization, as the event log stores them. */
export function recordEvents(server: TestServer): (org: string, name?: string) => Array<Record<string, any>> {
  const events: Array<{ org: string; event: Record<string, any> }> = [];
  server.service.commits.subscribe((commit) => {
    for (const { event } of commit.events) events.push({ org: commit.org, event });
  });
  return (org, name) => events.filter((e) => e.org === org && (name === undefined || e.event['event_metadata'].event_name === name)).map((e) => e.event);
}

/** Verifies an identity token as a relying party would: against the published key set. */
export async function verifyIdentityToken(server: TestServer, token: string): Promise<JWTPayload> {
  const published = await server.client.get('/.well-known/jwks.json');
  if (published.status !== 200) throw new Error(`the key set answered ${published.status}`);
  const jwks = published.body;
  const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), { algorithms: ['ES256'], issuer: server.service.issuer });
  if (protectedHeader.alg !== 'ES256') throw new Error(`unexpected alg ${protectedHeader.alg}`);
  return payload;
}
