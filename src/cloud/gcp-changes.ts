// The GCP changes of API.md's table as use cases: account ids, display names, principals, role names and
// conditions checked by us, the change made through Google's client libraries, then the event committed with
// the provider's answer, in the organization's cloud queue from the provider call to the commit.
import { badRequest, quote } from '../errors.js';
import type { EventBody } from './aws.js';
import { runChange, type Change, type ChangeDeps } from './change.js';
import type { Clients, OrgPort } from './connections.js';
import { createGcpChanges, type GcpBinding } from './gcp.js';

const ACCOUNT_ID = /^[a-z](?:[-a-z0-9]{4,28}[a-z0-9])$/;
export const EMAIL = /^[^@\s]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/;
export const PRINCIPAL = /^(?:user|serviceAccount|group):[^@\s:]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$|^domain:[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/;
const ROLE = /^(?:roles\/[A-Za-z0-9_.]{1,64}|(?:projects|organizations)\/[A-Za-z0-9_.-]{1,64}\/roles\/[A-Za-z0-9_.]{1,64})$/;

export function checkServiceAccount(accountId: string, displayName?: string, description?: string): void {
  if (!ACCOUNT_ID.test(accountId)) throw badRequest(`account_id: ${quote(accountId)} must be 6 to 30 lower-case letters, digits and hyphens, starting with a letter`);
  if (displayName !== undefined && displayName.length > 100) throw badRequest('display_name: at most 100 characters');
  if (description !== undefined && description.length > 256) throw badRequest('description: at most 256 characters');
}

export function checkBindings(principal: string, bindings: readonly GcpBinding[]): void {
  if (!PRINCIPAL.test(principal)) throw badRequest(`principal: ${quote(principal)} must be user:, serviceAccount: or group: and an email address, or domain: and a domain`);
  const seen = new Set<string>();
  for (const [i, b] of bindings.entries()) {
    if (!ROLE.test(b.role)) throw badRequest(`bindings[${i}].role: ${quote(b.role)} is not a role name (roles/…, projects/…/roles/…, organizations/…/roles/…)`);
    if (b.condition) {
      const c = b.condition;
      if (!c.expression || c.expression.length > 12800) throw badRequest(`bindings[${i}].condition.expression: a CEL expression of 1 to 12800 characters`);
      if (!c.title || c.title.length > 100) throw badRequest(`bindings[${i}].condition.title: 1 to 100 characters`);
      if (c.description !== undefined && c.description.length > 256) throw badRequest(`bindings[${i}].condition.description: at most 256 characters`);
      if (!balanced(c.expression)) throw badRequest(`bindings[${i}].condition.expression: unbalanced parentheses or quotes`);
    }
    const key = JSON.stringify([b.role, b.condition?.expression ?? '', b.condition?.title ?? '']);
    if (seen.has(key)) throw badRequest(`bindings[${i}]: the same role and condition given twice`);
    seen.add(key);
  }
}

/** A light check of CEL text: parentheses balance outside string literals, and every literal is closed. */
function balanced(expression: string): boolean {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < expression.length; i++) {
    const ch = expression[i] as string;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(') depth++;
    else if (ch === ')' && --depth < 0) return false;
  }
  return depth === 0 && quote === undefined;
}

export function createGcpUseCases(deps: ChangeDeps & { clients: Clients }) {
  const perform = (org: OrgPort, connectionId: string, event: string, call: (g: ReturnType<typeof createGcpChanges>) => Promise<EventBody>): Promise<Change> =>
    runChange(deps, org, connectionId, event, (connection) => {
      const { clients, project } = deps.clients.gcp(org.id, connection);
      return call(createGcpChanges(clients, project));
    });
  return {
    createServiceAccount(org: OrgPort, connectionId: string, input: { account_id: string; display_name?: string; description?: string }): Promise<Change> {
      checkServiceAccount(input.account_id, input.display_name, input.description);
      return perform(org, connectionId, 'GCPServiceAccountCreated_v1', (g) => g.createServiceAccount(input.account_id, input.display_name, input.description));
    },
    setBindings(org: OrgPort, connectionId: string, principal: string, bindings: GcpBinding[]): Promise<Change> {
      checkBindings(principal, bindings);
      return perform(org, connectionId, 'GCPIAMPolicyBindingUpdated_v1', (g) => g.setBindings(principal, bindings));
    },
    deleteServiceAccount(org: OrgPort, connectionId: string, email: string): Promise<Change> {
      if (!EMAIL.test(email)) throw badRequest(`email: ${quote(email)} is not a service account's email address`);
      return perform(org, connectionId, 'GCPServiceAccountDeleted_v1', (g) => g.deleteServiceAccount(email));
    },
  };
}

export type GcpUseCases = ReturnType<typeof createGcpUseCases>;
