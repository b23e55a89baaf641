// The event catalog: every event type with its stable number, version, emitter and message, as one table.
import {
  COMMON_TYPES,
  COMPONENT_MESSAGES,
  EVENT_SOURCE,
  EVENT_SOURCE_NAMES,
  PASSWORD_CHANGE_INITIATOR,
  PERSON_HANDLE_TYPE,
  STREAM_FRAME,
  type EventSourceName,
} from './common-types.js';
import {
  OPTIONAL,
  REPEATED,
  TIMESTAMP,
  enumField,
  message,
  msg,
  scalar,
  str,
  type EnumDef,
  type FieldDef,
  type MessageDef,
} from './schema.js';

/** Who emits an event, as the seed says; "edge function" has no EventSource value. */
export type Emitter = EventSourceName | 'edge function';

export interface EventTypeDef<N extends number | null = number | null, T extends string = string> {
  readonly kind: 'event';
  /** null for the messages the seed defines without a type number. */
  readonly number: N;
  readonly type: T;
  readonly version: 1;
  readonly messageName: `${T}_v1`;
  readonly emitters: readonly Emitter[];
  readonly message: MessageDef;
}

export interface PlaceholderTypeDef<N extends number = number, T extends string = string> {
  readonly kind: 'unspecified' | 'reserved';
  readonly number: N;
  readonly type: T;
  readonly comment: string;
}

const META = msg('event_metadata', 1, 'EventMetadata');
const ANALYTICS = msg('analytics_metadata', 2, 'AnalyticsMetadata');
const BROWSER = msg('browser_metadata', 3, 'BrowserMetadata');
const CLOUD: readonly Emitter[] = ['Cloud'];
const SDK: readonly Emitter[] = ['SDK'];
const GATE: readonly Emitter[] = ['Gate'];

function event<const N extends number | null, const T extends string>(
  number: N,
  type: T,
  emitters: readonly Emitter[],
  fields: readonly FieldDef[],
  comment?: string,
): EventTypeDef<N, T> {
  const messageName = `${type}_v1` as const;
  return { kind: 'event', number, type, version: 1, messageName, emitters, message: message(messageName, [META, ...fields], comment) };
}

// The access-control rule: every event has an _InRegion form that adds region #100 and is otherwise identical.
const inRegion = (fields: readonly FieldDef[]): readonly FieldDef[] => [...fields, str('region', 100)];

const PERSON = [str('person_id', 101), str('region', 102)];
const PERMISSION = [str('permission_name', 2), str('description', 3)];
const ROLE = [str('role_name', 2), str('description', 3), str('permissions', 4, REPEATED)];
const ROLES_SET = [str('new_roles', 2, REPEATED), str('old_roles', 3, REPEATED), str('person_id', 4)];
const PERMISSIONS_SET = [str('new_permissions', 2, REPEATED), str('old_permissions', 3, REPEATED), str('person_id', 4)];
// The seed lists SuborganizationCreated and OAuth2ClientCreated without a message. These fields are this project's
// choice, numbered from #2 like the access-control events they sit among, so #100 stays free for region. Neither
// carries a secret (the new organization's API key, the client secret).
const SUBORGANIZATION = [str('suborganization_id', 2), str('org_name', 3), str('parent_organization_id', 4)];
const OAUTH2_CLIENT = [
  str('client_id', 2),
  str('client_name', 3),
  str('grant_types', 4, REPEATED),
  str('redirect_uris', 5, REPEATED),
  str('scopes', 6, REPEATED),
  scalar('public', 7, 'bool'),
];
const AWS_ROLE = [str('account_id', 101), str('role_name', 102)];
const SPN = ['domain', 'service_class', 'service_name', 'account_name', 'account_type', 'distinguished_name'].map((name, i) =>
  str(name, 101 + i),
);
const rfc3339 = { format: 'rfc3339' } as const;
const tokenFields = [
  str('token_id', 101),
  str('person_id', 102),
  scalar('mint_token_api', 103, 'bool'),
  str('issued_at', 104, rfc3339),
  str('expires_at', 105, rfc3339),
];

