// POST /actions/sdk: the browser SDK's analytics events, without credentials, enriched and logged like any event.
import { Type } from '@sinclair/typebox';
import { ServiceError, notFound } from '../../errors.js';
import { createRateLimit, retryAfter } from '../../browser/rate.js';
import { enrichSdkEvent, SDK_BODY_LIMIT, SDK_EVENT_DATA, SdkEventBody, type SdkEventName } from '../../browser/sdk-events.js';
import type { Clock } from '../../lib/clock.js';
import { loadClientSource, loadWebauthnSource } from '../../browser/client.js';
import type { TokenValidator } from '../../tokens/validate.js';
import { route, type Route } from '../route.js';
import { compileValidator, type Validator } from '../validate.js';
import type { HandlerDeps } from './deps.js';

export interface SdkDeps {
  handlers: HandlerDeps;
  clock: Pick<Clock, 'nowMs'>;
  validator: Pick<TokenValidator, 'identify'>;
  rate: { windowMs: number; perIp: number; perOrg: number };
}

const tooMany = (what: string, ms: number) => new ServiceError('ERR_TOO_MANY_REQUESTS', `too many SDK events ${what}; retry later`, { headers: retryAfter(ms) });

export function sdkRoutes(deps: SdkDeps): Route[] {
  const { handlers, clock, validator } = deps;
  const perIp = createRateLimit({ windowMs: deps.rate.windowMs, limit: deps.rate.perIp });
  const perOrg = createRateLimit({ windowMs: deps.rate.windowMs, limit: deps.rate.perOrg });
  const eventData = Object.fromEntries(Object.entries(SDK_EVENT_DATA).map(([n, schema]) => [n, compileValidator(Type.Object({ event_data: schema }), 'body', false)])) as Record<SdkEventName, Validator>;

  /** An identity token sent along must be valid for the organization and name the event's person. */
  async function checkBearer(authorization: string, orgId: string, personId: string | undefined): Promise<void> {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match) throw new ServiceError('ERR_UNAUTHORIZED', 'Authorization: must be Bearer and an identity token');
    const identified = await validator.identify(match[1] as string);
    if (!('org' in identified) || identified.org !== orgId) throw new ServiceError('ERR_UNAUTHORIZED', 'Authorization: not a valid identity token of this organization');
    if (personId !== undefined && identified.person_id !== personId) throw new ServiceError('ERR_UNAUTHORIZED', 'Authorization: the token is not the person_id of the event');
  }

  const client = loadClientSource();
  const webauthn = loadWebauthnSource();
  return [
    route({
      method: 'get',
      path: '/sdk/webauthn.js',
      summary: "@simplewebauthn/browser as an ES module: the browser client's passkey ceremonies",
      tag: 'browser',
      auth: 'none',
      cors: false,
      success: { status: 200, description: 'text/javascript' },
      handler: () => ({ status: 200, text: webauthn, contentType: 'text/javascript; charset=utf-8', headers: { 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-cache' } }),
    }),
    route({
      method: 'get',
      path: '/sdk/service-sdk.js',
      summary: 'The browser client: an ES module without dependencies (ServiceSDK)',
      tag: 'browser',
      auth: 'none',
      // Any page may load the module (a module script is fetched in CORS mode); what it calls is CORS-checked.
      cors: false,
      success: { status: 200, description: 'text/javascript' },
      handler: () => ({ status: 200, text: client, contentType: 'text/javascript; charset=utf-8', headers: { 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-cache' } }),
    }),
    route<SdkEventBody>({
      method: 'post',
      path: '/actions/sdk',
      summary: "Record an event the browser SDK reports (source SDK), enriched with the caller's address, the SDK version and the person's region",
      tag: 'browser',
      auth: 'none',
      cors: true,
      client: true,
      headers: ['authorization', 'service-sdkversion'],
      body: SdkEventBody,
      bodyLimit: SDK_BODY_LIMIT,
      success: { status: 204 },
      errors: [400, 401, 404, 413, 429],
      handler: async (req) => {
        const now = clock.nowMs();
        const ipWait = perIp.take(req.ip, now);
        if (ipWait > 0) throw tooMany('from this address', ipWait);
        // Checked inside a body of its own, so that a problem is named event_data.<field>.
        const data = (eventData[req.body.event_data.event_name]({ event_data: req.body.event_data }) as { event_data: Record<string, unknown> }).event_data;
        const org = handlers.registry.get(req.body.organization_id);
        if (!org) throw notFound(`organization_id: organization ${req.body.organization_id} not found`);
        const orgWait = perOrg.take(org.id, now);
        if (orgWait > 0) throw tooMany('for this organization', orgWait);
        const event = enrichSdkEvent(req.body, data, { client_ip_address: req.ip, user_agent: req.userAgent, sdk_version: req.headers['service-sdkversion'] ?? '' });
        const authorization = req.headers['authorization'];
        if (authorization !== undefined) await checkBearer(authorization, org.id, event.person_id);
        const outcome = await org.execute<null>({ kind: 'RecordSdkEvent', event });
        await handlers.consistency.wait(org.id, outcome.offset, req.consistency);
        return { status: 204 };
      },
    }),
  ];
}
