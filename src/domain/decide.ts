// decide(state, command): the changes, events and reply a command leads to, or a ServiceError. Pure.
import type { Command } from './commands.js';
import { decision, type DecideContext, type Decision } from './decision.js';
import { addPersonHandles, createPerson, deletePerson, putPerson, removePersonHandle, setPersonActive } from './persons.js';
import { addGroupPersons, createGroup, deleteGroup, removeGroupPerson, setPersonGroups } from './groups.js';
import { deleteAttributes, setAttributeBuckets, setAttributes } from './attributes.js';
import { createSuborganization, rotateApiKey, deleteSuborganization } from './organizations.js';
import { addGdprConsents, setGdprConsents } from './consents.js';
import { addAllowedDomains, removeAllowedDomains } from './domains.js';
import { emitTestEvents } from './test-events.js';
import { recordAuthenticationFailure } from './sign-in.js';
import { recordSignIn } from './admission.js';
import { addPasswordCredential, changePassword, completePasswordReset, removeCredentials } from './credentials.js';
import { setMessageTemplate } from './message-templates.js';
import { emitGateEvents } from './gate-events.js';
import { recordSdkEvent } from './sdk-events.js';
import { expireAnonymousPersons } from './anonymous.js';
import { createMitmToken, deleteMitmToken, recordMitmDetection } from './mitm.js';
import { recordToken, revokeIdentityToken } from './tokens.js';
import type { OrgState } from './state.js';
import { setOrgConfig } from './org-config.js';
import { issueRegistrationToken, registerOAuthClient, revokeRegistrationToken } from './client-registration.js';
import { createOAuthClient, deleteOAuthClient, revokeAccessToken, rotateOAuthClientSecret, setOAuthClientUiConfiguration, updateOAuthClient } from './oauth-clients.js';
import { emitOwedTwins, withTwins } from './twins.js';
import { createSsoCredential, deleteSsoCredential, updateSsoCredential } from './sso-credentials.js';
import { decideDeviceCode, issueDeviceCode, redeemDeviceCode } from './device-codes.js';
import { pushOAuthRequest, redeemOAuthPushedRequest } from './pushed-requests.js';
import { issueOAuthCode, mintOAuthGrant, redeemOAuthCode, revokeOAuthGrant, revokeOAuthGrants, rotateOAuthRefresh } from './oauth-grants.js';
import { addTrigger, createWebhook, deleteWebhook, removeTrigger, updateWebhook } from './webhooks.js';
import { issueDirectId } from './direct-id.js';
import { completeLogouts, endSession, endSessionOf, signedOut, startSession } from './sessions.js';
import { importPersons } from './person-import.js';
import { countBillableIdentities, createCloudConnection, deleteCloudConnection, recordCloudChange, recordCloudSnapshot, updateCloudConnection } from './cloud.js';
import { createPermission, createRole, deletePermission, deleteRole, setPersonAdditionalPermissions, setPersonRoles, updatePermission, updateRole } from './rbac.js';
import { confirmTotp, enrollTotp, regenerateRecoveryCodes } from './totp.js';
import { addPasskey } from './passkeys.js';
import { issueOneTimeCode } from './one-time-codes.js';

export function decide(state: OrgState, command: Command, ctx: DecideContext): Decision {
  return withTwins(state, decideCommand(state, command, ctx), ctx);
}

