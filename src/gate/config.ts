// Gate's configuration: YAML/JSON files and GATE_… environment variables, merged in order, checked against
// the known keys at start (an unknown key is an error naming it), with the original's key names.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { parseDuration } from '../domain/webhook-rules.js';

export interface PluginConfig {
  /** configured id, or `<type>-<index>` */
  id: string;
  type: string;
  enabled: boolean;
  parameters: Record<string, unknown>;
  /** 0-based position in gate.plugins */
  index: number;
}

export interface UrlConfig {
  pattern: string;
  target?: string;
  /** per-URL switches by plugin id (lower case) */
  plugins: Record<string, { enabled?: boolean; parameters?: Record<string, unknown> }>;
}

export interface GateConfig {
  mode: 'proxy';
  port: number;
  host: string;
  defaultTarget?: string;
  urls: UrlConfig[];
  plugins: PluginConfig[];
  log: { format: 'text' | 'json'; level: string };
  upstreamTimeoutMs: number;
  trustProxy: boolean;
  service?: { baseUrl: string; orgId: string; apiKey: string };
  events: {
    enabled: boolean;
    requestHandled: boolean;
    serverStartedRenewalMs: number;
    heartbeat: { enabled: boolean; intervalMs: number };
    batch: { maxEvents: number; maxDelayMs: number };
    bufferLimit: number;
    redactQuery: string[];
  };
}

export class GateConfigError extends Error {}

type Spec =
  | 'string'
  | 'number'
  | 'boolean'
  | 'duration'
  | 'strings'
  | 'any'
  | { obj: Record<string, Spec> }
  | { list: Spec }
  | { map: Spec };

const PLUGIN_SWITCH: Spec = { obj: { enabled: 'boolean', parameters: { map: 'any' } } };

/** Every key Gate knows, under `gate`. */
const SPEC: Spec = {
  obj: {
    gate: {
      obj: {
        mode: 'string',
        port: 'number',
        host: 'string',
        default: { obj: { target: 'string' } },
        urls: { list: { obj: { pattern: 'string', target: 'string', plugins: { map: PLUGIN_SWITCH } } } },
        plugins: { list: { obj: { id: 'string', type: 'string', enabled: 'boolean', intercept: 'string', parameters: { map: 'any' } } } },
        log: { obj: { format: 'string', level: 'string' } },
        upstream_timeout: 'duration',
        trust_proxy: 'boolean',
        service: { obj: { base_url: 'string', org_id: 'string', api_key: 'string' } },
        events: {
          obj: {
            enabled: 'boolean',
            request_handled: 'boolean',
            server_started_renewal: 'duration',
            heartbeat: { obj: { enabled: 'boolean', interval: 'duration' } },
            batch: { obj: { max_events: 'number', max_delay: 'duration' } },
            buffer_limit: 'number',
            redact_query: 'strings',
          },
        },
      },
    },
  },
};

type Doc = Record<string, unknown>;
const isObj = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses one file by its extension: .yaml/.yml or .json. */
export function readConfigFile(path: string): Doc {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new GateConfigError(`config ${path}: cannot read (${(error as Error).message})`);
  }
  try {
    const doc: unknown = /\.json$/i.test(path) ? JSON.parse(text) : parseYaml(text);
    if (doc == null) return {};
    if (!isObj(doc)) throw new Error('the top level is not a mapping');
    return doc;
  } catch (error) {
    throw new GateConfigError(`config ${path}: ${(error as Error).message}`);
  }
}

/** Set by a build, read by GateServerStarted's version; not configuration. */
export const BUILD_STAMPS: readonly string[] = ['GATE_BUILD_COMMIT', 'GATE_BUILD_DATE', 'GATE_BUILT_BY'];

/**
 * GATE_… variables as a document. The name after the prefix is split at underscores and matched against the
 * known keys (longest first), list items by index (GATE_URLS_0_PATTERN, GATE_PLUGINS_1_PARAMETERS_REQUIRED_GROUPS);
 * under `parameters` the rest of the name, lower-cased, is the parameter's name.
 */
