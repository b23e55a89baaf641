// AWS IAM role changes made on the organization's behalf through one of its connections (API.md's table):
// each answers with the provider's answer, as its event carries it.
import { Type, type Static } from '@sinclair/typebox';
import type { AwsChanges } from '../../cloud/aws-changes.js';
import type { Change } from '../../cloud/change.js';
import type { Request } from '../route.js';
import { route, type Route } from '../route.js';
import type { HandlerDeps } from './deps.js';
import { answerChange, CLOUD_PATH } from './cloud-connections.js';

const ROLES = `${CLOUD_PATH}/{connection_id}/aws/roles`;
const ROLE = `${ROLES}/{role_name}`;

const Text = (max: number, description?: string) => Type.String({ maxLength: max, ...(description && { description }) });
const InlinePolicy = Type.Object(
  { policy_name: Text(128), policy_document: Text(20480, 'the policy document as JSON text') },
  { additionalProperties: false },
);
const InlinePolicies = Type.Array(InlinePolicy, { maxItems: 100 });
const ManagedPolicies = Type.Array(Text(2048), { maxItems: 20 });
const CreateBody = Type.Object(
  {
    role_name: Text(64),
    path: Type.Optional(Text(512)),
    description: Type.Optional(Text(1000)),
    assume_role_policy_doc: Text(20480, 'the trust policy as JSON text'),
    inline_policies: Type.Optional(InlinePolicies),
    attached_managed_policies: Type.Optional(ManagedPolicies),
    permissions_boundary: Type.Optional(Type.Object({ permissions_boundary_arn: Text(2048) }, { additionalProperties: false })),
    max_session_duration: Type.Optional(Type.Integer({ description: '3600 to 43200 seconds' })),
    tags: Type.Optional(Type.Array(Type.Object({ key: Text(128), value: Text(256) }, { additionalProperties: false }), { maxItems: 50 })),
  },
  { additionalProperties: false },
);
const InlineBody = Type.Object({ inline_policies: InlinePolicies }, { additionalProperties: false });
const ManagedBody = Type.Object({ attached_managed_policies: ManagedPolicies }, { additionalProperties: false });
const TrustBody = Type.Object({ assume_role_policy_doc: Text(20480) }, { additionalProperties: false });
const BoundaryBody = Type.Object({ permissions_boundary_arn: Text(2048) }, { additionalProperties: false });
const Answer = Type.Record(Type.String(), Type.Unknown(), { description: "the event's fields: the provider's answer" });

const ERRORS = [400, 401, 403, 404, 408, 409, 502];

export function cloudAwsRoutes(deps: HandlerDeps, aws: AwsChanges): Route[] {
  const conn = (req: Request<unknown, unknown>) => req.params['connection_id'] as string;
  const role = (req: Request<unknown, unknown>) => req.params['role_name'] as string;
  const answer = (req: Request<unknown, unknown>, change: Change, status: number) => answerChange(deps, req, change, status);
  const put = <B>(path: string, summary: string, body: typeof InlineBody | typeof ManagedBody | typeof TrustBody | typeof BoundaryBody, call: (req: Request<B, unknown>) => Promise<Change>): Route =>
    route<B>({
      method: 'put',
      path,
      summary,
      tag: 'cloud',
      auth: 'key',
      body,
      success: { status: 200, result: Answer },
      errors: ERRORS,
      handler: async (req) => answer(req, await call(req), 200),
    });
  return [
    route<Static<typeof CreateBody>>({
      method: 'post',
      path: ROLES,
      summary: 'Create an IAM role in the connected AWS account; AWSIAMRoleCreated_v1',
      tag: 'cloud',
      auth: 'key',
      body: CreateBody,
      success: { status: 201, result: Answer },
      errors: ERRORS,
      handler: async (req) => answer(req, await aws.createRole(req.org, conn(req), req.body), 201),
    }),
    put<Static<typeof InlineBody>>(`${ROLE}/inline-policies`, "Set a role's whole set of inline policies; AWSIAMRoleInlinePoliciesUpdated_v1", InlineBody, (req) =>
      aws.setInlinePolicies(req.org, conn(req), role(req), req.body.inline_policies),
    ),
    put<Static<typeof ManagedBody>>(`${ROLE}/managed-policies`, "Set a role's whole set of attached managed policies; AWSIAMRoleManagedPoliciesUpdated_v1", ManagedBody, (req) =>
      aws.setManagedPolicies(req.org, conn(req), role(req), req.body.attached_managed_policies),
    ),
    put<Static<typeof TrustBody>>(`${ROLE}/assume-role-policy`, "Replace a role's trust policy; AWSIAMRoleAssumeRolePolicyUpdated_v1", TrustBody, (req) =>
      aws.setAssumeRolePolicy(req.org, conn(req), role(req), req.body.assume_role_policy_doc),
    ),
    put<Static<typeof BoundaryBody>>(`${ROLE}/permissions-boundary`, "Set a role's permissions boundary; AWSIAMRolePermissionsBoundaryUpdated_v1", BoundaryBody, (req) =>
      aws.setPermissionsBoundary(req.org, conn(req), role(req), req.body.permissions_boundary_arn),
    ),
    route({
      method: 'delete',
      path: `${ROLE}/permissions-boundary`,
      summary: "Remove a role's permissions boundary; AWSIAMRolePermissionsBoundaryUpdated_v1 with an empty boundary",
      tag: 'cloud',
      auth: 'key',
      success: { status: 204 },
      errors: ERRORS,
      handler: async (req) => answer(req, await aws.setPermissionsBoundary(req.org, conn(req), role(req), undefined), 204),
    }),
    route({
      method: 'delete',
      path: ROLE,
      summary: 'Delete a role, its instance profiles and policies first; AWSIAMRoleDeleted_v1',
      tag: 'cloud',
      auth: 'key',
      success: { status: 204 },
      errors: ERRORS,
      handler: async (req) => answer(req, await aws.deleteRole(req.org, conn(req), role(req)), 204),
    }),
  ];
}