function decideCommand(state: OrgState, command: Command, ctx: DecideContext): Decision {
  switch (command.kind) {
    case 'CreateSuborganization':
      return createSuborganization(state, command.sub_org_name, ctx);
    case 'RotateApiKey':
      return rotateApiKey(state, ctx);
    case 'DeleteSuborganization':
      return deleteSuborganization(state, command.id, command.orgs);
    case 'CreatePerson':
      return createPerson(state, command.input, ctx, { verified_by: command.verified_by ?? 'organization' });
    case 'PutPerson':
      return putPerson(state, command.input, ctx);
    case 'SetPersonActive': {
      const d = setPersonActive(state, command.person_id, command.active);
      return command.active ? d : signedOut(state, command.person_id, d, ctx.nowMs);
    }
    case 'DeletePerson':
      return signedOut(state, command.person_id, deletePerson(state, command.person_id), ctx.nowMs);
    case 'AddPersonHandles':
      return addPersonHandles(state, command.person_id, command.handles, ctx);
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
    case 'SetAttributeBuckets':
      return setAttributeBuckets(state, command.person_id, command.buckets, command.replace);
    case 'AddGdprConsents':
      return addGdprConsents(state, command.person_id, command.levels, ctx);
    case 'AddGroupPersons':
      return addGroupPersons(state, command.name, command.person_ids);
    case 'RemoveGroupPerson':
      return removeGroupPerson(state, command.name, command.person_id);
    case 'AddAllowedDomains':
      return addAllowedDomains(state, command.domains, command.overwrite);
    case 'RemoveAllowedDomains':
      return removeAllowedDomains(state, command.domain);
    case 'EmitTestEvents':
      return emitTestEvents(command.events);
    case 'EmitGateEvents':
      return emitGateEvents(command.events);
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
      return changePassword(state, command.person_id, command.password_hash, 'AdminAPI', ctx);
    case 'AddPasswordCredential':
      return addPasswordCredential(state, command.person_id, command.password_hash, ctx);
    case 'AddPasskey':
      return addPasskey(state, command.person_id, command.passkey, command.challenge, ctx);
    case 'EnrollTotp':
      return enrollTotp(state, command.person_id, command.secret, ctx);
    case 'ConfirmTotp':
      return confirmTotp(state, command.person_id, command.credential_id, command.step, ctx);
    case 'RegenerateRecoveryCodes':
      return regenerateRecoveryCodes(state, command.person_id, ctx);
    case 'RemoveCredentials':
      return removeCredentials(state, command.person_id, command.credential_id);
    case 'CompletePasswordReset':
      return completePasswordReset(state, command.reset, command.password_hash, ctx);
    case 'SetMessageTemplate':
      return setMessageTemplate(state, command.name, command.template);
    case 'RecordAuthenticationFailure':
      return recordAuthenticationFailure(state, command.failure, ctx);
    case 'EmitOwedTwins':
      return emitOwedTwins(state, command.through);
    case 'RecordToken':
      return recordToken(state, command.token, ctx);
    case 'RecordSignIn':
      return recordSignIn(state, command.entry, ctx);
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
      return createOAuthClient(state, command.input, ctx, command.allow_insecure);
    case 'UpdateOAuthClient':
      return updateOAuthClient(state, command.client_id, command.patch, command.allow_insecure);
    case 'DeleteOAuthClient':
      return deleteOAuthClient(state, command.client_id);
    case 'RotateOAuthClientSecret':
      return rotateOAuthClientSecret(state, command.client_id, ctx);
    case 'RevokeAccessToken':
      return revokeAccessToken(state, command.jti, command.exp, ctx);
    // OAuth authorization codes and grants
    case 'IssueOAuthCode':
      return issueOAuthCode(state, command.code, ctx, command.session);
    case 'RedeemOAuthCode':
      return redeemOAuthCode(state, command.input, ctx);
    case 'RotateOAuthRefresh':
      return rotateOAuthRefresh(state, command.input, ctx);
    case 'RevokeOAuthGrant':
      return revokeOAuthGrant(state, command.grant_id);
    case 'EndSession':
      return endSession(state, command.person_id, command.session_id, command.reason, ctx.nowMs);
    case 'StartSession':
      return startSession(state, command.session, ctx.nowMs);
    case 'CompleteBackchannelLogouts':
      return completeLogouts(state, command.sids);
    case 'EndSessionOf':
      return endSessionOf(state, { person_id: command.person_id, ...(command.grant_id !== undefined && { grant_id: command.grant_id }), ...(command.jti !== undefined && { jti: command.jti }) }, ctx.nowMs);
    case 'IssueOAuthDeviceCode':
      return issueDeviceCode(state, command.input, ctx);
    case 'DecideOAuthDeviceCode':
      return decideDeviceCode(state, command.input, ctx);
    case 'RedeemOAuthDeviceCode':
      return redeemDeviceCode(state, command.input, ctx);
    case 'PushOAuthRequest':
      return pushOAuthRequest(state, command.input, ctx);
    case 'RedeemOAuthPushedRequest':
      return redeemOAuthPushedRequest(state, command.input, ctx);
    case 'ImportPersons':
      return importPersons(state, command.rows, ctx);
    case 'IssueDirectId':
      return issueDirectId(state, command.person_id, command.duration_secs, ctx);
    case 'IssueOneTimeCode':
      return issueOneTimeCode(state, command, ctx);
    case 'MintOAuthGrant':
      return mintOAuthGrant(state, command.input, ctx);
    case 'RevokeOAuthGrants':
      return revokeOAuthGrants(state, command.client_id, command.person_id, command.until_ms);
    case 'IssueOAuthRegistrationToken':
      return issueRegistrationToken(state, command.input, ctx);
    case 'RevokeOAuthRegistrationToken':
      return revokeRegistrationToken(state, command.id);
    case 'RegisterOAuthClient':
      return registerOAuthClient(state, command.input, command.initial_token_hash, ctx, command.allow_insecure);
    case 'SetOAuthClientUiConfiguration':
      return setOAuthClientUiConfiguration(state, command.client_id, command.ui);
    case 'CreateCloudConnection':
      return createCloudConnection(state, command.connection, ctx);
    case 'UpdateCloudConnection':
      return updateCloudConnection(state, command.connection);
    case 'DeleteCloudConnection':
      return deleteCloudConnection(state, command.connection_id);
    case 'RecordCloudChange':
      return recordCloudChange(state, command.connection_id, command.event);
    case 'RecordCloudSnapshot':
      return recordCloudSnapshot(state, command.snapshot);
    case 'CountBillableIdentities':
      return countBillableIdentities(state, command.now_ms, command.computed_at);
  }
}
