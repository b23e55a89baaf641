// The one import of uWebSockets.js, and the check that the native build, not the slow fallback, loaded.
import uws from 'uWebSockets.js';

export { uws };

/** The fallback implementation lacks the native-only exports (SSLApp, getParts). */
export function isNativeUws(): boolean {
  const mod = uws as unknown as Record<string, unknown>;
  return typeof mod['getParts'] === 'function' && typeof mod['SSLApp'] === 'function';
}

const native = isNativeUws();

/**
 * The request's query string, without the '?'. The native build splits path and query; the fallback's
 * getQuery() throws on the relative URLs it is given, and its getUrl() keeps the query.
 */
export function queryOf(req: uws.HttpRequest): string {
  if (native) return req.getQuery() ?? '';
  const url = req.getUrl();
  const q = url.indexOf('?');
  return q < 0 ? '' : url.slice(q + 1);
}

/** The request's path, without the query. */
export function pathOf(req: uws.HttpRequest): string {
  const url = req.getUrl();
  if (native) return url;
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/**
 * Calls `cb` with every header field in order, repeats included, names in lower case. The fallback's
 * forEach throws "Not implemented"; its request wraps node's IncomingMessage, whose rawHeaders has them.
 */
export function eachField(req: uws.HttpRequest, cb: (key: string, value: string) => void): void {
  if (native) return req.forEach(cb);
  const raw = (req as unknown as { request?: { rawHeaders?: string[] } }).request?.rawHeaders ?? [];
  for (let i = 0; i + 1 < raw.length; i += 2) cb((raw[i] as string).toLowerCase(), raw[i + 1] as string);
}
