// The event catalog against the seed, spot by spot, and the invariants the seed states for all events.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  EVENT_CATALOG,
  EVENT_MESSAGE_NAMES,
  EVENT_TYPES,
  EventType,
  MESSAGES,
  enumDef,
  eventByMessageName,
  eventByNumber,
  eventSource,
  isEventMessageName,
  messageDef,
} from '../../src/events/catalog.js';
import type { FieldDef } from '../../src/events/schema.js';

function field(messageName: string, fieldName: string): Omit<FieldDef, 'name' | 'format'> {
  const def = messageDef(messageName)?.fields.find((f) => f.name === fieldName);
  assert.ok(def, `${messageName}.${fieldName} exists`);
  return { number: def.number, kind: def.kind, type: def.type, repeated: def.repeated, optional: def.optional };
}

const plain = (number: number, type = 'string', kind: FieldDef['kind'] = 'scalar') => ({ number, kind, type, repeated: false, optional: false });
const repeated = (number: number, type = 'string', kind: FieldDef['kind'] = 'scalar') => ({ number, kind, type, repeated: true, optional: false });
const optional = (number: number, type = 'string', kind: FieldDef['kind'] = 'scalar') => ({ number, kind, type, repeated: false, optional: true });

describe('event catalog: the seed, spot by spot', () => {
  it('TokenMinted_v1: authentications #108 repeated AuthenticationDetails, prev_anonymous_person_id #106 optional', () => {
    assert.deepEqual(field('TokenMinted_v1', 'authentications'), repeated(108, 'AuthenticationDetails', 'message'));
    assert.deepEqual(field('TokenMinted_v1', 'prev_anonymous_person_id'), optional(106));
    assert.deepEqual(field('TokenMinted_v1', 'mint_token_api'), plain(103, 'bool'));
    assert.equal(eventByMessageName('TokenMinted_v1')?.number, 11);
  });

  it('PersonDeleted_v1: groups #104 repeated string, handles #103 repeated PersonHandle, no analytics metadata', () => {
    assert.deepEqual(field('PersonDeleted_v1', 'groups'), repeated(104));
    assert.deepEqual(field('PersonDeleted_v1', 'handles'), repeated(103, 'PersonHandle', 'message'));
    assert.equal(messageDef('PersonDeleted_v1')?.fields.some((f) => f.name === 'analytics_metadata'), false);
  });

  it('PersonCreated_v1: prev_person_type #105 optional string, gdpr_consents #104 repeated string', () => {
    assert.deepEqual(field('PersonCreated_v1', 'prev_person_type'), optional(105));
    assert.deepEqual(field('PersonCreated_v1', 'gdpr_consents'), repeated(104));
    assert.deepEqual(field('PersonCreated_v1', 'analytics_metadata'), plain(2, 'AnalyticsMetadata', 'message'));
  });

  it('BillableProtectedIdentitiesCounted_v1: computed_at #108 string, counts int64, type 37', () => {
    assert.deepEqual(field('BillableProtectedIdentitiesCounted_v1', 'computed_at'), plain(108));
    assert.deepEqual(field('BillableProtectedIdentitiesCounted_v1', 'user_identities_count'), plain(105, 'int64'));
    assert.deepEqual(field('BillableProtectedIdentitiesCounted_v1', 'credentials_count'), plain(107, 'int64'));
    assert.equal(eventByNumber(37)?.messageName, 'BillableProtectedIdentitiesCounted_v1');
  });

  it('RolesSetToPerson_InRegion_v1: region #100, person_id #4, type 26; its twin RolesSetToPerson_v1 is 27', () => {
    assert.deepEqual(field('RolesSetToPerson_InRegion_v1', 'region'), plain(100));
    assert.deepEqual(field('RolesSetToPerson_InRegion_v1', 'person_id'), plain(4));
    assert.deepEqual(field('RolesSetToPerson_InRegion_v1', 'new_roles'), repeated(2));
    assert.equal(EventType.RolesSetToPerson_InRegion, 26);
    assert.equal(EventType.RolesSetToPerson, 27);
  });

  it('event type 30 is reserved and has no message', () => {
    assert.equal(eventByNumber(30), undefined);
    assert.ok(EVENT_CATALOG.some((row) => row.kind === 'reserved' && row.number === 30));
    assert.ok(!Object.values(EventType).includes(30 as never));
    assert.deepEqual(enumDef('EventType')?.reserved?.map((r) => r.number), [30]);
  });

  it('cloud identity types are numbered 1001–1006, 2001–2003, 3001–3003', () => {
    const names = (numbers: number[]) => numbers.map((n) => eventByNumber(n)?.type);
    assert.deepEqual(names([1001, 1002, 1003, 1004, 1005, 1006]), [
      'AWSIAMRoleCreated', 'AWSIAMRoleInlinePoliciesUpdated', 'AWSIAMRoleManagedPoliciesUpdated',
      'AWSIAMRoleAssumeRolePolicyUpdated', 'AWSIAMRolePermissionsBoundaryUpdated', 'AWSIAMRoleDeleted',
    ]);
    assert.deepEqual(names([2001, 2002, 2003]), ['GCPServiceAccountCreated', 'GCPIAMPolicyBindingUpdated', 'GCPServiceAccountDeleted']);
    assert.deepEqual(names([3001, 3002, 3003]), ['ActiveDirectorySPNCreated', 'ActiveDirectorySPNRoleUpdated', 'ActiveDirectorySPNDeleted']);
  });

  it('AWSIAMRoleCreated_v1: created_at #113 Timestamp, max_session_duration #111 int32, tags #112 repeated AWSTag', () => {
    assert.deepEqual(field('AWSIAMRoleCreated_v1', 'created_at'), plain(113, 'google.protobuf.Timestamp', 'message'));
    assert.deepEqual(field('AWSIAMRoleCreated_v1', 'max_session_duration'), plain(111, 'int32'));
    assert.deepEqual(field('AWSIAMRoleCreated_v1', 'tags'), repeated(112, 'AWSTag', 'message'));
    assert.deepEqual(field('AWSIAMRoleCreated_v1', 'last_used_region'), plain(115));
  });

  it('GateRequestHandled_v1: timing #4, http request #5, plugins #101; a plugin carries plugin_metadata as a Value', () => {
    assert.deepEqual(field('GateRequestHandled_v1', 'timing_metadata'), plain(4, 'TimingMetadata', 'message'));
    assert.deepEqual(field('GateRequestHandled_v1', 'http_request_metadata'), plain(5, 'HttpRequestMetadata', 'message'));
    assert.deepEqual(field('GateRequestHandled_v1', 'plugins'), repeated(101, 'GateRequestHandled_v1_Plugin', 'message'));
    assert.deepEqual(field('GateRequestHandled_v1_Plugin', 'plugin_metadata'), plain(104, 'google.protobuf.Value', 'message'));
    assert.deepEqual(field('GateRequestHandled_v1_Plugin', 'round_trips'), repeated(105, 'GateRequestHandled_v1_RoundTrip', 'message'));
  });

  it('GateServerStarted_v1_Version: build_date #4 optional Timestamp; GateHeartbeat_v1: sequence #101 int64', () => {
    assert.deepEqual(field('GateServerStarted_v1_Version', 'build_date'), optional(4, 'google.protobuf.Timestamp', 'message'));
    assert.deepEqual(field('GateHeartbeat_v1', 'sequence'), plain(101, 'int64'));
    assert.deepEqual(field('GateHeartbeat_v1', 'analytics_metadata'), plain(2, 'AnalyticsMetadata', 'message'));
  });

  it('PasswordChanged_v1: initiated_by #104 PasswordChangeInitiator; GCPServiceAccountCreated_v1: disabled #108 bool', () => {
    assert.deepEqual(field('PasswordChanged_v1', 'initiated_by'), plain(104, 'PasswordChangeInitiator', 'enum'));
    assert.deepEqual(field('GCPServiceAccountCreated_v1', 'disabled'), plain(108, 'bool'));
    assert.deepEqual(field('GCPServiceAccountCreated_v1', 'etag'), plain(109));
  });

  it('EventMetadata: event_version #7 uint64, source #4 EventSource, root_organization_id #9', () => {
    assert.deepEqual(field('EventMetadata', 'event_version'), plain(7, 'uint64'));
    assert.deepEqual(field('EventMetadata', 'source'), plain(4, 'EventSource', 'enum'));
    assert.deepEqual(field('EventMetadata', 'root_organization_id'), plain(9));
    assert.deepEqual(field('AuthenticationDetails', 'handle'), optional(3, 'PersonHandle', 'message'));
  });

  it('the enumerations, and who emits what', () => {
    assert.deepEqual(enumDef('EventSource')?.values.map((v) => `${v.name}=${v.number}`), ['EventSource_UNSPECIFIED=0', 'Cloud=1', 'SDK=2', 'Gate=3']);
    assert.deepEqual(enumDef('PersonHandleType')?.values.map((v) => v.name), ['PersonHandleType_UNSPECIFIED', 'PhoneNumber', 'EmailAddress', 'Username']);
    assert.deepEqual(enumDef('PasswordChangeInitiator')?.values.map((v) => v.name), ['PasswordChangeInitiator_UNSPECIFIED', 'AdminAPI', 'EndUser']);
    assert.deepEqual(eventByMessageName('AuthenticationFailed_v1')?.emitters, ['SDK', 'Cloud']);
    assert.deepEqual(eventByMessageName('MitmAttackDetected_v1')?.emitters, ['edge function']);
    assert.equal(eventSource(eventByMessageName('MitmAttackDetected_v1')!), 'EventSource_UNSPECIFIED');
    assert.equal(eventSource(eventByMessageName('GateHeartbeat_v1')!), 'Gate');
  });

  it('PermissionsSetToPerson_v1 and _InRegion_v1 are event messages without a type number', () => {
    assert.equal(eventByMessageName('PermissionsSetToPerson_v1')?.number, null);
    assert.deepEqual(field('PermissionsSetToPerson_InRegion_v1', 'region'), plain(100));
    assert.deepEqual(field('PermissionsSetToPerson_v1', 'old_permissions'), repeated(3));
  });
});

