// The deployment-wide index of OAuth client IDs: the token, introspection and revocation endpoints (and the
// end-user ones) are called without an organization header, so the organization comes from the client.
// Built from every organization's state at start, then kept by the commit bus.
import type { OAuthClient } from '../domain/state.js';
import type { OrgActor } from '../org/actor.js';
import type { CommitBus } from '../org/commit-bus.js';
import type { Registry } from '../org/registry.js';

export interface FoundClient {
  org: OrgActor;
  client: OAuthClient;
}

export interface ClientIndex {
  /** The client and its organization; undefined for an unknown or deleted client. */
  find(clientId: string): FoundClient | undefined;
}

export function createClientIndex(registry: Pick<Registry, 'all' | 'get'>, commits: CommitBus): ClientIndex {
  const owner = new Map<string, string>();
  for (const actor of registry.all()) for (const id of actor.state.oauth_clients.keys()) owner.set(id, actor.id);
  commits.subscribe((commit) => {
    for (const entry of commit.entries) {
      for (const change of entry.changes) {
        if (change.t === 'OAuthClientCreated') owner.set(change.client.client_id, commit.org);
        else if (change.t === 'OAuthClientDeleted') owner.delete(change.client_id);
      }
    }
  }, 'the OAuth client index');
  return {
    find(clientId) {
      const orgId = owner.get(clientId);
      if (orgId === undefined) return undefined;
      const org = registry.get(orgId);
      // The organization's state is the authority; the index only says where to look.
      const client = org?.state.oauth_clients.get(clientId);
      return org && client ? { org, client } : undefined;
    },
  };
}
