// An administrator's sign-in as the console makes it, over plain HTTP: the hosted page, then the code exchanged
// with its PKCE verifier. The console's tests and the HTTP benchmark's console pages use it.
import { createHash, randomBytes } from 'node:crypto';
import { Browser } from './oauth-browser.js';

/** The console access token of `handle` (the console client `clientId` of the service at `base`). */
export async function consoleAccessToken(base: string, clientId: string, handle: string, password: string): Promise<string> {
  const redirect = `${base}/console`;
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const url = new URL('/oauth2/authorize', base);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: redirect, scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256' })) url.searchParams.set(k, v);
  const browser = new Browser();
  try {
    const page = await browser.get(url);
    if (page.status !== 200) throw new Error(`the hosted sign-in page: ${page.status} ${page.html.slice(0, 300)}`);
    const done = await browser.signIn(page, base, handle, password);
    if (done.status !== 302 || done.location === undefined) throw new Error(`signing in as ${handle}: ${done.status} ${done.html.slice(0, 300)}`);
    const back = new URL(done.location);
    if (`${back.origin}${back.pathname}` !== redirect) throw new Error(`the sign-in went back to ${done.location}, not to ${redirect}`);
    const res = await fetch(`${base}/oauth2/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code') ?? '', redirect_uri: redirect, client_id: clientId, code_verifier: verifier }),
    });
    const body = (await res.json()) as { access_token?: string };
    if (res.status !== 200 || body.access_token === undefined) throw new Error(`exchanging the code: ${res.status} ${JSON.stringify(body)}`);
    return body.access_token;
  } finally {
    await browser.close();
  }
}
