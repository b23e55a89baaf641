// Message templates: the organization's wording of the messages the service sends (the original's names),
// each a Mustache subject and body and a sender name. Syntax and required variables are checked by
// src/mail/templates.ts before the command; here the names, sizes and defaults.
import { badRequest, notFound } from '../errors.js';
import { decision, type Decision } from './decision.js';
import type { OrgState } from './state.js';

export interface MessageTemplate {
  sender_name: string;
  subject: string;
  body: string;
}

/** The names this service sends today, of the original's list. */
export const MESSAGE_TEMPLATE_NAMES = ['email_password_reset', 'email_otp_message', 'email_authn_challenge', 'text_otp_message', 'text_authn_challenge'] as const;
export type MessageTemplateName = (typeof MESSAGE_TEMPLATE_NAMES)[number];

export const SENDER_NAME_MAX = 200;
export const SUBJECT_MAX = 500;
export const BODY_MAX = 64 * 1024;

/** What a message reads before the organization writes its own. */
export const DEFAULT_TEMPLATES: Record<MessageTemplateName, MessageTemplate> = {
  email_password_reset: {
    sender_name: '{{organization_name}}',
    subject: 'Reset your password',
    body: [
      'Hello,',
      '',
      'Someone asked to reset the password of {{handle}} at {{organization_name}}.',
      'To choose a new password, open this link within {{expires_in_minutes}} minutes:',
      '',
      '{{password_reset_url}}',
      '',
      'The link works once. If you did not ask for this, ignore this message: your password stays as it is.',
      '',
    ].join('\n'),
  },
  email_otp_message: {
    sender_name: '{{organization_name}}',
    subject: 'Your sign-in code',
    body: 'Your code to sign in to {{organization_name}} is {{code}}.\nIt works once, within {{expires_in_minutes}} minutes. If you did not ask for it, ignore this message.\n',
  },
  email_authn_challenge: {
    sender_name: '{{organization_name}}',
    subject: 'Your sign-in link',
    body: 'To sign in to {{organization_name}}, open this link within {{expires_in_minutes}} minutes:\n\n{{link_url}}\n\nThe link works once. If you did not ask for it, ignore this message.\n',
  },
  text_otp_message: { sender_name: '{{organization_name}}', subject: '', body: '{{code}} is your {{organization_name}} sign-in code. It works once, within {{expires_in_minutes}} minutes.' },
  text_authn_challenge: { sender_name: '{{organization_name}}', subject: '', body: 'Sign in to {{organization_name}}: {{link_url}} (works once, within {{expires_in_minutes}} minutes)' },
};

export function requireTemplateName(name: string): MessageTemplateName {
  if (!(MESSAGE_TEMPLATE_NAMES as readonly string[]).includes(name)) {
    throw notFound(`message template ${JSON.stringify(name.slice(0, 64))} not found; templates: ${MESSAGE_TEMPLATE_NAMES.join(', ')}`);
  }
  return name as MessageTemplateName;
}

/** The organization's template, or the default. */
export function messageTemplate(state: OrgState, name: MessageTemplateName): MessageTemplate {
  return state.message_templates.get(name) ?? DEFAULT_TEMPLATES[name];
}

/** PUT: fields left out keep their current value. */
export function mergeTemplate(current: MessageTemplate, input: Partial<MessageTemplate>): MessageTemplate {
  return {
    sender_name: input.sender_name ?? current.sender_name,
    subject: input.subject ?? current.subject,
    body: input.body ?? current.body,
  };
}

export function setMessageTemplate(state: OrgState, name: string, template: MessageTemplate): Decision<null> {
  const known = requireTemplateName(name);
  if ([...template.sender_name].length > SENDER_NAME_MAX) throw badRequest(`sender_name: at most ${SENDER_NAME_MAX} characters`);
  if ([...template.subject].length > SUBJECT_MAX) throw badRequest(`subject: at most ${SUBJECT_MAX} characters`);
  if (Buffer.byteLength(template.body) > BODY_MAX) throw badRequest(`body: at most ${BODY_MAX} bytes`);
  // Header values: a line break would start another header.
  if (/[\r\n]/.test(template.sender_name) || /[\r\n]/.test(template.subject)) throw badRequest('sender_name and subject: must be one line');
  const current = messageTemplate(state, known);
  if (current.sender_name === template.sender_name && current.subject === template.subject && current.body === template.body) return decision(null);
  return decision(null, [{ t: 'MessageTemplateSet', name: known, template }]);
}
