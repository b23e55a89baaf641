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
export const BUILT_TYPES: readonly CloudType[] = ['aws'];

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
  const loopback = u.hostname === 'localhost' || /^127\./.test(u.hostname) || u.hostname === '[::1]';
  if (u.protocol !== 'https:' && !(rules.allowInsecure && u.protocol === 'http:')) throw badRequest(`${field}: https only`);
  if (loopback && !rules.allowInsecure) throw badRequest(`${field}: a loopback endpoint is allowed only with SERVICE_WEBHOOK_ALLOW_INSECURE=1`);
  if (u.search || u.hash || u.username) throw badRequest(`${field}: no query, fragment or credentials in the URL`);
}

export function checkRegion(region: string, rules: ConnectionRules): void {
  if (!rules.regions.includes(region)) throw badRequest(`region: ${quote(region)} is not one of this deployment's regions (${rules.regions.join(', ')})`);
}

export function checkConfig(type: CloudType, value: unknown, rules: ConnectionRules): Record<string, string> {
  if (!BUILT_TYPES.includes(type)) throw badRequest(`type: connections of type ${type} are not built yet in this version (aws is)`);
  const config = strings(value, 'config', ['account_id'], ['endpoint', 'aws_region']);
  if (!/^\d{12}$/.test(config['account_id'] as string)) throw badRequest('config.account_id: twelve digits');
  if (config['aws_region'] !== undefined && !/^[a-z]{2}(-[a-z]+)+-\d+$/.test(config['aws_region'])) throw badRequest(`config.aws_region: ${quote(config['aws_region'])} is not an AWS region name`);
  if (config['endpoint'] !== undefined) checkEndpoint(config['endpoint'], 'config.endpoint', rules);
  return config;
}

export function checkCredentials(type: CloudType, value: unknown): Record<string, string> {
  if (!BUILT_TYPES.includes(type)) throw badRequest(`type: connections of type ${type} are not built yet in this version (aws is)`);
  const c = strings(value, 'credentials', ['access_key_id', 'secret_access_key'], []);
  if (!/^[A-Z0-9]{16,128}$/.test(c['access_key_id'] as string)) throw badRequest('credentials.access_key_id: 16 to 128 upper-case letters and digits');
  return c;
}
