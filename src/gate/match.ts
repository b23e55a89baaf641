// URL patterns: `host/path` with `*` wildcards, matched in the order listed; query strings are ignored.
import type { GateConfig, PluginConfig } from './config.js';

export interface Route<P> {
  /** the upstream base, e.g. http://127.0.0.1:9000 */
  target: string | undefined;
  /** the plugins that run for this route, in execution order, built with their per-URL parameters */
  plugins: P[];
  /** index into gate.urls, or -1 for the default */
  urlIndex: number;
}

export type Matcher<P> = (host: string, path: string) => Route<P>;

/**
 * A `*` glob as literal pieces: the first must start the text, the last end it, and each one between is
 * found leftmost after the one before, which is exact for `*` alone. It takes time linear in the text for
 * a given pattern, where a regular expression of several `.*` backtracks polynomially on a request path.
 */
export function compileGlob(pattern: string, ignoreCase: boolean): (text: string) => boolean {
  const pieces = (ignoreCase ? pattern.toLowerCase() : pattern).split('*');
  const first = pieces[0] as string;
  if (pieces.length === 1) return (text) => (ignoreCase ? text.toLowerCase() : text) === first;
  const last = pieces[pieces.length - 1] as string;
  const middle = pieces.slice(1, -1).filter((p) => p !== '');
  return (raw) => {
    const text = ignoreCase ? raw.toLowerCase() : raw;
    if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
    let at = first.length;
    const end = text.length - last.length;
    for (const piece of middle) {
      const found = text.indexOf(piece, at);
      if (found < 0 || found + piece.length > end) return false;
      at = found + piece.length;
    }
    return true;
  };
}

/**
 * A pattern's host part (before the first `/`) matches the Host header: `*` there stays inside the host, and
 * a host written without a port matches any port. Its path part matches the path: `*` there spans segments.
 * A pattern that starts with `/` matches any host.
 */
export function compilePattern(pattern: string): (host: string, path: string) => boolean {
  const slash = pattern.indexOf('/');
  const hostPart = slash < 0 ? pattern : pattern.slice(0, slash);
  const pathPart = slash < 0 ? '/*' : pattern.slice(slash);
  const hostGlob = compileGlob(hostPart, true);
  const pathGlob = compileGlob(pathPart, false);
  const anyHost = hostPart === '' || hostPart === '*';
  const withPort = hostPart.includes(':');
  return (host, path) => {
    if (!anyHost) {
      const h = withPort ? host : host.replace(/:\d+$/, '');
      // A host's `*` never spans a `/`, and the pattern's host part holds none.
      if (h.includes('/') || !hostGlob(h)) return false;
    }
    return pathGlob(path);
  };
}

/**
 * Routes of the configuration, each URL with its own plugin list (enabled switches and parameters per URL).
 * A plugin without per-URL parameters is built once and shared, so that its caches and limits are global;
 * per-URL parameters make an instance of its own. build throws at start for bad parameters.
 */
export function createMatcher<P>(config: GateConfig, build: (plugin: PluginConfig) => P): Matcher<P> {
  const shared = new Map<string, P>();
  const instance = (p: PluginConfig, params: Record<string, unknown> | undefined): P => {
    if (params !== undefined && Object.keys(params).length > 0) return build({ ...p, parameters: { ...p.parameters, ...params } });
    let built = shared.get(p.id);
    if (built === undefined) shared.set(p.id, (built = build(p)));
    return built;
  };
  const plugins = (overrides: GateConfig['urls'][number]['plugins']): P[] =>
    config.plugins.filter((p) => overrides[p.id.toLowerCase()]?.enabled ?? p.enabled).map((p) => instance(p, overrides[p.id.toLowerCase()]?.parameters));
  const routes = config.urls.map((u, urlIndex) => ({ test: compilePattern(u.pattern), route: { target: u.target ?? config.defaultTarget, plugins: plugins(u.plugins), urlIndex } }));
  const fallback: Route<P> = { target: config.defaultTarget, plugins: plugins({}), urlIndex: -1 };
  return (host, path) => {
    for (const r of routes) if (r.test(host, path)) return r.route;
    return fallback;
  };
}
