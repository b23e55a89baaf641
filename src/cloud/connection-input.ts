// What a connection's config and credentials must hold, per provider type, checked before the provider is
// called: the config's fields and endpoint, and credentials of the right shape.
import { badRequest, quote } from '../errors.js';
import type { CloudType } from '../domain/cloud.js';

export interface ConnectionRules {
  /** SERVICE_WEBHOOK_ALLOW_INSECURE: also allows http and loopback endpoints (tests, local stand-ins) */
  allowInsecure: boolean;
  regions: readonly string[];
}

/** The types whose provider is built; the others are refused with a 400 that says so. */
export const BUILT_TYPES: readonly CloudType[] = ['aws', 'gcp', 'active_directory'];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function strings(value: unknown, field: string, required: readonly string[], optional: readonly string[]): Record<string, string> {
  if (!isRecord(value)) throw badRequest(`${field}: an object`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (!required.includes(k) && !optional.includes(k)) throw badRequest(`${field}.${k}: not a field of this connection type`);
    if (typeof v !== 'string' || v.length === 0 || v.length > 4096) throw badRequest(`${field}.${k}: a non-empty string of at most 4096 characters`);
    out[k] = v;
  }
  for (const k of required) if (out[k] === undefined) throw badRequest(`${field}.${k} is required`);
  return out;
}

function checkEndpoint(url: string, field: string, rules: ConnectionRules): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw badRequest(`${field}: ${quote(url)} is not a URL`);
  }
  // Which addresses may be reached is the address guard's, at each connection (src/lib/address-guard.ts).
  if (u.protocol !== 'https:' && !(rules.allowInsecure && u.protocol === 'http:')) throw badRequest(`${field}: https only`);
  if (u.search || u.hash || u.username) throw badRequest(`${field}: no query, fragment or credentials in the URL`);
}

export function checkRegion(region: string, rules: ConnectionRules): void {
  if (!rules.regions.includes(region)) throw badRequest(`region: ${quote(region)} is not one of this deployment's regions (${rules.regions.join(', ')})`);
}

export function checkConfig(type: CloudType, value: unknown, rules: ConnectionRules): Record<string, string> {
  if (!BUILT_TYPES.includes(type)) throw badRequest(`type: connections of type ${type} are not built yet in this version (aws, gcp and active_directory are)`);
  if (type === 'active_directory') return checkAdConfig(value, rules);
  if (type === 'gcp') {
    const c = strings(value, 'config', ['project_id'], ['endpoint']);
    if (!/^[a-z][-a-z0-9]{4,28}[a-z0-9]$/.test(c['project_id'] as string)) throw badRequest('config.project_id: 6 to 30 lower-case letters, digits and hyphens');
    if (c['endpoint'] !== undefined) checkEndpoint(c['endpoint'], 'config.endpoint', rules);
    return c;
  }
  const config = strings(value, 'config', ['account_id'], ['endpoint', 'aws_region']);
  if (!/^\d{12}$/.test(config['account_id'] as string)) throw badRequest('config.account_id: twelve digits');
  if (config['aws_region'] !== undefined && !/^[a-z]{2}(-[a-z]+)+-\d+$/.test(config['aws_region'])) throw badRequest(`config.aws_region: ${quote(config['aws_region'])} is not an AWS region name`);
  if (config['endpoint'] !== undefined) checkEndpoint(config['endpoint'], 'config.endpoint', rules);
  return config;
}

export function checkCredentials(type: CloudType, value: unknown): Record<string, string> {
  if (!BUILT_TYPES.includes(type)) throw badRequest(`type: connections of type ${type} are not built yet in this version (aws, gcp and active_directory are)`);
  if (type === 'active_directory') return strings(value, 'credentials', ['bind_dn', 'password'], []);
  if (type === 'gcp') {
    if (typeof value !== 'object' || value === null) throw badRequest('credentials: an object');
    const key = (value as Record<string, unknown>)['service_account_key'];
    if (typeof key !== 'object' || key === null || Array.isArray(key)) throw badRequest("credentials.service_account_key: the key file's JSON object");
    const k = key as Record<string, unknown>;
    for (const f of ['client_email', 'private_key']) if (typeof k[f] !== 'string' || (k[f] as string).length === 0) throw badRequest(`credentials.service_account_key.${f} is required`);
    if (!(k['private_key'] as string).includes('PRIVATE KEY-----')) throw badRequest('credentials.service_account_key.private_key: a PEM private key');
    const out: Record<string, string> = { client_email: k['client_email'] as string, private_key: k['private_key'] as string };
    if (typeof k['private_key_id'] === 'string') out['private_key_id'] = k['private_key_id'];
    return out;
  }
  const c = strings(value, 'credentials', ['access_key_id', 'secret_access_key'], []);
  if (!/^[A-Z0-9]{16,128}$/.test(c['access_key_id'] as string)) throw badRequest('credentials.access_key_id: 16 to 128 upper-case letters and digits');
  return c;
}

/** ldaps:// only; plain ldap:// (a password sent in the clear) with SERVICE_WEBHOOK_ALLOW_INSECURE=1. The address guard decides which hosts. */
function checkAdConfig(value: unknown, rules: ConnectionRules): Record<string, string> {
  const config = strings(value, 'config', ['url', 'base_dn', 'domain'], ['tls_ca']);
  let u: URL;
  try {
    u = new URL(config['url'] as string);
  } catch {
    throw badRequest(`config.url: ${quote(config['url'] as string)} is not a URL`);
  }
  if (u.protocol !== 'ldaps:' && !(rules.allowInsecure && u.protocol === 'ldap:')) throw badRequest('config.url: ldaps:// only (ldap:// with SERVICE_WEBHOOK_ALLOW_INSECURE=1)');
  if (u.pathname.length > 1 || u.search || u.username) throw badRequest('config.url: scheme, host and port only');
  if (!/^(?:[A-Za-z]+=[^,]+)(?:,[A-Za-z]+=[^,]+)*$/.test(config['base_dn'] as string)) throw badRequest('config.base_dn: a distinguished name such as DC=example,DC=com');
  if (!/^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$/.test(config['domain'] as string)) throw badRequest('config.domain: a DNS domain name such as example.com');
  if (config['tls_ca'] !== undefined && !config['tls_ca'].includes('-----BEGIN CERTIFICATE-----')) throw badRequest('config.tls_ca: a PEM certificate');
  return config;
}
