// The Active Directory SPN changes of API.md's table as use cases: SPN syntax, account and group names checked
// by us, the change made in the directory, then the event committed with the account as the directory reports
// it, in the organization's cloud queue from the directory call to the commit.
import { badRequest, quote } from '../errors.js';
import { createAdSpns, withDirectory } from './ad.js';
import type { EventBody } from './aws.js';
import { runChange, type Change, type ChangeDeps } from './change.js';
import type { Clients, OrgPort } from './connections.js';

const SERVICE_CLASS = /^[A-Za-z][A-Za-z0-9-]{0,63}$/;
/** host[:port]; the three-part form (class/host:port/service-name) is not taken */
const SERVICE_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})(?::\d{1,5})?$/;
/** sAMAccountName: at most 20 characters (a computer's ends in $), none of "/\[]:;|=,+*?<>@ */
const ACCOUNT = /^[^"/\\[\]:;|=,+*?<>@\s][^"/\\[\]:;|=,+*?<>@]{0,19}$/;

export function checkSpn(serviceClass: string, serviceName: string): void {
  if (!SERVICE_CLASS.test(serviceClass)) throw badRequest(`service_class: ${quote(serviceClass)} must be a letter then up to 63 letters, digits and hyphens (HTTP, MSSQLSvc, host)`);
  if (!SERVICE_NAME.test(serviceName)) throw badRequest(`service_name: ${quote(serviceName)} must be a host name with an optional :port`);
  const port = serviceName.split(':')[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) throw badRequest(`service_name: port ${port} out of range`);
}

export function checkAccountName(name: string, field: string): void {
  if (!ACCOUNT.test(name)) throw badRequest(`${field}: ${quote(name)} is not a sAMAccountName (1 to 20 characters, none of "/\\[]:;|=,+*?<>@)`);
}

export function createAdChanges(deps: ChangeDeps & { clients: Clients }) {
  const perform = (org: OrgPort, connectionId: string, event: string, call: (spns: ReturnType<typeof createAdSpns>) => Promise<EventBody>): Promise<Change> =>
    runChange(deps, org, connectionId, event, (connection) => {
      const { config, credentials, outbound } = deps.clients.ad(org.id, connection);
      return withDirectory(config, credentials, outbound, (client) => call(createAdSpns(client, config)));
    });
  return {
    createSpn(org: OrgPort, connectionId: string, input: { account_name: string; service_class: string; service_name: string }): Promise<Change> {
      checkAccountName(input.account_name, 'account_name');
      checkSpn(input.service_class, input.service_name);
      return perform(org, connectionId, 'ActiveDirectorySPNCreated_v1', (spns) => spns.create(input.account_name, input.service_class, input.service_name));
    },
    setGroups(org: OrgPort, connectionId: string, serviceClass: string, serviceName: string, groups: string[]): Promise<Change> {
      checkSpn(serviceClass, serviceName);
      if (new Set(groups.map((g) => g.toLowerCase())).size !== groups.length) throw badRequest('groups: a group is given twice');
      for (const [i, g] of groups.entries()) if (g.length < 1 || g.length > 256 || /[\0"/\\[\]:;|=,+*?<>]/.test(g)) throw badRequest(`groups[${i}]: ${quote(g)} is not a group's sAMAccountName`);
      return perform(org, connectionId, 'ActiveDirectorySPNRoleUpdated_v1', (spns) => spns.setGroups(serviceClass, serviceName, groups));
    },
    deleteSpn(org: OrgPort, connectionId: string, serviceClass: string, serviceName: string): Promise<Change> {
      checkSpn(serviceClass, serviceName);
      return perform(org, connectionId, 'ActiveDirectorySPNDeleted_v1', (spns) => spns.delete(serviceClass, serviceName));
    },
  };
}

export type AdChanges = ReturnType<typeof createAdChanges>;
