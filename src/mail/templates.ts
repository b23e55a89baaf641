// Message templates as Mustache: the checks a PUT passes (syntax, the variables a message needs) and the
// rendering of a message. Messages are plain text, so values are inserted as they are, never HTML-escaped.
import Mustache from 'mustache';
import { badRequest } from '../errors.js';
import type { MessageTemplate, MessageTemplateName } from '../domain/message-templates.js';

/** Variables each message offers its template; the first of each list must appear in the body. */
export const TEMPLATE_VARIABLES: Record<MessageTemplateName, readonly string[]> = {
  email_password_reset: ['password_reset_url', 'handle', 'organization_name', 'expires_in_minutes'],
  email_otp_message: ['code', 'handle', 'organization_name', 'expires_in_minutes'],
  email_authn_challenge: ['link_url', 'handle', 'organization_name', 'expires_in_minutes'],
  text_otp_message: ['code', 'handle', 'organization_name', 'expires_in_minutes'],
  text_authn_challenge: ['link_url', 'handle', 'organization_name', 'expires_in_minutes'],
};

type Token = [string, string, number, number, ...unknown[]];

/** Names of the variables a parsed template refers to, sections included. */
function names(tokens: readonly Token[], into = new Set<string>()): Set<string> {
  for (const t of tokens) {
    if (t[0] !== 'text') into.add(t[1]);
    const inner = t[4];
    if (Array.isArray(inner)) names(inner as Token[], into);
  }
  return into;
}

function parse(field: string, template: string): Token[] {
  try {
    return Mustache.parse(template) as unknown as Token[];
  } catch (error) {
    throw badRequest(`${field}: not a valid Mustache template (${(error as Error).message.split('\n')[0]})`);
  }
}

/** A template as a PUT would store it: each field valid Mustache, the body with the message's required variable. */
export function checkTemplate(name: MessageTemplateName, template: MessageTemplate): void {
  parse('sender_name', template.sender_name);
  parse('subject', template.subject);
  const required = TEMPLATE_VARIABLES[name][0] as string;
  if (!names(parse('body', template.body)).has(required)) throw badRequest(`body: the ${name} template must contain {{${required}}}`);
}

const plain = { escape: (value: unknown) => String(value) };

/** The message's sender name, subject and text; line breaks in the one-line fields become spaces. */
export function renderTemplate(template: MessageTemplate, view: Record<string, string | number>): MessageTemplate {
  const line = (s: string) => Mustache.render(s, view, {}, plain).replace(/[\r\n]+/g, ' ').trim();
  return { sender_name: line(template.sender_name), subject: line(template.subject), body: Mustache.render(template.body, view, {}, plain) };
}