export function envDocument(env: Record<string, string | undefined>): Doc {
  const doc: Doc = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('GATE_') || value === undefined || BUILD_STAMPS.includes(name)) continue;
    const words = name.slice(5).toLowerCase().split('_');
    const path: (string | number)[] = ['gate'];
    let spec: Spec = (SPEC as { obj: Record<string, Spec> }).obj['gate'] as Spec;
    let i = 0;
    while (i < words.length) {
      if (typeof spec === 'object' && 'obj' in spec) {
        let found = false;
        for (let j = words.length; j > i; j--) {
          const key = words.slice(i, j).join('_');
          const next: Spec | undefined = spec.obj[key];
          if (next !== undefined) {
            path.push(key);
            spec = next;
            i = j;
            found = true;
            break;
          }
        }
        if (!found) throw new GateConfigError(`${name}: unknown key "${words.slice(i).join('_')}" under ${path.join('.')}`);
      } else if (typeof spec === 'object' && 'list' in spec) {
        const index = Number(words[i]);
        if (!Number.isInteger(index) || index < 0) throw new GateConfigError(`${name}: "${words[i]}" is not a list index of ${path.join('.')}`);
        path.push(index);
        spec = spec.list;
        i++;
      } else if (typeof spec === 'object' && 'map' in spec) {
        // A map's key is one word, unless the map is the last level (parameters), which takes the rest.
        const last = typeof spec.map === 'string';
        const key = last ? words.slice(i).join('_') : (words[i] as string);
        path.push(key);
        spec = spec.map;
        i = last ? words.length : i + 1;
      } else {
        throw new GateConfigError(`${name}: ${path.join('.')} has no key "${words.slice(i).join('_')}"`);
      }
    }
    setPath(doc, path, envValue(value, spec));
  }
  return doc;
}