export const EVENT_CATALOG = [
  { kind: 'unspecified', number: 0, type: 'EventType_UNSPECIFIED', comment: 'No event type.' },
  event(1, 'AuthenticationSucceeded', SDK, [ANALYTICS, BROWSER, ...PERSON, str('success_authn_method', 103),
    str('authenticated_methods', 104, REPEATED), msg('handle', 105, 'PersonHandle')]),
  event(2, 'AuthenticationFailed', ['SDK', 'Cloud'], [ANALYTICS, BROWSER, ...PERSON, str('authenticated_methods', 103, REPEATED),
    str('failed_authn_method', 104), str('failure_reason', 105), str('failure_detail', 106), msg('handle', 107, 'PersonHandle')]),
  event(3, 'VirtualPageLoaded', SDK, [ANALYTICS, BROWSER, ...PERSON]),
  event(4, 'PersonCreated', CLOUD, [ANALYTICS, ...PERSON, msg('handles', 103, 'PersonHandle', REPEATED),
    str('gdpr_consents', 104, REPEATED), str('prev_person_type', 105, OPTIONAL)]),
  event(5, 'PersonDeleted', CLOUD, [...PERSON, msg('handles', 103, 'PersonHandle', REPEATED), str('groups', 104, REPEATED)]),
  event(6, 'ServiceSDKLoaded', SDK, [ANALYTICS, BROWSER]),
  event(7, 'PersonIdentified', SDK, [ANALYTICS, BROWSER, ...PERSON]),
  event(8, 'PersonLoggedOut', SDK, [ANALYTICS, BROWSER, ...PERSON]),
  event(9, 'GateServerStarted', GATE, [ANALYTICS, msg('version', 101, 'GateServerStarted_v1_Version'),
    str('comment', 102, OPTIONAL)]),
  event(10, 'GateRequestHandled', GATE, [ANALYTICS, msg('timing_metadata', 4, 'TimingMetadata'),
    msg('http_request_metadata', 5, 'HttpRequestMetadata'), msg('plugins', 101, 'GateRequestHandled_v1_Plugin', REPEATED)]),
  event(11, 'TokenMinted', CLOUD, [ANALYTICS, ...tokenFields, str('prev_anonymous_person_id', 106, OPTIONAL),
    scalar('first_token', 107, 'bool'), msg('authentications', 108, 'AuthenticationDetails', REPEATED)]),
  event(12, 'GdprConsentsChanged', CLOUD, [str('person_id', 101), msg('new_gdpr_consents', 102, 'GDPRConsent', REPEATED),
    msg('old_gdpr_consents', 103, 'GDPRConsent', REPEATED)]),
  event(13, 'PasswordChanged', CLOUD, [...PERSON, msg('handle', 103, 'PersonHandle'),
    enumField('initiated_by', 104, 'PasswordChangeInitiator')]),
  event(14, 'AnonymousPersonCreated', CLOUD, [ANALYTICS, ...PERSON]),
  event(15, 'AnonymousTokenMinted', CLOUD, [ANALYTICS, ...tokenFields]),
  event(16, 'PermissionCreated_InRegion', CLOUD, inRegion(PERMISSION)),
  event(17, 'PermissionCreated', CLOUD, PERMISSION),
  event(18, 'PermissionDeleted_InRegion', CLOUD, inRegion(PERMISSION.slice(0, 1))),
  event(19, 'PermissionDeleted', CLOUD, PERMISSION.slice(0, 1)),
  event(20, 'RoleCreated_InRegion', CLOUD, inRegion(ROLE)),
  event(21, 'RoleCreated', CLOUD, ROLE),
  event(22, 'RoleDeleted_InRegion', CLOUD, inRegion(ROLE.slice(0, 1))),
  event(23, 'RoleDeleted', CLOUD, ROLE.slice(0, 1)),
  event(24, 'RoleUpdated_InRegion', CLOUD, inRegion(ROLE)),
  event(25, 'RoleUpdated', CLOUD, ROLE),
  event(26, 'RolesSetToPerson_InRegion', CLOUD, inRegion(ROLES_SET)),
  event(27, 'RolesSetToPerson', CLOUD, ROLES_SET),
  event(28, 'PermissionUpdated_InRegion', CLOUD, inRegion(PERMISSION)),
  event(29, 'PermissionUpdated', CLOUD, PERMISSION),
  { kind: 'reserved', number: 30, type: 'reserved', comment: 'Formerly a gateway credential-found event.' },
  event(31, 'MitmAttackDetected', ['edge function'], [str('client_ip_address', 101, { format: 'ip' }), str('user_agent', 102),
    str('mitm_domain', 103), str('allowed_domains', 104, REPEATED), str('token_tag', 105), str('mitm_token', 106)]),
  event(32, 'SuborganizationCreated_InRegion', CLOUD, inRegion(SUBORGANIZATION)),
  event(33, 'SuborganizationCreated', CLOUD, SUBORGANIZATION),
  event(34, 'OAuth2ClientCreated_InRegion', CLOUD, inRegion(OAUTH2_CLIENT)),
  event(35, 'OAuth2ClientCreated', CLOUD, OAUTH2_CLIENT),
  event(36, 'GateHeartbeat', GATE, [ANALYTICS, scalar('sequence', 101, 'int64')]),
  event(37, 'BillableProtectedIdentitiesCounted', CLOUD, [str('org_id', 101), str('region', 102),
    str('window_start', 103, rfc3339), str('window_end', 104, rfc3339), scalar('user_identities_count', 105, 'int64'),
    scalar('non_human_identities_count', 106, 'int64'), scalar('credentials_count', 107, 'int64'),
    str('computed_at', 108, { format: 'rfc3339-micros' })]),
  event(1001, 'AWSIAMRoleCreated', CLOUD, [...AWS_ROLE, str('role_arn', 103), str('role_path', 104), str('role_id', 105),
    str('description', 106), msg('inline_policies', 107, 'AWSInlinePolicy', REPEATED),
    msg('attached_managed_policies', 108, 'AWSManagedPolicy', REPEATED), str('assume_role_policy_doc', 109, { format: 'json' }),
    msg('permissions_boundary', 110, 'AWSPermissionsBoundary'), scalar('max_session_duration', 111, 'int32'),
    msg('tags', 112, 'AWSTag', REPEATED), msg('created_at', 113, TIMESTAMP), msg('last_used_at', 114, TIMESTAMP),
    str('last_used_region', 115)]),
  event(1002, 'AWSIAMRoleInlinePoliciesUpdated', CLOUD, [...AWS_ROLE, msg('inline_policies', 103, 'AWSInlinePolicy', REPEATED)]),
  event(1003, 'AWSIAMRoleManagedPoliciesUpdated', CLOUD, [...AWS_ROLE,
    msg('attached_managed_policies', 103, 'AWSManagedPolicy', REPEATED)]),
  event(1004, 'AWSIAMRoleAssumeRolePolicyUpdated', CLOUD, [...AWS_ROLE, str('assume_role_policy_doc', 103, { format: 'json' })]),
  event(1005, 'AWSIAMRolePermissionsBoundaryUpdated', CLOUD, [...AWS_ROLE,
    msg('permissions_boundary', 103, 'AWSPermissionsBoundary')]),
  event(1006, 'AWSIAMRoleDeleted', CLOUD, AWS_ROLE),
  event(2001, 'GCPServiceAccountCreated', CLOUD, [str('project_id', 101), str('name', 102), str('email', 103),
    str('unique_id', 104), str('display_name', 105), str('description', 106), str('oauth2_client_id', 107),
    scalar('disabled', 108, 'bool'), str('etag', 109)]),
  event(2002, 'GCPIAMPolicyBindingUpdated', CLOUD, [str('project_id', 101), str('principal', 102),
    msg('bindings', 103, 'GCPIAMPolicyBinding', REPEATED)]),
  event(2003, 'GCPServiceAccountDeleted', CLOUD, [str('project_id', 101), str('service_account_email', 102)]),
  event(3001, 'ActiveDirectorySPNCreated', CLOUD, SPN),
  event(3002, 'ActiveDirectorySPNRoleUpdated', CLOUD, SPN),
  event(3003, 'ActiveDirectorySPNDeleted', CLOUD, SPN),
  // Defined by the seed, listed without a type number.
  event(null, 'PermissionsSetToPerson_InRegion', CLOUD, inRegion(PERMISSIONS_SET)),
  event(null, 'PermissionsSetToPerson', CLOUD, PERMISSIONS_SET),
] as const satisfies readonly (EventTypeDef | PlaceholderTypeDef)[];

