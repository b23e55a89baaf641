// The end-session endpoint's pages: the confirmation asked when no id_token_hint says which session the
// application means (RP-Initiated Logout 1.0 §2: logout without one could be forged by any site), and the
// page shown when no post_logout_redirect_uri takes the browser back.
import { escapeHtml, page } from './sign-in-page.js';

export const LOGOUT_PATH = '/oauth2/logout';
export const LOGOUT_CONFIRM_PATH = '/oauth2/logout/confirm';

export function logoutConfirmPage(p: { org_name: string; request: string; csrf: string }): string {
  return page(
    `Sign out of ${p.org_name}`,
    `<h1>Sign out of ${escapeHtml(p.org_name)}?</h1>
<form method="post" action="${LOGOUT_CONFIRM_PATH}">
<input type="hidden" name="request" value="${escapeHtml(p.request)}">
<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">
<button type="submit" name="logout" value="yes">Sign out</button>
</form>`,
  );
}

export function signedOutPage(): string {
  return page('Signed out', '<h1>You are signed out</h1>\n<p>You may close this window.</p>');
}

export function logoutErrorPage(error: string, description: string): string {
  return page('Sign-out request refused', `<h1>This sign-out request cannot be completed</h1>\n<p class="error">${escapeHtml(error)}: ${escapeHtml(description)}</p>`);
}