function envValue(raw: string, spec: Spec): unknown {
  if (spec === 'number') return Number(raw);
  if (spec === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  if (spec === 'strings') return raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (spec === 'any') {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  return raw;
}

function setPath(doc: Doc, path: (string | number)[], value: unknown): void {
  let cur: any = doc;
  for (let k = 0; k < path.length - 1; k++) {
    const key = path[k] as string | number;
    if (cur[key] === undefined) cur[key] = typeof path[k + 1] === 'number' ? [] : {};
    cur = cur[key];
  }
  cur[path[path.length - 1] as string | number] = value;
}

/**
 * Later sources win for scalars and merge into mappings; URL lists are appended; a plugin with the id of an
 * earlier one merges into it, others are appended. Environment documents are merged by list index instead
 * (their lists are sparse, indexed by position).
 */
export function mergeDocs(base: Doc, next: Doc, byIndex = false, path = ''): Doc {
  const out: Doc = { ...base };
  for (const [key, value] of Object.entries(next)) {
    const here = path ? `${path}.${key}` : key;
    const prev = out[key];
    if (Array.isArray(value) && Array.isArray(prev)) {
      if (byIndex) {
        const merged = [...prev];
        value.forEach((v, i) => {
          if (v === undefined) return;
          merged[i] = isObj(v) && isObj(merged[i]) ? mergeDocs(merged[i] as Doc, v, true, `${here}.${i}`) : v;
        });
        out[key] = merged;
      } else if (here === 'gate.plugins') {
        const merged = [...prev];
        for (const v of value) {
          const id = isObj(v) && typeof v['id'] === 'string' ? v['id'].toLowerCase() : undefined;
          const at = id === undefined ? -1 : merged.findIndex((p) => isObj(p) && typeof p['id'] === 'string' && p['id'].toLowerCase() === id);
          if (at >= 0) merged[at] = mergeDocs(merged[at] as Doc, v as Doc, false, `${here}.${at}`);
          else merged.push(v);
        }
        out[key] = merged;
      } else {
        out[key] = [...prev, ...value];
      }
    } else if (isObj(value) && isObj(prev)) {
      out[key] = mergeDocs(prev, value, byIndex, here);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** Throws naming the first key Gate does not know, or a value of the wrong kind. */
export function checkKeys(value: unknown, spec: Spec = SPEC, path = ''): void {
  const where = path || '(top level)';
  if (typeof spec === 'object' && 'obj' in spec) {
    if (!isObj(value)) throw new GateConfigError(`${where}: must be a mapping`);
    for (const [key, v] of Object.entries(value)) {
      const sub = spec.obj[key];
      const here = path ? `${path}.${key}` : key;
      if (sub === undefined) throw new GateConfigError(`${here}: unknown key`);
      if (v !== undefined && v !== null) checkKeys(v, sub, here);
    }
  } else if (typeof spec === 'object' && 'list' in spec) {
    if (!Array.isArray(value)) throw new GateConfigError(`${where}: must be a list`);
    value.forEach((v, i) => {
      if (v === undefined || v === null) throw new GateConfigError(`${path}.${i}: missing (list indexes must be contiguous)`);
      checkKeys(v, spec.list, `${path}.${i}`);
    });
  } else if (typeof spec === 'object' && 'map' in spec) {
    if (!isObj(value)) throw new GateConfigError(`${where}: must be a mapping`);
    for (const [key, v] of Object.entries(value)) if (v !== undefined && v !== null) checkKeys(v, spec.map, `${path}.${key}`);
  } else if (spec === 'string' || spec === 'duration') {
    if (typeof value !== 'string' && !(spec === 'string' && typeof value === 'number')) throw new GateConfigError(`${where}: must be a string`);
    if (spec === 'duration') {
      try {
        parseDuration(value as string, where);
      } catch (error) {
        throw new GateConfigError((error as Error).message);
      }
    }
  } else if (spec === 'number') {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new GateConfigError(`${where}: must be a number`);
  } else if (spec === 'boolean') {
    if (typeof value !== 'boolean') throw new GateConfigError(`${where}: must be true or false`);
  } else if (spec === 'strings') {
    if (!Array.isArray(value) || !value.every((s) => typeof s === 'string')) throw new GateConfigError(`${where}: must be a list of strings`);
  }
}

const ms = (v: unknown, fallback: number): number => (typeof v === 'string' ? parseDuration(v) : fallback);

/** The checked configuration of the merged document. */
export function buildConfig(doc: Doc): GateConfig {
  checkKeys(doc);
  const g = (doc['gate'] ?? {}) as Doc;
  const mode = g['mode'] ?? 'proxy';
  if (mode !== 'proxy') throw new GateConfigError(`gate.mode: "${String(mode)}" is not supported; only "proxy" is (ext_auth and aws_lambda_auth are not built)`);
  const port = (g['port'] as number | undefined) ?? 8080;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new GateConfigError(`gate.port: ${port} is not a port number`);

  const rawPlugins = (g['plugins'] ?? []) as Doc[];
  const ids = new Set<string>();
  const plugins: PluginConfig[] = rawPlugins.map((p, index) => {
    const type = p['type'];
    if (typeof type !== 'string' || type === '') throw new GateConfigError(`gate.plugins.${index}.type: missing`);
    const id = typeof p['id'] === 'string' && p['id'] !== '' ? p['id'] : `${type}-${index}`;
    if (ids.has(id.toLowerCase())) throw new GateConfigError(`gate.plugins.${index}.id: "${id}" is used twice (ids are case-insensitive)`);
    ids.add(id.toLowerCase());
    const intercept = p['intercept'] ?? 'request';
    if (intercept !== 'request') throw new GateConfigError(`gate.plugins.${index}.intercept: only "request" is supported`);
    return { id, type, enabled: p['enabled'] !== false, parameters: (p['parameters'] ?? {}) as Record<string, unknown>, index };
  });

  const urls: UrlConfig[] = ((g['urls'] ?? []) as Doc[]).map((u, i) => {
    if (typeof u['pattern'] !== 'string' || u['pattern'] === '') throw new GateConfigError(`gate.urls.${i}.pattern: missing`);
    const switches: UrlConfig['plugins'] = {};
    for (const [id, s] of Object.entries((u['plugins'] ?? {}) as Record<string, Doc>)) {
      if (!ids.has(id.toLowerCase())) throw new GateConfigError(`gate.urls.${i}.plugins.${id}: no plugin has this id`);
      switches[id.toLowerCase()] = s as UrlConfig['plugins'][string];
    }
    const target = u['target'] as string | undefined;
    if (target !== undefined) checkTarget(target, `gate.urls.${i}.target`);
    return { pattern: u['pattern'], ...(target !== undefined ? { target } : {}), plugins: switches };
  });
  const defaultTarget = (g['default'] as Doc | undefined)?.['target'] as string | undefined;
  if (defaultTarget !== undefined) checkTarget(defaultTarget, 'gate.default.target');

  const s = g['service'] as Doc | undefined;
  let service: GateConfig['service'];
  if (s !== undefined) {
    for (const k of ['base_url', 'org_id', 'api_key']) if (typeof s[k] !== 'string' || s[k] === '') throw new GateConfigError(`gate.service.${k}: missing`);
    service = { baseUrl: (s['base_url'] as string).replace(/\/$/, ''), orgId: s['org_id'] as string, apiKey: s['api_key'] as string };
  }
  const e = (g['events'] ?? {}) as Doc;
  const hb = (e['heartbeat'] ?? {}) as Doc;
  const batch = (e['batch'] ?? {}) as Doc;
  const enabled = (e['enabled'] as boolean | undefined) ?? service !== undefined;
  if (enabled && service === undefined) throw new GateConfigError('gate.events.enabled: events need gate.service (base_url, org_id, api_key)');
  const log = (g['log'] ?? {}) as Doc;
  const format = log['format'] ?? 'text';
  if (format !== 'text' && format !== 'json') throw new GateConfigError(`gate.log.format: "${String(format)}" is not text or json`);
  return {
    mode: 'proxy',
    port,
    host: (g['host'] as string | undefined) ?? '0.0.0.0',
    ...(defaultTarget !== undefined ? { defaultTarget } : {}),
    urls,
    plugins,
    log: { format, level: (log['level'] as string | undefined) ?? 'info' },
    upstreamTimeoutMs: ms(g['upstream_timeout'], 30_000),
    trustProxy: g['trust_proxy'] === true,
    ...(service ? { service } : {}),
    events: {
      enabled,
      requestHandled: e['request_handled'] !== false,
      serverStartedRenewalMs: ms(e['server_started_renewal'], 3_600_000),
      heartbeat: { enabled: hb['enabled'] === true, intervalMs: ms(hb['interval'], 60_000) },
      batch: { maxEvents: (batch['max_events'] as number | undefined) ?? 200, maxDelayMs: ms(batch['max_delay'], 200) },
      bufferLimit: (e['buffer_limit'] as number | undefined) ?? 10_000,
      redactQuery: (e['redact_query'] as string[] | undefined) ?? [],
    },
  };
}

function checkTarget(target: string, where: string): void {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new GateConfigError(`${where}: "${target}" is not a URL`);
  }
  if (url.protocol !== 'http:') throw new GateConfigError(`${where}: only http:// targets are supported (no TLS to the upstream)`);
}

/** Files in the order given, then the environment: the configuration Gate runs with. */
export function loadGateConfig(files: readonly string[], env: Record<string, string | undefined>): GateConfig {
  let doc: Doc = {};
  for (const f of files) {
    const d = readConfigFile(f);
    checkKeys(d, SPEC);
    doc = mergeDocs(doc, d);
  }
  doc = mergeDocs(doc, envDocument(env), true);
  return buildConfig(doc);
}
