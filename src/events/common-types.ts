// The seed's enumerations, common data types and component messages, and the stream frame that carries events.
import {
  OPTIONAL,
  REPEATED,
  TIMESTAMP,
  VALUE,
  enumField,
  message,
  msg,
  scalar,
  str,
  type EnumDef,
  type MessageDef,
} from './schema.js';

export const EVENT_SOURCE_NAMES = ['EventSource_UNSPECIFIED', 'Cloud', 'SDK', 'Gate'] as const;
export type EventSourceName = (typeof EVENT_SOURCE_NAMES)[number];

export const PERSON_HANDLE_TYPE_NAMES = ['PersonHandleType_UNSPECIFIED', 'PhoneNumber', 'EmailAddress', 'Username'] as const;
export type PersonHandleTypeName = (typeof PERSON_HANDLE_TYPE_NAMES)[number];

export const PASSWORD_CHANGE_INITIATOR_NAMES = ['PasswordChangeInitiator_UNSPECIFIED', 'AdminAPI', 'EndUser'] as const;
export type PasswordChangeInitiatorName = (typeof PASSWORD_CHANGE_INITIATOR_NAMES)[number];

// The seed numbers each of these enums 0, 1, 2, ... in the order listed.
function numbered(name: string, names: readonly string[]): EnumDef {
  return { name, values: names.map((value, number) => ({ name: value, number })) };
}

export const EVENT_SOURCE = numbered('EventSource', EVENT_SOURCE_NAMES);
export const PERSON_HANDLE_TYPE = numbered('PersonHandleType', PERSON_HANDLE_TYPE_NAMES);
export const PASSWORD_CHANGE_INITIATOR = numbered('PasswordChangeInitiator', PASSWORD_CHANGE_INITIATOR_NAMES);

const rfc3339 = { format: 'rfc3339' } as const;

export const EVENT_METADATA = message('EventMetadata', [
  scalar('is_test_event', 1, 'bool'),
  str('event_id', 2, { format: 'uuid' }),
  str('timestamp', 3, rfc3339),
  enumField('source', 4, 'EventSource'),
  str('event_type', 5),
  str('event_name', 6),
  scalar('event_version', 7, 'uint64'),
  str('organization_id', 8),
  str('root_organization_id', 9),
]);

export const COMMON_TYPES: readonly MessageDef[] = [
  EVENT_METADATA,
  message('EventTemplate', [msg('event_metadata', 1, 'EventMetadata')], 'Every event has at least this field.'),
  message('PersonHandle', [enumField('type', 1, 'PersonHandleType'), str('value', 2)]),
  message('AuthenticationDetails', [
    str('timestamp', 1, rfc3339),
    str('method', 2),
    msg('handle', 3, 'PersonHandle', OPTIONAL),
  ]),
  message('AnalyticsMetadata', [str('analytics_correlation_id', 1, { format: 'uuid' }), str('client_ip_address', 2, { format: 'ip' })]),
  message('BrowserMetadata', [str('user_agent', 1), str('window_location', 2), str('service_sdk_version', 3)]),
  message('TimingMetadata', [msg('start', 1, TIMESTAMP), msg('end', 2, TIMESTAMP), scalar('elapsed', 3, 'double')]),
  message('HttpRequestMetadata', [
    str('method', 1),
    str('url', 2),
    scalar('status_code', 3, 'int32'),
    scalar('request_length', 4, 'int64'),
    scalar('response_length', 5, 'int64'),
  ]),
  message('GDPRConsent', [str('consent_level', 1), str('created_at', 2, rfc3339)]),
  message('AWSTag', [str('key', 1), str('value', 2)]),
  message('AWSManagedPolicy', [str('policy_name', 1), str('policy_arn', 2)]),
  message('AWSInlinePolicy', [str('policy_name', 1), str('policy_document', 2, { format: 'json' })]),
  message('AWSPermissionsBoundary', [str('permissions_boundary_arn', 1), str('permissions_boundary_type', 2)]),
  message('GCPPolicyBindingCondition', [str('expression', 1), str('title', 2), str('description', 3), str('location', 4)]),
  message('GCPIAMPolicyBinding', [str('role', 1), msg('condition', 2, 'GCPPolicyBindingCondition')]),
];

export const COMPONENT_MESSAGES: readonly MessageDef[] = [
  message('GateServerStarted_v1_Version', [
    str('version', 1),
    str('variant', 2),
    str('build_commit', 3, OPTIONAL),
    msg('build_date', 4, TIMESTAMP, OPTIONAL),
    str('built_by', 5, OPTIONAL),
  ]),
  message('GateRequestHandled_v1_Plugin', [
    msg('timing_metadata', 1, 'TimingMetadata'),
    scalar('plugin_index', 101, 'int32'),
    str('plugin_id', 102),
    str('plugin_type', 103),
    msg('plugin_metadata', 104, VALUE),
    msg('round_trips', 105, 'GateRequestHandled_v1_RoundTrip', REPEATED),
  ]),
  message(
    'GateRequestHandled_v1_RoundTrip',
    [msg('timing_metadata', 1, 'TimingMetadata'), msg('http_request_metadata', 2, 'HttpRequestMetadata')],
    'One HTTP call made by the request handler.',
  ),
];

export const STREAM_FRAME = message(
  'StreamFrame',
  [scalar('offset', 1, 'uint64'), str('event_name', 2), scalar('event', 3, 'bytes'), scalar('chain', 4, 'bytes')],
  'One frame of the protobuf event stream; event holds the encoded message that event_name names, and chain the SHA-256 over the previous frame\'s chain (32 zero bytes before the first event) and event.',
);
