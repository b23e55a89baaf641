// Which browser origins may call the browser-facing routes: SERVICE_CORS_ORIGINS for every organization, and
// a hook for origins an organization lists itself. The front (src/http/server.ts) writes the headers.

/** Request headers a browser page may send: the body type, a person's bearer token and the Service-* headers. */
export const CORS_ALLOW_HEADERS = [
  'Content-Type',
  'Authorization',
  'Service-OrgID',
  'Service-SdkVersion',
  'Service-Analytics-Correlation-ID',
  'Service-Required-Consistency',
  'Service-Required-Consistency-Timeout',
  'Service-Consistency-Token',
  // RFC 9449: a browser client's proof at the token endpoint and userinfo
  'DPoP',
].join(', ');

/** Response headers a page may read besides the safelisted ones. */
export const CORS_EXPOSE_HEADERS = 'Service-Consistency-Token, Retry-After, DPoP-Nonce, WWW-Authenticate';

/** How long a browser may cache a preflight answer, seconds. */
export const CORS_MAX_AGE = '600';

export interface CorsOptions {
  /** exact origins (scheme://host[:port]) allowed for every organization */
  origins: readonly string[];
  /**
   * Origin patterns an organization allows for itself (its allowed domains: host or `*` patterns); none by
   * default. Set together with `hostAllows`, which decides whether a host matches a pattern, and
   * `anyOrgAllows`, whether some organization's patterns admit a host.
   */
  orgOrigins?: (orgId: string) => readonly string[];
  hostAllows?: (patterns: readonly string[], host: string) => boolean;
  anyOrgAllows?: (host: string) => boolean;
}

export interface CorsPolicy {
  /**
   * A preflight names no organization (browsers send no custom header values with it): it is answered for
   * the listed origins, and for an origin some organization admits, since the answer to the request itself
   * is then decided with the organization known.
   */
  preflight(origin: string): boolean;
  /** Whether the answer to a request of `orgId` (undefined: none known) from `origin` carries CORS headers. */
  allows(origin: string, orgId: string | undefined): boolean;
  /**
   * Whether a request from `origin` to an organization's route must be refused before it changes anything:
   * an origin that passed a preflight because another organization admits it, but this one does not.
   */
  refuses(origin: string, orgId: string): boolean;
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).hostname;
  } catch {
    return undefined;
  }
}

export function createCorsPolicy(options: CorsOptions): CorsPolicy {
  const listed = new Set(options.origins);
  const { orgOrigins, hostAllows, anyOrgAllows } = options;
  const orgAllows = (origin: string, orgId: string): boolean => {
    if (orgOrigins === undefined || hostAllows === undefined) return false;
    const patterns = orgOrigins(orgId);
    if (patterns.length === 0) return false;
    const host = hostOf(origin);
    return host !== undefined && hostAllows(patterns, host);
  };
  const someOrgAllows = (origin: string): boolean => {
    if (anyOrgAllows === undefined) return false;
    const host = hostOf(origin);
    return host !== undefined && anyOrgAllows(host);
  };
  return {
    preflight: (origin) => origin !== '' && (listed.has(origin) || someOrgAllows(origin)),
    allows: (origin, orgId) => origin !== '' && (listed.has(origin) || (orgId !== undefined && orgAllows(origin, orgId))),
    refuses: (origin, orgId) => origin !== '' && !listed.has(origin) && !orgAllows(origin, orgId) && someOrgAllows(origin),
  };
}
