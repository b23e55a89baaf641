// The organization's hosted sign-in page and the authorization endpoint's error page: server-rendered HTML,
// every value escaped, no script.
import type { HandleType } from '../domain/state.js';

export const SIGN_IN_PATH = '/oauth2/authorize/sign-in';
/** where the second step of the sign-in form posts: the code of a person's second factor */
export const SECOND_FACTOR_PATH = '/oauth2/authorize/second-factor';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ENTITIES[c] as string);

/** Neither framed (clickjacking) nor cached, nor sending its query (with the state) to anyone else. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
};

/**
 * The sign-in page's policy: its form posts to the service, whose answer redirects to the client. Browsers
 * hold that redirect to form-action too (Chromium blocks it), so the client's redirect URI is allowed there:
 * its origin, or its scheme for a native app's private-use scheme (RFC 8252 7.1).
 */
export function signInPageCsp(redirectUri: string): string {
  let target = '';
  try {
    const url = new URL(redirectUri);
    target = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : /^[a-z][a-z0-9+.-]*:$/i.test(url.protocol) ? url.protocol : '';
  } catch {
    // Registered redirect URIs are absolute; nothing else is allowed if one is not.
  }
  return (PAGE_HEADERS['Content-Security-Policy'] as string).replace("form-action 'self'", `form-action 'self'${target === '' ? '' : ` ${target}`}`);
}

/** A page of the hosted sign-in (the device page's too): its frame and style. */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:24rem;margin:3rem auto;padding:0 1rem}label,input,select,button,a.sso{display:block;width:100%;box-sizing:border-box;margin:.4rem 0}input,select{padding:.5rem}button,a.sso{padding:.6rem;text-align:center}.error{color:#a00}</style>
</head><body>
${body}
</body></html>
`;
}

/** A provider the person may sign in with instead: a link to its SSO start route. */
export interface SsoButton {
  label: string;
  href: string;
}

export interface SignInPageInput {
  org_name: string;
  client_name: string;
  /** the sealed authorization request, posted back with the form */
  request: string;
  /** where the form posts; default the authorization endpoint's sign-in */
  action?: string;
  csrf: string;
  handle_type: HandleType;
  login_hint?: string;
  error?: string;
  sso: readonly SsoButton[];
}

const HANDLE_LABELS: ReadonlyArray<[HandleType, string]> = [
  ['email_address', 'Email address'],
  ['phone_number', 'Phone number'],
  ['username', 'Username'],
];

export function signInPage(p: SignInPageInput): string {
  const options = HANDLE_LABELS.map(([type, label]) => `<option value="${type}"${type === p.handle_type ? ' selected' : ''}>${label}</option>`).join('');
  const sso = p.sso.map((b) => `<a class="sso" href="${escapeHtml(b.href)}">Sign in with ${escapeHtml(b.label)}</a>`).join('\n');
  return page(
    `Sign in to ${p.org_name}`,
    `<h1>Sign in to ${escapeHtml(p.org_name)}</h1>
<p>to continue to ${escapeHtml(p.client_name)}</p>
${p.error === undefined ? '' : `<p class="error" role="alert">${escapeHtml(p.error)}</p>`}
<form method="post" action="${escapeHtml(p.action ?? SIGN_IN_PATH)}">
<input type="hidden" name="request" value="${escapeHtml(p.request)}">
<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">
<label for="handle_type">Sign in with</label>
<select id="handle_type" name="handle_type">${options}</select>
<label for="handle">Handle</label>
<input id="handle" name="handle" required autocomplete="username" value="${escapeHtml(p.login_hint ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" required autocomplete="current-password">
<button type="submit">Sign in</button>
</form>
${sso}`,
  );
}

export interface SecondFactorPageInput {
  org_name: string;
  client_name: string;
  request: string;
  csrf: string;
  /** the signed challenge the password step answered with */
  challenge: string;
  error?: string;
}

/** The sign-in's second step: a code from the person's authenticator app, or one of their recovery codes. */
export function secondFactorPage(p: SecondFactorPageInput): string {
  return page(
    `Sign in to ${p.org_name}`,
    `<h1>Sign in to ${escapeHtml(p.org_name)}</h1>
<p>to continue to ${escapeHtml(p.client_name)}: enter the code your authenticator app shows, or one of your recovery codes.</p>
${p.error === undefined ? '' : `<p class="error" role="alert">${escapeHtml(p.error)}</p>`}
<form method="post" action="${SECOND_FACTOR_PATH}">
<input type="hidden" name="request" value="${escapeHtml(p.request)}">
<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">
<input type="hidden" name="challenge" value="${escapeHtml(p.challenge)}">
<label for="code">Authentication code</label>
<input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" autofocus>
<label for="recovery_code">Or a recovery code</label>
<input id="recovery_code" name="recovery_code" autocomplete="off">
<button type="submit">Continue</button>
</form>`,
  );
}

/** RFC 6749 4.1.2.1: an unknown client or a bad redirect_uri is told to the person, never redirected. */
export function errorPage(error: string, description: string): string {
  return page('Sign-in request refused', `<h1>This sign-in request cannot be completed</h1>\n<p class="error">${escapeHtml(error)}: ${escapeHtml(description)}</p>`);
}
