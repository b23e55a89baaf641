// What a plugin sees of a request and what it decides: continue (perhaps with rewritten headers) or answer.
import type { IncomingHttpHeaders } from 'node:http';
import type { PluginConfig } from '../config.js';
import type { HttpCaller } from '../round-trip.js';

export interface GateRequest {
  method: string;
  /** the URL as received: scheme, host, path and query */
  url: URL;
  /** the headers forwarded upstream; plugins may rewrite them */
  headers: IncomingHttpHeaders;
  /** the client's address (X-Forwarded-For's first hop when gate.trust_proxy is set) */
  ip: string;
  /** claims of a token a validate-jwt plugin accepted, for the plugins after it */
  claims?: Record<string, unknown>;
}

export type PluginMetadata = Record<string, unknown>;

export type Decision =
  | { action: 'continue'; metadata: PluginMetadata }
  | { action: 'answer'; status: number; headers?: Record<string, string>; body?: string; metadata: PluginMetadata };

export interface Plugin {
  readonly config: PluginConfig;
  /**
   * runs the plugin; every outbound HTTP call goes through `http`, so that it is recorded as a round trip. A
   * decision known at once (a cache hit) is returned as is: the chain then goes on without a promise.
   */
  handle(req: GateRequest, http: HttpCaller): Decision | Promise<Decision>;
}

/** Parameters a plugin declares; any other name is a start-up error naming it. */
export function checkParameters(config: PluginConfig, known: readonly string[]): void {
  for (const name of Object.keys(config.parameters)) {
    if (!known.includes(name)) throw new Error(`gate.plugins.${config.index}.parameters.${name}: unknown parameter of ${config.type} (known: ${known.join(', ')})`);
  }
}

export function param<T>(config: PluginConfig, name: string, kind: 'string' | 'number' | 'boolean' | 'strings' | 'object' | 'list'): T | undefined {
  const v = config.parameters[name];
  if (v === undefined || v === null) return undefined;
  const ok =
    kind === 'strings'
      ? Array.isArray(v) && v.every((s) => typeof s === 'string')
      : kind === 'list'
        ? Array.isArray(v)
        : kind === 'object'
          ? typeof v === 'object' && !Array.isArray(v)
          : typeof v === kind;
  if (!ok) throw new Error(`gate.plugins.${config.index}.parameters.${name}: must be ${kind === 'strings' ? 'a list of strings' : kind === 'list' ? 'a list' : kind === 'object' ? 'a mapping' : `a ${kind}`}`);
  return v as T;
}

/** The token of a request: `header_with_token` (a bare value), `cookie_with_token`, or a bearer in Authorization. */
export function tokenOf(req: GateRequest, header: string | undefined, cookie: string | undefined): string | undefined {
  if (cookie !== undefined) {
    const raw = req.headers.cookie ?? '';
    for (const part of raw.split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0 && part.slice(0, eq).trim() === cookie) return decodeURIComponent(part.slice(eq + 1).trim()) || undefined;
    }
    return undefined;
  }
  const value = req.headers[(header ?? 'authorization').toLowerCase()];
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text === '') return undefined;
  if (header !== undefined && header.toLowerCase() !== 'authorization') return text.replace(/^Bearer\s+/i, '');
  const m = /^Bearer\s+(\S+)$/i.exec(text);
  return m ? m[1] : undefined;
}
