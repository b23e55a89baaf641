// The organization's token template (GET/PUT /organizations/config/token-template, as the original names
// them): the template is checked here, against sample persons, before the actor stores it.
import { Type } from '@sinclair/typebox';
import { groupsClaimName } from '../../domain/org-config.js';
import { checkTokenTemplate, TOKEN_TEMPLATE_MAX_BYTES } from '../../tokens/token-template.js';
import { route, type Route } from '../route.js';
import { execute, type HandlerDeps } from './deps.js';

const TokenTemplate = Type.Object(
  {
    content: Type.String({
      maxLength: TOKEN_TEMPLATE_MAX_BYTES,
      description:
        'a Mustache template rendering a JSON object of extra claims for every identity token of the organization; "" (or only whitespace) for none. ' +
        'It sees person.person_id, person.region, person.handles (type, value), person.groups, person.attributes.<end-user-readable bucket> and organization.id, organization.name. ' +
        '{{x}} writes a string JSON-escaped (inside quotes you write) and anything else as JSON; {{{x}}} and {{&x}} are refused.',
    }),
  },
  { additionalProperties: false },
);

export function tokenTemplateRoutes(deps: HandlerDeps): Route[] {
  return [
    route({
      method: 'get',
      path: '/organizations/config/token-template',
      summary: "The organization's token template; content is \"\" when it has none",
      tag: 'organizations',
      auth: 'key',
      success: { status: 200, result: TokenTemplate },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: { content: req.org.state.token_template } }),
    }),
    route({
      method: 'put',
      path: '/organizations/config/token-template',
      summary: 'Set the token template (content "" removes it): refused with a 400 when it renders invalid JSON (the line named) or a reserved claim name',
      tag: 'organizations',
      auth: 'key',
      body: TokenTemplate,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const content = req.body.content.trim() === '' ? '' : req.body.content;
        const state = req.org.state;
        if (content !== '') checkTokenTemplate(content, req.org.id, state.org_name, groupsClaimName(state.config));
        await execute(deps, req, { kind: 'SetTokenTemplate', content });
        return { status: 204 };
      },
    }),
  ];
}
