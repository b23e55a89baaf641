// The six events the browser SDK reports (POST /actions/sdk): their bodies as the original SDK sends them,
// and their enrichment into the seed's messages (analytics and browser metadata; the region is the domain's).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { SdkEventInput } from '../domain/sdk-events.js';
import { handleTypeEnum } from '../domain/rules.js';
import type { Handle as HandleValue } from '../domain/state.js';

export const SDK_EVENT_NAMES = [
  'ServiceSDKLoaded_v1',
  'PersonIdentified_v1',
  'PersonLoggedOut_v1',
  'VirtualPageLoaded_v1',
  'AuthenticationSucceeded_v1',
  'AuthenticationFailed_v1',
] as const;
export type SdkEventName = (typeof SDK_EVENT_NAMES)[number];

/** The original SDK's body cap is not known; ours: an event is a few hundred bytes, a page URL at most a few KiB. */
export const SDK_BODY_LIMIT = 16_384;

const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const Text = (max: number) => Type.String({ maxLength: max });
const PersonId = Type.String({ minLength: 1, maxLength: 100 });
const Method = Type.String({ minLength: 1, maxLength: 100, description: 'an authentication method, e.g. password' });
const Handle = Type.Object(
  { type: Type.Union([Type.Literal('email_address'), Type.Literal('phone_number'), Type.Literal('username')]), value: Type.String({ minLength: 1, maxLength: 320 }) },
  { additionalProperties: false },
);
const name = <N extends SdkEventName>(n: N) => Type.Literal(n);

/** event_data of each name: the original's fields (challenge_id is accepted and dropped, the seed has no field for it). */
export const SDK_EVENT_DATA: Record<SdkEventName, TSchema> = {
  ServiceSDKLoaded_v1: Type.Object({ event_name: name('ServiceSDKLoaded_v1') }, { additionalProperties: false }),
  PersonIdentified_v1: Type.Object({ event_name: name('PersonIdentified_v1'), person_id: PersonId }, { additionalProperties: false }),
  PersonLoggedOut_v1: Type.Object({ event_name: name('PersonLoggedOut_v1'), person_id: PersonId }, { additionalProperties: false }),
  VirtualPageLoaded_v1: Type.Object({ event_name: name('VirtualPageLoaded_v1'), person_id: Type.Optional(PersonId) }, { additionalProperties: false }),
  AuthenticationSucceeded_v1: Type.Object(
    { event_name: name('AuthenticationSucceeded_v1'), person_id: PersonId, success_authn_method: Method, authenticated_methods: Type.Array(Method, { maxItems: 20 }), handle: Type.Optional(Handle) },
    { additionalProperties: false },
  ),
  AuthenticationFailed_v1: Type.Object(
    {
      event_name: name('AuthenticationFailed_v1'),
      failed_authn_method: Method,
      failure_reason: Type.String({ minLength: 1, maxLength: 200 }),
      authenticated_methods: Type.Optional(Type.Array(Method, { maxItems: 20 })),
      person_id: Type.Optional(PersonId),
      handle: Type.Optional(Handle),
      failure_detail: Type.Optional(Text(2000)),
      challenge_id: Type.Optional(Text(200)),
    },
    { additionalProperties: false },
  ),
};

export const SdkEventBody = Type.Object(
  {
    organization_id: Type.String({ minLength: 1, maxLength: 64, description: 'the organization the event belongs to' }),
    analytics_correlation_id: Type.String({ pattern: UUID, description: 'one UUID per browser tab session' }),
    window_location: Type.Optional(Text(8192)),
    user_agent: Type.Optional(Text(1024)),
    event_data: Type.Object(
      { event_name: Type.Union(SDK_EVENT_NAMES.map((n) => Type.Literal(n))) },
      { additionalProperties: true, description: 'event_name and that event\'s fields (see SDK.md §1.1)' },
    ),
  },
  { additionalProperties: false },
);
export type SdkEventBody = Static<typeof SdkEventBody>;

/** What the request adds: the caller's address, its User-Agent header and the Service-SdkVersion header. */
export interface SdkRequestFacts {
  client_ip_address: string;
  user_agent: string;
  sdk_version: string;
}

const eventHandle = (h: HandleValue) => ({ type: handleTypeEnum(h.type), value: h.value });

/**
 * The seed's message for a validated body: analytics_metadata from the body's correlation id and the
 * caller's address, browser_metadata from the body (its user agent, else the header's) and the SDK version
 * header, then the event's own fields. The person's region is looked up by the domain.
 */
export function enrichSdkEvent(body: SdkEventBody, data: Record<string, unknown>, facts: SdkRequestFacts): SdkEventInput {
  const eventName = body.event_data.event_name;
  const out: Record<string, unknown> = {
    analytics_metadata: { analytics_correlation_id: body.analytics_correlation_id, client_ip_address: facts.client_ip_address },
    browser_metadata: { user_agent: body.user_agent || facts.user_agent, window_location: body.window_location ?? '', service_sdk_version: facts.sdk_version },
  };
  const personId = typeof data['person_id'] === 'string' ? data['person_id'] : undefined;
  switch (eventName) {
    case 'AuthenticationSucceeded_v1':
      out['success_authn_method'] = data['success_authn_method'];
      out['authenticated_methods'] = data['authenticated_methods'];
      if (data['handle'] !== undefined) out['handle'] = eventHandle(data['handle'] as HandleValue);
      break;
    case 'AuthenticationFailed_v1':
      if (data['authenticated_methods'] !== undefined) out['authenticated_methods'] = data['authenticated_methods'];
      out['failed_authn_method'] = data['failed_authn_method'];
      out['failure_reason'] = data['failure_reason'];
      if (data['failure_detail'] !== undefined) out['failure_detail'] = data['failure_detail'];
      if (data['handle'] !== undefined) out['handle'] = eventHandle(data['handle'] as HandleValue);
      break;
    default:
      break;
  }
  return { name: eventName, body: out, ...(personId !== undefined && { person_id: personId }) };
}
