// Active Directory over LDAP (ldapts): SPNs added to and removed from accounts, the groups (roles) of the
// account holding an SPN, and an inventory of accounts; each change read back so the event carries the
// directory's answer (the account's distinguished name and type). Errors keep the directory's own code.
import type { connect as netConnect } from 'node:net';
import type { connect as tlsConnect, ConnectionOptions } from 'node:tls';
import { Attribute, Change, Client, type Entry } from 'ldapts';
import { notFound, quote } from '../errors.js';
import { guardedSocket, type Outbound } from '../lib/guarded-connect.js';
import { providerError } from './provider-error.js';
import type { EventBody } from './aws.js';

export interface AdConfig {
  url: string;
  base_dn: string;
  domain: string;
  /** PEM of the CA that signed the directory's certificate (ldaps://) */
  tls_ca?: string;
}

export interface AdCredentials {
  bind_dn: string;
  password: string;
}

/** LDAP result codes → the status class of the refusal. */
const CONFLICT = new Set([19, 20, 68]);
const MISSING = new Set([16, 32]);

/** Runs a directory call, translating its failure into the service's error by the directory's result code. */
export async function ldap<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const e = error as { code?: unknown; name?: string; message?: string; constructor?: { name?: string } };
    if (typeof e.code === 'number') {
      const name = (e.constructor?.name ?? 'LdapError').replace(/Error$/, '');
      const status = CONFLICT.has(e.code) ? 409 : MISSING.has(e.code) ? 404 : 400;
      return Promise.reject(providerError('Active Directory', `${name} (${e.code})`, e.message ?? '', status, error));
    }
    return Promise.reject(providerError('Active Directory', typeof e.code === 'string' ? e.code : 'Unreachable', e.message ?? String(error), undefined, error));
  }
}

