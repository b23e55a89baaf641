// The organization's hosted sign-in page and the authorization endpoint's error page: server-rendered HTML,
// every value escaped; the one script is the passkey step's, allowed by its hash and no other.
import { createHash } from 'node:crypto';
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

/**
 * The second step's passkey button: the assertion options the page was rendered with (data-options), asked of
 * the browser's authenticator, and the response posted with the step's form. No fetch: the page talks to
 * the service only by its form, so the policy needs no connect-src.
 */
const PASSKEY_SCRIPT = `(() => {
const button = document.getElementById('passkey');
if (!button) return;
const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)), (c) => c.charCodeAt(0));
const b64u = (b) => b === null ? undefined : btoa(String.fromCharCode(...new Uint8Array(b))).replace(/[+]/g, '-').replace(/[/]/g, '_').replace(/=+$/, '');
button.addEventListener('click', async () => {
  const o = JSON.parse(button.dataset.options);
  const form = document.getElementById('passkey-form');
  try {
    const c = await navigator.credentials.get({ publicKey: { ...o, challenge: bytes(o.challenge), allowCredentials: (o.allowCredentials || []).map((x) => ({ ...x, id: bytes(x.id) })) } });
    const r = c.response;
    form.elements.webauthn.value = JSON.stringify({ id: c.id, rawId: b64u(c.rawId), type: c.type, clientExtensionResults: {}, response: {
      clientDataJSON: b64u(r.clientDataJSON), authenticatorData: b64u(r.authenticatorData), signature: b64u(r.signature), userHandle: b64u(r.userHandle) } });
    form.submit();
  } catch (e) {
    document.getElementById('passkey-status').textContent = 'The passkey was not used (' + e.name + '). Try again, or enter a code.';
  }
});
})();`;
const PASSKEY_SCRIPT_SOURCE = `'sha256-${createHash('sha256').update(PASSKEY_SCRIPT).digest('base64')}'`;

/** The second step's policy: the sign-in page's, with the passkey script allowed by its hash (nothing else runs). */
export function secondFactorPageCsp(redirectUri: string): string {
  return `${signInPageCsp(redirectUri)}; script-src ${PASSKEY_SCRIPT_SOURCE}`;
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
  /** the methods the challenge named that this page asks for, carried with the forms to show them again */
  methods: readonly string[];
  /** the person holds TOTP: the code form */
  totp: boolean;
  /** the options of a passkey assertion (JSON), when the person holds a passkey usable on this page */
  passkey_options?: string | undefined;
  error?: string;
}

/**
 * The sign-in's second step: a code from the person's authenticator app or one of their recovery codes, and
 * a passkey, as the person holds them. Both forms carry the same request, check value and challenge.
 */
export function secondFactorPage(p: SecondFactorPageInput): string {
  const carried = `<input type="hidden" name="request" value="${escapeHtml(p.request)}">
<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">
<input type="hidden" name="challenge" value="${escapeHtml(p.challenge)}">
<input type="hidden" name="methods" value="${escapeHtml(p.methods.join(' '))}">`;
  const passkey =
    p.passkey_options === undefined
      ? ''
      : `<form id="passkey-form" method="post" action="${SECOND_FACTOR_PATH}">
${carried}
<input type="hidden" name="webauthn" value="">
<button type="button" id="passkey" data-options="${escapeHtml(p.passkey_options)}">Use a passkey</button>
<p id="passkey-status" role="status"></p>
</form>
<script>${PASSKEY_SCRIPT}</script>`;
  const totp = !p.totp
    ? ''
    : `<form method="post" action="${SECOND_FACTOR_PATH}">
${carried}
<label for="code">Authentication code</label>
<input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code"${passkey === '' ? ' autofocus' : ''}>
<label for="recovery_code">Or a recovery code</label>
<input id="recovery_code" name="recovery_code" autocomplete="off">
<button type="submit">Continue</button>
</form>`;
  const ask = [p.totp && 'enter the code your authenticator app shows, or one of your recovery codes', passkey !== '' && 'use your passkey'].filter(Boolean).join('; or ');
  return page(
    `Sign in to ${p.org_name}`,
    `<h1>Sign in to ${escapeHtml(p.org_name)}</h1>
<p>to continue to ${escapeHtml(p.client_name)}: ${ask === '' ? "your passkeys belong to the organization's own site (their domain is not this page's or a parent of it): sign in there" : ask}.</p>
${p.error === undefined ? '' : `<p class="error" role="alert">${escapeHtml(p.error)}</p>`}
${passkey}
${totp}`,
  );
}

/** RFC 6749 4.1.2.1: an unknown client or a bad redirect_uri is told to the person, never redirected. */
export function errorPage(error: string, description: string): string {
  return page('Sign-in request refused', `<h1>This sign-in request cannot be completed</h1>\n<p class="error">${escapeHtml(error)}: ${escapeHtml(description)}</p>`);
}
