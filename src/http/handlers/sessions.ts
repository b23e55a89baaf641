// A person's sign-in sessions: the organization lists and ends them (API key); the person lists and ends their
// own with their identity token, and signs out with it (the token revoked, and its session ended if it has one).
import { Type } from '@sinclair/typebox';
import { requirePerson } from '../../domain/lookup.js';
import { sessionsOf, sessionView, type SessionEndReason } from '../../domain/sessions.js';
import type { Clock } from '../../lib/clock.js';
import type { Authenticator } from '../auth.js';
import { route, type Request, type Route } from '../route.js';
import { execute, type HandlerDeps } from './deps.js';

const Session = Type.Object({
  session_id: Type.String(),
  person_id: Type.String(),
  methods: Type.Array(Type.String(), { description: 'how the person signed in, e.g. ["password"]' }),
  clients: Type.Array(Type.String(), { description: 'client_ids of the OAuth clients that received tokens in the session' }),
  created_at: Type.String(),
  last_used_at: Type.String({ description: 'when a client last received tokens in it' }),
  expires_at: Type.String({ description: 'when it ends by itself: its sign-in and every refresh token begun in it expired' }),
  ip_address: Type.String(),
  user_agent: Type.String(),
});
const Sessions = Type.Array(Session);

const WRITE_ERRORS = [400, 401, 403, 404, 408];
const READ_ERRORS = [400, 401, 403, 404];

export function sessionRoutes(deps: HandlerDeps, personAuth: Authenticator, clock: Pick<Clock, 'nowMs'>): Route[] {
  const nowMs = () => clock.nowMs();
  const list = (req: Request<unknown, unknown>, personId: string) => {
    requirePerson(req.org.state, personId);
    return { status: 200, result: sessionsOf(req.org.state, personId, nowMs()).map(sessionView) };
  };
  const end = async (req: Request<unknown, unknown>, personId: string, reason: SessionEndReason) => {
    await execute(deps, req, { kind: 'EndSession', person_id: personId, session_id: req.params['session_id'] as string, reason });
    return { status: 204 };
  };
  const own = (req: Request<unknown, unknown>) => (req.principal as { person_id: string }).person_id;
  const person = { tag: 'sessions', auth: personAuth, cors: true } as const;
  return [
    route({
      method: 'get',
      path: '/persons/{person_id}/sessions',
      summary: "A person's sign-in sessions, newest first",
      tag: 'sessions',
      auth: 'key',
      success: { status: 200, result: Sessions },
      errors: READ_ERRORS,
      handler: (req) => list(req, req.params['person_id'] as string),
    }),
    route({
      method: 'delete',
      path: '/persons/{person_id}/sessions/{session_id}',
      summary: "End a person's session: its refresh, access and ID tokens stop, and its clients are told by back-channel logout",
      tag: 'sessions',
      auth: 'key',
      success: { status: 204 },
      errors: WRITE_ERRORS,
      handler: (req) => end(req, req.params['person_id'] as string, 'organization'),
    }),
    route({
      ...person,
      method: 'get',
      path: '/sessions',
      summary: "The calling person's own sign-in sessions, newest first",
      success: { status: 200, result: Sessions },
      errors: [401, 404],
      handler: (req) => list(req, own(req)),
    }),
    route({
      ...person,
      method: 'delete',
      path: '/sessions/{session_id}',
      summary: "End one of the calling person's own sessions (a lost device)",
      success: { status: 204 },
      errors: [401, 404, 408],
      handler: (req) => end(req, own(req), 'person'),
    }),
    route({
      ...person,
      method: 'delete',
      path: '/session',
      summary: 'Sign out: the presented identity token is revoked, and the session it belongs to (its sid) ended',
      success: { status: 204 },
      errors: [401, 408],
      handler: async (req) => {
        const claims = (req.principal as { claims: Record<string, unknown> }).claims;
        const { jti, exp, sid } = claims;
        if (typeof jti !== 'string') return { status: 204 };
        await execute(deps, req, { kind: 'EndSessionOf', person_id: own(req), jti, ...(typeof sid === 'string' && { grant_id: sid }) });
        if (typeof exp === 'number') await execute(deps, req, { kind: 'RevokeIdentityToken', jti, exp });
        return { status: 204 };
      },
    }),
  ];
}
