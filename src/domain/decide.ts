// decide(state, command): the changes, events and reply a command leads to, or a ServiceError. Pure.
import type { Command } from './commands.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import { addPersonHandles, createPerson, deletePerson, putPerson, removePersonHandle, setPersonActive } from './persons.js';
import { createGroup, deleteGroup, setPersonGroups } from './groups.js';
import { deleteAttributes, setAttributes } from './attributes.js';
import { createSuborganization, rotateApiKey } from './organizations.js';
import { setGdprConsents } from './consents.js';
import { emitTestEvents } from './test-events.js';
import { recordSdkEvent } from './sdk-events.js';
import { expireAnonymousPersons } from './anonymous.js';
import { createMitmToken, deleteMitmToken, recordMitmDetection } from './mitm.js';
import { recordAuthenticationFailure, setPassword } from './sign-in.js';
import { recordToken, revokeIdentityToken } from './tokens.js';
import type { OrgState } from './state.js';
import { setOrgConfig } from './org-config.js';
import { createOAuthClient, deleteOAuthClient, revokeAccessToken, rotateOAuthClientSecret, updateOAuthClient } from './oauth-clients.js';
import { emitOwedTwins, withTwins } from './twins.js';
import { createSsoCredential, deleteSsoCredential, updateSsoCredential } from './sso-credentials.js';
import { issueOAuthCode, redeemOAuthCode, revokeOAuthGrant, rotateOAuthRefresh } from './oauth-grants.js';
import { addTrigger, createWebhook, deleteWebhook, removeTrigger, updateWebhook } from './webhooks.js';
import { createPermission, createRole, deletePermission, deleteRole, setPersonAdditionalPermissions, setPersonRoles, updatePermission, updateRole } from './rbac.js';

export function decide(state: OrgState, command: Command, ctx: DecideContext): Decision {
  return withTwins(state, decideCommand(state, command, ctx), ctx);
}

function decideCommand(state: OrgState, command: Command, ctx: DecideContext): Decision {
  switch (command.kind) {
    case 'CreateSuborganization':
      return createSuborganization(state, command.sub_org_name, ctx);
    case 'RotateApiKey':
      return rotateApiKey(state, ctx);
    case 'CreatePerson':
      return createPerson(state, command.input, ctx);
    case 'PutPerson':
      return putPerson(state, command.input, ctx);
    case 'SetPersonActive':
      return setPersonActive(state, command.person_id, command.active);
    case 'DeletePerson':
      return deletePerson(state, command.person_id);
    case 'AddPersonHandles':
      return addPersonHandles(state, command.person_id, command.handles);
    case 'RemovePersonHandle':
      return removePersonHandle(state, command.person_id, command.handle);
    case 'CreateGroup':
      return createGroup(state, command.name, command.description, ctx);
    case 'DeleteGroup':
      return deleteGroup(state, command.name);
    case 'SetPersonGroups':
      return setPersonGroups(state, command.person_id, command.groups);
    case 'SetAttributes':
      return setAttributes(state, command.person_id, command.bucket, command.attributes, command.replace);
    case 'DeleteAttributes':
      return deleteAttributes(state, command.person_id, command.bucket, command.names);
    case 'SetGdprConsents':
      return setGdprConsents(state, command.person_id, command.levels, ctx);
    case 'EmitTestEvents':
      return emitTestEvents(command.events);
    case 'RecordSdkEvent':
      return recordSdkEvent(state, command.event);
    case 'CreateMitmToken':
      return createMitmToken(state, command.input, ctx);
    case 'DeleteMitmToken':
      return deleteMitmToken(state, command.token);
    case 'RecordMitmDetection':
      return recordMitmDetection(state, command.detection);
    case 'ExpireAnonymousPersons':
      return expireAnonymousPersons(state, command.now_ms);
    case 'CreateWebhook':
      return createWebhook(state, command.input, command.allow_insecure, ctx);
    case 'UpdateWebhook':
      return updateWebhook(state, command.webhook_id, command.input, command.allow_insecure);
    case 'DeleteWebhook':
      return deleteWebhook(state, command.webhook_id);
    case 'AddWebhookTrigger':
      return addTrigger(state, command.webhook_id, command.trigger, ctx);
    case 'RemoveWebhookTrigger':
      return removeTrigger(state, command.webhook_id, command.trigger);
    case 'SetPassword':
      return setPassword(state, command.person_id, command.password_hash);
    case 'RecordAuthenticationFailure':
      return recordAuthenticationFailure(state, command.failure, ctx);
    case 'EmitOwedTwins':
      return emitOwedTwins(state, command.through);
    case 'RecordToken':
      return recordToken(state, command.token, ctx);
    case 'RevokeIdentityToken':
      return revokeIdentityToken(state, command.jti, command.exp, ctx);
    // Access control (roles and permissions)
    case 'CreatePermission':
      return createPermission(state, command.name, command.description, ctx);
    case 'UpdatePermission':
      return updatePermission(state, command.name, command.description);
    case 'DeletePermission':
      return deletePermission(state, command.name);
    case 'CreateRole':
      return createRole(state, command.name, command.description, command.permissions, ctx);
    case 'UpdateRole':
      return updateRole(state, command.name, command.description, command.permissions);
    case 'DeleteRole':
      return deleteRole(state, command.name);
    case 'SetPersonRoles':
      return setPersonRoles(state, command.person_id, command.roles);
    case 'SetPersonAdditionalPermissions':
      return setPersonAdditionalPermissions(state, command.person_id, command.permissions);
    case 'CreateSsoCredential':
      return createSsoCredential(state, command.credential, ctx);
    case 'UpdateSsoCredential':
      return updateSsoCredential(state, command.client_id, command.provider, command.patch);
    case 'DeleteSsoCredential':
      return deleteSsoCredential(state, command.client_id);
    case 'SetOrgConfig':
      return setOrgConfig(state, command.patch);
    case 'SetTokenTemplate':
      return command.content === state.token_template ? decision(null) : decision(null, [{ t: 'TokenTemplateSet', content: command.content }]);
    case 'CreateOAuthClient':
      return createOAuthClient(state, command.input, ctx);
    case 'UpdateOAuthClient':
      return updateOAuthClient(state, command.client_id, command.patch);
    case 'DeleteOAuthClient':
      return deleteOAuthClient(state, command.client_id);
    case 'RotateOAuthClientSecret':
      return rotateOAuthClientSecret(state, command.client_id, ctx);
    case 'RevokeAccessToken':
      return revokeAccessToken(state, command.jti, command.exp, ctx);
    // OAuth authorization codes and grants
    case 'IssueOAuthCode':
      return issueOAuthCode(state, command.code, ctx);
    case 'RedeemOAuthCode':
      return redeemOAuthCode(state, command.input, ctx);
    case 'RotateOAuthRefresh':
      return rotateOAuthRefresh(state, command.input, ctx);
    case 'RevokeOAuthGrant':
      return revokeOAuthGrant(state, command.grant_id);
  }
}
