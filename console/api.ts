// Every call the console makes: the public API with the administrator's access token, and the sign-in that
// gets that token (authorization code with PKCE on the service's hosted page).

export interface Session {
  org: string;
  token: string;
  /** the console client the token was issued to: revoking the token names it */
  client_id?: string;
}

export interface Answer<T> {
  result: T;
  meta?: { cursor_pagination?: { next_cursor?: string; prev_cursor?: string } };
}

const SESSION = 'console.session';
const PENDING = 'console.pending';
/** The organization last signed in to, offered again on the sign-in form. */
export const LAST_ORG = 'console.org';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function session(): Session | undefined {
  const raw = sessionStorage.getItem(SESSION);
  return raw === null ? undefined : (JSON.parse(raw) as Session);
}

/** Ends the console's session: its access token is revoked (RFC 7009), then forgotten. */
export async function signOut(): Promise<void> {
  const s = session();
  sessionStorage.removeItem(SESSION);
  if (s?.client_id) {
    await fetch('/oauth2/tokens/revoke', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: s.token, client_id: s.client_id }) }).catch(() => undefined);
  }
  location.assign('/console');
}

async function read<T>(res: Response): Promise<Answer<T>> {
  const text = await res.text();
  const body = text === '' ? {} : JSON.parse(text);
  if (!res.ok) throw new ApiError(res.status, body.errors?.[0]?.message ?? body.error_description ?? `${res.status} ${res.statusText}`);
  return body as Answer<T>;
}

/** A call of the public API as the signed-in administrator. */
export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
  const s = session();
  if (!s) throw new ApiError(401, 'not signed in');
  const headers: Record<string, string> = { 'Service-OrgID': s.org, Authorization: `Bearer ${s.token}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
  // An expired or revoked token: back to the sign-in, which takes a moment with a live session on the hosted page.
  if (res.status === 401) void signOut();
  return read<T>(res);
}

/** Calls without credentials: the console's own settings and the first-administrator link. */
export async function anonymous<T = unknown>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
  const res = await fetch(path, { method, ...(body !== undefined && { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }) });
  return read<T>(res);
}

const base64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));
const redirectUri = () => `${location.origin}/console`;

/** Sends the browser to the hosted sign-in page of the organization's console client. */
export async function startSignIn(org: string): Promise<void> {
  const { result } = await anonymous<{ client_id: string | null }>('GET', `/console/config?org_id=${encodeURIComponent(org)}`);
  if (result.client_id === null) throw new ApiError(404, 'this organization has no administrator yet: use the first-administrator link, or POST /console/administrators with its API key');
  const verifier = random();
  const state = random();
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  sessionStorage.setItem(PENDING, JSON.stringify({ org, verifier, state, client_id: result.client_id }));
  localStorage.setItem(LAST_ORG, org);
  const url = new URL('/oauth2/authorize', location.origin);
  const params = { response_type: 'code', client_id: result.client_id, redirect_uri: redirectUri(), scope: 'openid', state, code_challenge: challenge, code_challenge_method: 'S256' };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  location.assign(url.toString());
}

/** The hosted page's answer (`?code=&state=`): the code exchanged for the access token. */
export async function finishSignIn(query: URLSearchParams): Promise<void> {
  const raw = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  history.replaceState(null, '', '/console#/persons');
  const pending = raw === null ? undefined : (JSON.parse(raw) as { org: string; verifier: string; state: string; client_id: string });
  if (query.get('error')) throw new ApiError(400, `sign-in refused: ${query.get('error_description') ?? query.get('error')}`);
  if (!pending || pending.state !== query.get('state')) throw new ApiError(400, 'this sign-in was not started here, or was already finished: sign in again');
  const res = await fetch('/oauth2/tokens', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: query.get('code') ?? '', redirect_uri: redirectUri(), client_id: pending.client_id, code_verifier: pending.verifier }),
  });
  const body = await res.json();
  if (!res.ok) throw new ApiError(res.status, body.error_description ?? body.error ?? 'the token endpoint refused the code');
  sessionStorage.setItem(SESSION, JSON.stringify({ org: pending.org, token: body.access_token, client_id: pending.client_id }));
}