/** A bound client for the duration of `work`, always unbound after (a failed bind included). */
export async function withDirectory<T>(config: AdConfig, credentials: AdCredentials, outbound: Outbound, work: (client: Client) => Promise<T>): Promise<T> {
  const url = new URL(config.url);
  const client = new Client({
    url: config.url,
    timeout: 15_000,
    connectTimeout: 5_000,
    // ldapts calls these as (port, host[, tlsOptions]): the directory is reached through the address guard.
    createConnection: ((port: number, host: string) => guardedSocket(outbound.guard, port, host)) as typeof netConnect,
    createSecureConnection: ((port: number, host: string, tls?: ConnectionOptions) => guardedSocket(outbound.guard, port, host, tls ?? {})) as typeof tlsConnect,
    // TLS options with an ldap:// URL would make ldapts speak TLS on the plain port: only for ldaps://.
    ...(url.protocol === 'ldaps:' && config.tls_ca && { tlsOptions: { ca: config.tls_ca, servername: url.hostname } }),
  });
  try {
    await ldap(() => client.bind(credentials.bind_dn, credentials.password));
    return await work(client);
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

/** RFC 4515 escaping of a value placed in a search filter. */
export function filterValue(value: string): string {
  return value.replace(/[\\*()\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

const list = (v: Entry[string] | undefined): string[] => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x) => (Buffer.isBuffer(x) ? x.toString('utf8') : String(x))));
const ACCOUNT_ATTRIBUTES = ['sAMAccountName', 'objectClass', 'servicePrincipalName', 'memberOf'];

function accountBody(config: AdConfig, entry: Entry, serviceClass: string, serviceName: string): EventBody {
  return {
    domain: config.domain,
    service_class: serviceClass,
    service_name: serviceName,
    account_name: list(entry['sAMAccountName'])[0] ?? '',
    account_type: list(entry['objectClass']).map((c) => c.toLowerCase()).includes('computer') ? 'computer' : 'user',
    distinguished_name: entry.dn,
  };
}

export function createAdSpns(client: Client, config: AdConfig) {
  const one = async (filter: string, what: string): Promise<Entry> => {
    const r = await ldap(() => client.search(config.base_dn, { filter, attributes: ACCOUNT_ATTRIBUTES, sizeLimit: 2 }));
    const entry = r.searchEntries[0];
    if (!entry) throw notFound(`Active Directory: ${what}`);
    return entry;
  };
  const account = (name: string) => one(`(&(objectClass=user)(sAMAccountName=${filterValue(name)}))`, `no account ${quote(name)} under ${config.base_dn}`);
  const holder = (spn: string) => one(`(servicePrincipalName=${filterValue(spn)})`, `no account holds the SPN ${quote(spn)}`);
  const reread = (dn: string) => ldap(() => client.search(dn, { scope: 'base', attributes: ACCOUNT_ATTRIBUTES })).then((r) => r.searchEntries[0] as Entry);
  const spnChange = (operation: 'add' | 'delete', spn: string) => new Change({ operation, modification: new Attribute({ type: 'servicePrincipalName', values: [spn] }) });

  return {
    /** The directory refuses an SPN another account holds (ConstraintViolation) or this one already has (TypeOrValueExists). */
    async create(accountName: string, serviceClass: string, serviceName: string): Promise<EventBody> {
      const entry = await account(accountName);
      await ldap(() => client.modify(entry.dn, spnChange('add', `${serviceClass}/${serviceName}`)));
      return accountBody(config, await reread(entry.dn), serviceClass, serviceName);
    },

    /** The holder's groups become exactly `groups` (sAMAccountNames); its primary group is left alone. */
    async setGroups(serviceClass: string, serviceName: string, groups: readonly string[]): Promise<EventBody> {
      const entry = await holder(`${serviceClass}/${serviceName}`);
      const wanted = new Map<string, string>();
      for (const g of groups) {
        const group = await one(`(&(objectClass=group)(sAMAccountName=${filterValue(g)}))`, `no group ${quote(g)} under ${config.base_dn}`);
        wanted.set(group.dn.toLowerCase(), group.dn);
      }
      const current = new Map(list(entry['memberOf']).map((dn) => [dn.toLowerCase(), dn]));
      const member = (operation: 'add' | 'delete') => new Change({ operation, modification: new Attribute({ type: 'member', values: [entry.dn] }) });
      for (const [key, dn] of wanted) if (!current.has(key)) await ldap(() => client.modify(dn, member('add')));
      for (const [key, dn] of current) if (!wanted.has(key)) await ldap(() => client.modify(dn, member('delete')));
      return accountBody(config, await reread(entry.dn), serviceClass, serviceName);
    },

    async delete(serviceClass: string, serviceName: string): Promise<EventBody> {
      const entry = await holder(`${serviceClass}/${serviceName}`);
      await ldap(() => client.modify(entry.dn, spnChange('delete', `${serviceClass}/${serviceName}`)));
      return accountBody(config, await reread(entry.dn), serviceClass, serviceName);
    },

    /** The groups of the account holding the SPN, by sAMAccountName (for tests and answers). */
    async groupsOf(serviceClass: string, serviceName: string): Promise<string[]> {
      const entry = await holder(`${serviceClass}/${serviceName}`);
      const names: string[] = [];
      for (const dn of list(entry['memberOf'])) {
        const r = await ldap(() => client.search(dn, { scope: 'base', attributes: ['sAMAccountName'] }));
        names.push(list(r.searchEntries[0]?.['sAMAccountName'])[0] ?? dn);
      }
      return names.sort();
    },
  };
}

/** The harmless call that tests a connection: bind, and read the base entry. */
export async function testAd(config: AdConfig, credentials: AdCredentials, outbound: Outbound): Promise<void> {
  await withDirectory(config, credentials, outbound, (client) => ldap(() => client.search(config.base_dn, { scope: 'base', attributes: ['distinguishedName'] })));
}

/**
 * User identities: user accounts that are neither computers nor SPN holders; non-human identities: computer
 * accounts and accounts holding SPNs (the domain's own krbtgt and DC accounts among them); credentials: none.
 */
export async function inventoryAd(config: AdConfig, credentials: AdCredentials, outbound: Outbound): Promise<{ user_identities: number; non_human_identities: number; credentials: number }> {
  return withDirectory(config, credentials, outbound, async (client) => {
    const r = await ldap(() => client.search(config.base_dn, { filter: '(objectClass=user)', attributes: ['objectClass', 'servicePrincipalName'], paged: { pageSize: 500 } }));
    const users = new Set<string>();
    const nonHuman = new Set<string>();
    for (const e of r.searchEntries) {
      const computer = list(e['objectClass']).map((c) => c.toLowerCase()).includes('computer');
      (computer || list(e['servicePrincipalName']).length > 0 ? nonHuman : users).add(e.dn.toLowerCase());
    }
    return { user_identities: users.size, non_human_identities: nonHuman.size, credentials: 0 };
  });
}
