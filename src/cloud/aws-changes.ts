// The AWS role changes of API.md's table as use cases: validated by us, made at the provider, then the event
// committed with the provider's answer. Each runs in the organization's cloud queue from the provider call to
// the commit; a provider refusal throws before anything is recorded.
import { checkDescription, checkInlinePolicies, checkManagedPolicies, checkMaxSessionDuration, checkPolicyArn, checkPolicyDocument, checkRoleName, checkRolePath, checkTags, type InlinePolicy } from './aws-rules.js';
import { createAwsRoles, type EventBody, type RoleInput } from './aws.js';
import { runChange, type Change, type ChangeDeps } from './change.js';
import type { Clients, OrgPort } from './connections.js';

export interface AwsChangesDeps extends ChangeDeps {
  clients: Clients;
}

export function checkRoleInput(input: RoleInput): void {
  checkRoleName(input.role_name);
  if (input.path !== undefined) checkRolePath(input.path);
  if (input.description !== undefined) checkDescription(input.description);
  checkPolicyDocument(input.assume_role_policy_doc, 'assume_role_policy_doc', true);
  checkInlinePolicies(input.inline_policies ?? [], 'inline_policies');
  checkManagedPolicies(input.attached_managed_policies ?? [], 'attached_managed_policies');
  if (input.permissions_boundary) checkPolicyArn(input.permissions_boundary.permissions_boundary_arn, 'permissions_boundary.permissions_boundary_arn');
  if (input.max_session_duration !== undefined) checkMaxSessionDuration(input.max_session_duration);
  checkTags(input.tags ?? []);
}

export function createAwsChanges(deps: AwsChangesDeps) {
  /** Provider call and commit, alone in the organization's queue. */
  const perform = (org: OrgPort, connectionId: string, event: string, call: (roles: ReturnType<typeof createAwsRoles>) => Promise<EventBody>): Promise<Change> =>
    runChange(deps, org, connectionId, event, (connection) => {
      const { client, account } = deps.clients.aws(org.id, connection);
      return call(createAwsRoles(client, account));
    });

  return {
    createRole(org: OrgPort, connectionId: string, input: RoleInput): Promise<Change> {
      checkRoleInput(input);
      return perform(org, connectionId, 'AWSIAMRoleCreated_v1', (roles) => roles.create(input));
    },
    setInlinePolicies(org: OrgPort, connectionId: string, role: string, policies: InlinePolicy[]): Promise<Change> {
      checkRoleName(role);
      checkInlinePolicies(policies, 'inline_policies');
      return perform(org, connectionId, 'AWSIAMRoleInlinePoliciesUpdated_v1', (roles) => roles.setInlinePolicies(role, policies));
    },
    setManagedPolicies(org: OrgPort, connectionId: string, role: string, arns: string[]): Promise<Change> {
      checkRoleName(role);
      checkManagedPolicies(arns, 'attached_managed_policies');
      return perform(org, connectionId, 'AWSIAMRoleManagedPoliciesUpdated_v1', (roles) => roles.setManagedPolicies(role, arns));
    },
    setAssumeRolePolicy(org: OrgPort, connectionId: string, role: string, doc: string): Promise<Change> {
      checkRoleName(role);
      checkPolicyDocument(doc, 'assume_role_policy_doc', true);
      return perform(org, connectionId, 'AWSIAMRoleAssumeRolePolicyUpdated_v1', (roles) => roles.setAssumeRolePolicy(role, doc));
    },
    setPermissionsBoundary(org: OrgPort, connectionId: string, role: string, arn: string | undefined): Promise<Change> {
      checkRoleName(role);
      if (arn !== undefined) checkPolicyArn(arn, 'permissions_boundary_arn');
      return perform(org, connectionId, 'AWSIAMRolePermissionsBoundaryUpdated_v1', (roles) => roles.setPermissionsBoundary(role, arn));
    },
    deleteRole(org: OrgPort, connectionId: string, role: string): Promise<Change> {
      checkRoleName(role);
      return perform(org, connectionId, 'AWSIAMRoleDeleted_v1', (roles) => roles.delete(role));
    },
  };
}

export type AwsChanges = ReturnType<typeof createAwsChanges>;
