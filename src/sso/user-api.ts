// The person behind a plain OAuth 2.0 provider's access token (github, bitbucket: no ID token): their account
// and their verified email addresses, read from the provider's user API, the primary one first.
import * as oidc from 'openid-client';

export type UserApiKind = 'github' | 'bitbucket';

export interface UserApi {
  kind: UserApiKind;
  /** https://api.github.com, https://api.bitbucket.org/2.0 */
  base: string;
}

/** What the user API said: the account (claims for groups_claim) and the email to sign in with, if verified. */
export interface ApiPerson {
  /** the account object as the provider returns it, with `sub` set to its stable id */
  claims: Record<string, unknown>;
  /** the primary verified (GitHub) or confirmed (Bitbucket) address, else another verified one */
  email: string | undefined;
}

/** The user API answered something other than what its documentation says: named in the sign-in's failure. */
export class UserApiError extends Error {
  override name = 'UserApiError';
}

/** An address as each API lists it, reduced to what the choice needs. */
interface Address {
  email: string;
  verified: boolean;
  primary: boolean;
}

const KINDS: Record<UserApiKind, { headers: Record<string, string>; emails(body: unknown): Address[]; sub(user: Record<string, unknown>): unknown }> = {
  // https://docs.github.com/en/rest/users/users#get-the-authenticated-user and .../emails#list-email-addresses-for-the-authenticated-user
  github: {
    headers: { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' },
    emails: (body) =>
      (Array.isArray(body) ? body : []).map((e: Record<string, unknown>) => ({ email: String(e['email'] ?? ''), verified: e['verified'] === true, primary: e['primary'] === true })),
    sub: (user) => user['id'],
  },
  // https://developer.atlassian.com/cloud/bitbucket/rest/api-group-users/ : /user and the paged /user/emails
  bitbucket: {
    headers: { accept: 'application/json' },
    emails: (body) => {
      const values = (body as { values?: unknown } | null)?.values;
      return (Array.isArray(values) ? values : []).map((e: Record<string, unknown>) => ({
        email: String(e['email'] ?? ''),
        verified: e['is_confirmed'] === true,
        primary: e['is_primary'] === true,
      }));
    },
    sub: (user) => user['uuid'],
  },
};

/** The first verified address, the primary one if it is verified. */
export function chooseEmail(addresses: readonly Address[]): string | undefined {
  const verified = addresses.filter((a) => a.verified && a.email !== '');
  return (verified.find((a) => a.primary) ?? verified[0])?.email;
}

export async function readApiPerson(config: oidc.Configuration, accessToken: string, api: UserApi): Promise<ApiPerson> {
  const kind = KINDS[api.kind];
  const get = async (path: string): Promise<unknown> => {
    const res = await oidc.fetchProtectedResource(config, accessToken, new URL(`${api.base}${path}`), 'GET', undefined, new Headers(kind.headers));
    if (res.status !== 200) {
      const text = (await res.text()).slice(0, 200);
      throw new UserApiError(`${api.kind}'s GET ${path} answered HTTP ${res.status}${text ? `: ${text}` : ''}`);
    }
    try {
      return await res.json();
    } catch {
      throw new UserApiError(`${api.kind}'s GET ${path} answered something other than JSON`);
    }
  };
  const user = await get('/user');
  if (typeof user !== 'object' || user === null || Array.isArray(user)) throw new UserApiError(`${api.kind}'s GET /user answered no account object`);
  const account = user as Record<string, unknown>;
  const email = chooseEmail(kind.emails(await get('/user/emails')));
  const sub = kind.sub(account);
  return { claims: { ...account, sub: sub === undefined ? undefined : String(sub) }, email };
}
