// The organization's message templates (the original's names): list, read (the default until one is written), replace.
import { Type, type Static } from '@sinclair/typebox';
import { BODY_MAX, MESSAGE_TEMPLATE_NAMES, mergeTemplate, messageTemplate, requireTemplateName, SENDER_NAME_MAX, SUBJECT_MAX } from '../../domain/message-templates.js';
import { checkTemplate, TEMPLATE_VARIABLES } from '../../mail/templates.js';
import { route, type Route } from '../route.js';
import { execute, type HandlerDeps } from './deps.js';

const Template = Type.Object({
  sender_name: Type.String({ description: 'Mustache; the display name of the sender' }),
  subject: Type.String({ description: 'Mustache' }),
  body: Type.String({ description: 'Mustache, plain text' }),
});

const TemplateBody = Type.Object(
  {
    sender_name: Type.Optional(Type.String({ maxLength: SENDER_NAME_MAX })),
    subject: Type.Optional(Type.String({ maxLength: SUBJECT_MAX })),
    body: Type.Optional(Type.String({ maxLength: BODY_MAX })),
  },
  { additionalProperties: false },
);

const variables = Object.entries(TEMPLATE_VARIABLES).map(([name, vars]) => `${name}: ${vars.map((v) => `{{${v}}}`).join(', ')}`).join('; ');

export function templateRoutes(deps: HandlerDeps): Route[] {
  return [
    route({
      method: 'get',
      path: '/organizations/config/templates',
      summary: 'The names of the message templates',
      tag: 'organizations',
      auth: 'key',
      success: { status: 200, result: Type.Array(Type.String()) },
      errors: [401, 403],
      handler: () => ({ status: 200, result: [...MESSAGE_TEMPLATE_NAMES] }),
    }),
    route({
      method: 'get',
      path: '/organizations/config/templates/{template_name}',
      summary: 'A message template: the organization\'s, or the default',
      tag: 'organizations',
      auth: 'key',
      success: { status: 200, result: Template },
      errors: [401, 403, 404],
      handler: (req) => ({ status: 200, result: messageTemplate(req.org.state, requireTemplateName(req.params['template_name'] as string)) }),
    }),
    route<Static<typeof TemplateBody>>({
      method: 'put',
      path: '/organizations/config/templates/{template_name}',
      summary: `Write a message template (fields left out keep their value); variables: ${variables}`,
      tag: 'organizations',
      auth: 'key',
      body: TemplateBody,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const name = requireTemplateName(req.params['template_name'] as string);
        const template = mergeTemplate(messageTemplate(req.org.state, name), req.body);
        checkTemplate(name, template);
        await execute(deps, req, { kind: 'SetMessageTemplate', name, template });
        return { status: 204 };
      },
    }),
  ];
}