type Row = (typeof EVENT_CATALOG)[number];
type Numbered = Extract<Row, { kind: 'event' | 'unspecified'; number: number }>;

/** The EventType enumeration: type name → stable number (30 is reserved and has no name). */
export const EventType = Object.freeze(
  Object.fromEntries(EVENT_CATALOG.flatMap((row) => (row.kind !== 'reserved' && row.number !== null ? [[row.type, row.number]] : []))),
) as { readonly [R in Numbered as R['type']]: R['number'] };
export type EventTypeName = keyof typeof EventType;

export const EVENT_TYPE_ENUM: EnumDef = {
  name: 'EventType',
  values: Object.entries(EventType).map(([name, number]) => ({ name, number })),
  reserved: EVENT_CATALOG.flatMap((row) => (row.kind === 'reserved' ? [{ number: row.number, comment: row.comment }] : [])),
};

export const EVENT_TYPES: readonly EventTypeDef[] = EVENT_CATALOG.filter((row): row is Extract<Row, { kind: 'event' }> => row.kind === 'event');
export const EVENT_MESSAGE_NAMES: readonly string[] = EVENT_TYPES.map((def) => def.messageName);
export const ENUMS: readonly EnumDef[] = [EVENT_SOURCE, PERSON_HANDLE_TYPE, PASSWORD_CHANGE_INITIATOR, EVENT_TYPE_ENUM];
/** Every message of the package, in the order the .proto declares them. */
export const MESSAGES: readonly MessageDef[] = [...COMMON_TYPES, ...COMPONENT_MESSAGES, ...EVENT_TYPES.map((d) => d.message), STREAM_FRAME];

