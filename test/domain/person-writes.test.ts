// Every command that names a person refuses one who does not exist with a 404 naming them, whatever else it
// carries: a decision that loops over an empty list or body must still look the person up.
import { test } from 'node:test';
import type { Command } from '../../src/domain/commands.js';
import { aGroup, aPerson, given, refused } from '../support/domain.js';

const ghost = 'no-such-person';
const cases: Command[] = [
  { kind: 'SetPersonActive', person_id: ghost, active: false },
  { kind: 'DeletePerson', person_id: ghost },
  { kind: 'AddPersonHandles', person_id: ghost, handles: [] },
  { kind: 'RemovePersonHandle', person_id: ghost, handle: { type: 'username', value: 'nobody' } },
  { kind: 'SetPersonGroups', person_id: ghost, groups: [] },
  { kind: 'SetAttributes', person_id: ghost, bucket: 'end_user_read_write', attributes: {}, replace: true },
  { kind: 'SetAttributes', person_id: ghost, bucket: 'no_such_bucket', attributes: {}, replace: false },
  { kind: 'DeleteAttributes', person_id: ghost, bucket: 'end_user_read_write' },
  { kind: 'DeleteAttributes', person_id: ghost, bucket: 'no_such_bucket', names: [] },
  { kind: 'SetAttributeBuckets', person_id: ghost, buckets: {}, replace: true },
  { kind: 'SetAttributeBuckets', person_id: ghost, buckets: {}, replace: false },
  { kind: 'SetAttributeBuckets', person_id: ghost, buckets: { no_such_bucket: {} }, replace: false },
  { kind: 'SetGdprConsents', person_id: ghost, levels: [] },
  { kind: 'AddGdprConsents', person_id: ghost, levels: [] },
  { kind: 'RemoveGroupPerson', name: 'staff', person_id: ghost },
  { kind: 'SetPassword', person_id: ghost, password_hash: 'unused' },
  { kind: 'AddPasswordCredential', person_id: ghost, password_hash: 'not a hash' },
  { kind: 'RemoveCredentials', person_id: ghost },
  { kind: 'RemoveCredentials', person_id: ghost, credential_id: 'unused' },
  { kind: 'SetPersonRoles', person_id: ghost, roles: [] },
  { kind: 'SetPersonAdditionalPermissions', person_id: ghost, permissions: [] },
  { kind: 'IssueDirectId', person_id: ghost, duration_secs: 60 },
];

for (const command of cases) {
  test(`${command.kind} ${JSON.stringify(command).slice(0, 120)}: 404 naming the person`, () => {
    refused(given(aPerson('someone-else'), aGroup('staff')), command, 'ERR_NOT_FOUND', `person "${ghost}" not found`);
  });
}
