// The end-user side of a password reset: the page a mailed link opens, and the new password it posts.
import { Type, type Static } from '@sinclair/typebox';
import { PASSWORD_RESET_PATH, type PasswordResets } from '../../auth/password-reset.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../auth/password-hash.js';
import { escapeHtml, PAGE_HEADERS } from '../../oauth/sign-in-page.js';
import type { ConsistencyWaiter } from '../../regions/consistency.js';
import { route, type Route } from '../route.js';

const TokenQuery = Type.Object({ token: Type.String({ minLength: 1, maxLength: 2048 }) }, { additionalProperties: true });
const ResetBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 2048, description: 'the token of the mailed link' }),
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX * 4, description: `the new password, ${PASSWORD_MIN}-${PASSWORD_MAX} characters` }),
  },
  { additionalProperties: false },
);

/** A small form without script: the browser posts it form-encoded to the same path. */
function form(token: string, orgName: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Choose a new password</title>
<style>body{font-family:system-ui,sans-serif;max-width:24rem;margin:3rem auto;padding:0 1rem}label,input,button{display:block;width:100%;margin:.4rem 0}input,button{padding:.5rem;font-size:1rem}</style>
</head>
<body>
<h1>Choose a new password</h1>
<p>for ${escapeHtml(orgName)}</p>
<form method="post" action="${PASSWORD_RESET_PATH}">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<label for="password">New password (${PASSWORD_MIN} to ${PASSWORD_MAX} characters)</label>
<input id="password" name="password" type="password" required minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}" autocomplete="new-password">
<button type="submit">Set password</button>
</form>
</body>
</html>
`;
}

export function passwordResetRoutes(resets: PasswordResets, consistency: ConsistencyWaiter): Route[] {
  return [
    route<unknown, Static<typeof TokenQuery>>({
      method: 'get',
      path: PASSWORD_RESET_PATH,
      summary: 'The page a password-reset link opens: a form for the new password (400 for a used, expired or forged link)',
      tag: 'authentication',
      auth: 'none',
      query: TokenQuery,
      success: { status: 200, description: 'an HTML form' },
      errors: [400],
      handler: (req) => {
        const { org } = resets.check(req.query.token);
        return { status: 200, text: form(req.query.token, org.state.org_name), contentType: 'text/html; charset=utf-8', headers: { ...PAGE_HEADERS } };
      },
    }),
    route<Static<typeof ResetBody>>({
      method: 'post',
      path: PASSWORD_RESET_PATH,
      summary: "Complete a password reset with the link's token and a new password (JSON or form-encoded; emits PasswordChanged, initiated by EndUser); the link is used",
      tag: 'authentication',
      auth: 'none',
      codec: 'jsonOrForm',
      body: ResetBody,
      success: { status: 204 },
      errors: [400, 408],
      handler: async (req) => {
        const done = await resets.complete(req.body.token, req.body.password);
        await consistency.wait(done.org, done.offset, req.consistency);
        return { status: 204, headers: { 'Cache-Control': 'no-store' } };
      },
    }),
  ];
}
