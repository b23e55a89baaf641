// The organization's configuration: token lifetime, groups claim, self-registration rules and SSO redirects.
import { Type } from '@sinclair/typebox';
import { FIRST_FACTOR_METHODS, SECOND_FACTOR_METHODS, SIGN_IN_METHODS } from '../../domain/factors.js';
import {
  CLAIM_NAME_MAX,
  HANDLE_PATTERN_MAX,
  MAX_HANDLE_PATTERNS,
  MAX_POLICY_GROUPS,
  MAX_REDIRECT_URIS,
  orgConfigView,
  REDIRECT_URI_MAX,
  TOKEN_DURATION_MAX,
  type OrgConfig,
} from '../../domain/org-config.js';
import { route, type Route } from '../route.js';
import { execute, type HandlerDeps } from './deps.js';

// The schema states types and plain bounds for the document; decide() checks every rule again, with messages naming the field.
const fields = {
  token_duration: Type.Integer({ minimum: 0, maximum: TOKEN_DURATION_MAX, description: "seconds an identity token of the organization lives; 0 means the deployment's SERVICE_TOKEN_TTL" }),
  groups_claim_name: Type.String({ minLength: 1, maxLength: CLAIM_NAME_MAX, description: 'the claim carrying the person\'s groups (default groups); a reserved name for custom claims. Letters, digits and _ - . : /; not another claim the token carries' }),
  requires_manual_approval: Type.Boolean({ description: 'persons created by self-registration (password or SSO) start inactive' }),
  deny_self_registration: Type.Boolean({ description: 'end users may not register (403), and SSO sign-in of an unknown person creates nobody' }),
  allowed_factor_methods: Type.Array(Type.Union(SIGN_IN_METHODS.map((m) => Type.Literal(m))), { maxItems: 16, description: 'end-user methods that may authenticate; empty: all. Others are 403 naming the method' }),
  first_factor_methods: Type.Array(Type.Union(FIRST_FACTOR_METHODS.map((m) => Type.Literal(m))), { maxItems: 16, description: 'methods that may begin a sign-in; empty: every first-factor method' }),
  second_factor_methods: Type.Array(Type.Union(SECOND_FACTOR_METHODS.map((m) => Type.Literal(m))), { maxItems: 16, description: 'methods that may answer a second-factor challenge; empty: every second-factor method' }),
  second_factor_required: Type.Boolean({ description: 'every person signs in with two factors: a sign-in with one gets no token (403)' }),
  second_factor_required_groups: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: MAX_POLICY_GROUPS, description: 'the members of these groups sign in with two factors' }),
  new_person_handle_patterns: Type.Array(Type.String({ minLength: 1, maxLength: HANDLE_PATTERN_MAX }), {
    maxItems: MAX_HANDLE_PATTERNS,
    description: 'glob patterns (* any run, ? one character; email addresses match case-insensitively) a self-registered handle must match; empty: any',
  }),
  sso_allowed_redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: REDIRECT_URI_MAX }), {
    maxItems: MAX_REDIRECT_URIS,
    description: 'absolute URIs without fragment SSO sign-in may redirect to: https, http only for localhost and loopback addresses, or an app\'s own scheme; compared after URL normalisation',
  }),
};

/** Fields the original's configuration carries for features not offered here (email and SMS links, sudo
 * mode): answered, with their neutral values, so its generated clients read the configuration; not settable. */
const notOffered = {
  from_email: Type.String({ description: 'not offered: always empty' }),
  from_phone_number_sms: Type.String({ description: 'not offered: always empty' }),
  authn_link_allowed_redirect_uris: Type.Array(Type.String(), { description: 'not offered: always empty' }),
  sudo_mode_duration: Type.Integer({ description: 'not offered: always 0' }),
};
const NOT_OFFERED = { from_email: '', from_phone_number_sms: '', authn_link_allowed_redirect_uris: [], sudo_mode_duration: 0 };
const answer = (config: OrgConfig) => ({ ...orgConfigView(config), ...NOT_OFFERED });

const OrgConfigRet = Type.Object({ ...fields, ...notOffered });
const OrgConfigPatch = Type.Partial(Type.Object(fields), { additionalProperties: false });

export function orgConfigRoutes(deps: HandlerDeps): Route[] {
  return [
    route({
      method: 'get',
      path: '/organizations/config',
      summary: "The organization's configuration",
      tag: 'organizations',
      auth: 'key',
      success: { status: 200, result: OrgConfigRet },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: answer(req.org.state.config) }),
    }),
    route({
      method: 'patch',
      path: '/organizations/config',
      summary: 'Change any of the configuration fields; answers the whole configuration',
      tag: 'organizations',
      auth: 'key',
      body: OrgConfigPatch,
      success: { status: 200, result: OrgConfigRet },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => ({ status: 200, result: answer(await execute<OrgConfig>(deps, req, { kind: 'SetOrgConfig', patch: req.body })) }),
    }),
  ];
}