describe('event catalog: invariants', () => {
  it('numbers exactly 0–37 (30 reserved), 1001–1006, 2001–2003 and 3001–3003', () => {
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const expected = [...range(0, 37), ...range(1001, 1006), ...range(2001, 2003), ...range(3001, 3003)];
    assert.deepEqual(EVENT_CATALOG.flatMap((row) => (row.number === null ? [] : [row.number])), expected);
    assert.equal(EVENT_MESSAGE_NAMES.length, 50);
    assert.equal(new Set(EVENT_MESSAGE_NAMES).size, 50);
  });

  it('names each message <type>_v<version>, all at version 1', () => {
    for (const def of EVENT_TYPES) {
      assert.equal(def.messageName, `${def.type}_v${def.version}`);
      assert.equal(def.version, 1);
      assert.equal(def.message.name, def.messageName);
    }
  });

  it('gives every event message event_metadata #1', () => {
    for (const def of EVENT_TYPES) assert.deepEqual(def.message.fields[0], { name: 'event_metadata', ...plain(1, 'EventMetadata', 'message') });
  });

  it('puts analytics_metadata at #2 and browser_metadata at #3 wherever they appear', () => {
    for (const def of EVENT_TYPES) {
      for (const f of def.message.fields) {
        if (f.name === 'analytics_metadata') assert.deepEqual(f, { name: f.name, ...plain(2, 'AnalyticsMetadata', 'message') }, def.messageName);
        if (f.name === 'browser_metadata') assert.deepEqual(f, { name: f.name, ...plain(3, 'BrowserMetadata', 'message') }, def.messageName);
      }
    }
  });

  it('makes every _InRegion message its twin plus region #100', () => {
    const twins = EVENT_TYPES.filter((def) => def.type.endsWith('_InRegion'));
    assert.equal(twins.length, 10);
    for (const def of twins) {
      const twin = eventByMessageName(def.messageName.replace('_InRegion_v1', '_v1'));
      assert.ok(twin, def.messageName);
      assert.deepEqual(def.message.fields, [...twin.message.fields, { name: 'region', ...plain(100) }]);
      if (def.number !== null) assert.equal(twin.number, def.number + 1);
    }
  });

  it('keeps field numbers and names unique and ascending within every message', () => {
    for (const def of MESSAGES) {
      const numbers = def.fields.map((f) => f.number);
      assert.deepEqual(numbers, [...numbers].sort((a, b) => a - b), def.name);
      assert.equal(new Set(numbers).size, numbers.length, def.name);
      assert.equal(new Set(def.fields.map((f) => f.name)).size, numbers.length, def.name);
    }
  });

  it('refers only to messages and enums it defines', () => {
    for (const def of MESSAGES) {
      for (const f of def.fields) {
        if (f.kind === 'enum') assert.ok(enumDef(f.type), `${def.name}.${f.name}`);
        if (f.kind === 'message' && !f.type.startsWith('google.protobuf.')) assert.ok(messageDef(f.type), `${def.name}.${f.name}`);
      }
    }
  });
});

describe('event triggers', () => {
  it('name event messages of the catalog', () => {
    for (const ok of ['PersonCreated_v1', 'RoleCreated_InRegion_v1', 'AWSIAMRoleCreated_v1', 'PermissionsSetToPerson_v1']) assert.equal(isEventMessageName(ok), true, ok);
    for (const bad of ['PersonCreated', 'PersonCreated_v2', 'Thing_v1', 'person created_v1', 'EventType_UNSPECIFIED', 'GateServerStarted_v1_Version', 'token_minted']) {
      assert.equal(isEventMessageName(bad), false, bad);
    }
  });
});
