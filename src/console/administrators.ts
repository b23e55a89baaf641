// Who may use the console: persons holding the console permissions, through the role this file keeps. The
// first one comes from a one-time link printed at the first start; an administrator (or the API key) makes more.
import { timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.js';
import type { OrgActor } from '../org/actor.js';
import { hashKey } from '../org/registry.js';
import type { MetaStore } from '../wal/sealed-meta.js';
import { CONSOLE_PERMISSIONS, consoleClientOf, consoleRedirect } from './auth.js';

/** The role the console's administrators hold: every console permission. */
export const ADMINISTRATOR_ROLE = 'console-administrator';

/**
 * Makes the person an administrator of the organization: the console permissions, the role holding them and the
 * console's OAuth client are created when missing (each an ordinary command, so each an ordinary event).
 */
export async function makeAdministrator(org: OrgActor, personId: string, issuer: string): Promise<{ person_id: string; roles: string[]; client_id: string }> {
  for (const name of CONSOLE_PERMISSIONS) {
    if (!org.state.permissions.has(name)) await org.execute({ kind: 'CreatePermission', name, description: `the console: ${name.slice('console.'.length)}` });
  }
  if (!org.state.roles.has(ADMINISTRATOR_ROLE)) await org.execute({ kind: 'CreateRole', name: ADMINISTRATOR_ROLE, description: 'administers the organization in the console', permissions: [...CONSOLE_PERMISSIONS] });
  const held = org.state.persons.get(personId)?.roles ?? [];
  const { reply: roles } = await org.execute<string[]>({ kind: 'SetPersonRoles', person_id: personId, roles: [...held, ADMINISTRATOR_ROLE] });
  return { person_id: personId, roles, client_id: await ensureConsoleClient(org, issuer) };
}

/** The organization's console client, registered on first need: public, authorization code with PKCE only. */
export async function ensureConsoleClient(org: OrgActor, issuer: string): Promise<string> {
  const existing = consoleClientOf(org.state, issuer);
  if (existing) return existing.client_id;
  const { reply } = await org.execute<{ client_id: string }>({
    kind: 'CreateOAuthClient',
    input: { client_name: 'Console', scopes: ['openid'], grant_types: ['authorization_code'], redirect_uris: [consoleRedirect(issuer)], public: true },
  });
  return reply.client_id;
}

const META = 'console_first_administrator';

export interface FirstAdministrator {
  /** A new one-time code for the organization, stored hashed; to be shown once, as a link. */
  issue(orgId: string, code: string): Promise<void>;
  /** The organization the code was for; the code is spent (issue it again to give it back). */
  redeem(code: string): Promise<string>;
}

export function createFirstAdministrator(meta: MetaStore): FirstAdministrator {
  let spending = false;
  return {
    async issue(orgId, code) {
      await meta.putMeta(META, { org: orgId, hash: hashKey(code) });
    },
    async redeem(code) {
      const stored = meta.getMeta<{ org: string; hash: string } | null>(META);
      const wrong = new ServiceError('ERR_FORBIDDEN', 'code: not a first-administrator link of this service, or one already used');
      if (!stored || spending) throw wrong;
      if (!timingSafeEqual(Buffer.from(hashKey(code)), Buffer.from(stored.hash))) throw wrong;
      spending = true;
      try {
        await meta.putMeta(META, null);
      } finally {
        spending = false;
      }
      return stored.org;
    },
  };
}