// Built once from the constant table above and never written afterwards.
const byMessageName: ReadonlyMap<string, EventTypeDef> = new Map(EVENT_TYPES.map((def) => [def.messageName, def]));
const byNumber: ReadonlyMap<number, EventTypeDef> = new Map(EVENT_TYPES.flatMap((def) => (def.number === null ? [] : [[def.number, def]])));
const messagesByName: ReadonlyMap<string, MessageDef> = new Map(MESSAGES.map((def) => [def.name, def]));
const enumsByName: ReadonlyMap<string, EnumDef> = new Map(ENUMS.map((def) => [def.name, def]));

export function eventByMessageName(messageName: string): EventTypeDef | undefined {
  return byMessageName.get(messageName);
}

/** Whether a name is an event message of the catalog, which event triggers may name. */
export function isEventMessageName(name: string): boolean {
  return byMessageName.has(name);
}

export function eventByNumber(number: number): EventTypeDef | undefined {
  return byNumber.get(number);
}

export function messageDef(name: string): MessageDef | undefined {
  return messagesByName.get(name);
}

export function enumDef(name: string): EnumDef | undefined {
  return enumsByName.get(name);
}

/** The EventSource an event's metadata carries: its first emitter that is one; an edge function has none. */
export function eventSource(def: EventTypeDef): EventSourceName {
  const source = def.emitters.find((e): e is EventSourceName => (EVENT_SOURCE_NAMES as readonly string[]).includes(e));
  return source ?? 'EventSource_UNSPECIFIED';
}
