// The user code pages of the device authorization grant (RFC 8628 3.3): the code form, the confirmation that
// names the application and the code (so the person checks it is the one their device shows, 5.4), and the
// answer. Server-rendered in the hosted sign-in's frame, every value escaped, no script.
import { escapeHtml, page } from './sign-in-page.js';

export function deviceEntryPage(p: { user_code?: string; error?: string }): string {
  return page(
    'Connect a device',
    `<h1>Connect a device</h1>
<p>Enter the code your device shows.</p>
${p.error === undefined ? '' : `<p class="error" role="alert">${escapeHtml(p.error)}</p>`}
<form method="get" action="/oauth2/device">
<label for="user_code">Code</label>
<input id="user_code" name="user_code" required autocomplete="off" autocapitalize="characters" spellcheck="false" value="${escapeHtml(p.user_code ?? '')}">
<button type="submit">Continue</button>
</form>`,
  );
}

export interface DeviceConfirmInput {
  org_name: string;
  client_name: string;
  user_code: string;
  scope: readonly string[];
  request: string;
  csrf: string;
  action: string;
}

export function deviceConfirmPage(p: DeviceConfirmInput): string {
  const hidden = `<input type="hidden" name="request" value="${escapeHtml(p.request)}">\n<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">`;
  return page(
    `Allow ${p.client_name}?`,
    `<h1>Allow ${escapeHtml(p.client_name)}?</h1>
<p>A device asks to use your ${escapeHtml(p.org_name)} account${p.scope.length === 0 ? '' : ` (${p.scope.map(escapeHtml).join(', ')})`}.</p>
<p>Allow it only if your device shows the code <strong id="user_code">${escapeHtml(p.user_code.toUpperCase())}</strong>.</p>
<form method="post" action="${escapeHtml(p.action)}">
${hidden}
<button type="submit" id="allow" name="decision" value="allow">Allow</button>
<button type="submit" id="deny" name="decision" value="deny">Deny</button>
</form>`,
  );
}

export function deviceDonePage(p: { allowed: boolean; client_name: string }): string {
  return p.allowed
    ? page('Device connected', `<h1 id="done">Device connected</h1>\n<p>${escapeHtml(p.client_name)} may now use your account. You can return to your device.</p>`)
    : page('Device refused', `<h1 id="done">Device refused</h1>\n<p>${escapeHtml(p.client_name)} was not given access. You can close this page.</p>`);
}
