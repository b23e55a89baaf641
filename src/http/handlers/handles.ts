// A person's handles, as the original's drop-in operations have them: add several, list, remove one.
import { Type } from '@sinclair/typebox';
import { badRequest } from '../../errors.js';
import { MAX_PERSON_HANDLES } from '../../domain/persons.js';
import { requirePerson } from '../../domain/lookup.js';
import { HANDLE_TYPES, type Handle as HandleValue, type HandleType } from '../../domain/state.js';
import { route, type Route } from '../route.js';
import { Handle } from '../schemas.js';
import { execute, type HandlerDeps } from './deps.js';

/** The original's body: a bare array of handles. */
const HandlesBody = Type.Array(Handle, { minItems: 1, maxItems: MAX_PERSON_HANDLES });

/** The path form of a handle, the original's: `type:value`, percent-encoded (the front decodes it). */
function parseHandleParam(raw: string): HandleValue {
  const at = raw.indexOf(':');
  const type = raw.slice(0, at) as HandleType;
  if (at < 0 || !HANDLE_TYPES.includes(type)) throw badRequest(`handle: must be type:value, percent-encoded, with type one of ${HANDLE_TYPES.join(', ')}`);
  return { type, value: raw.slice(at + 1) };
}

export function handleRoutes(deps: HandlerDeps): Route[] {
  return [
    route<HandleValue[]>({
      method: 'post',
      path: '/persons/{person_id}/handles',
      summary: 'Add handles to a person (those it holds already are left alone)',
      tag: 'persons',
      auth: 'key',
      body: HandlesBody,
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408, 409],
      handler: async (req) => {
        await execute(deps, req, { kind: 'AddPersonHandles', person_id: req.params['person_id'] as string, handles: req.body });
        return { status: 204 };
      },
    }),
    route({
      method: 'get',
      path: '/persons/{person_id}/handles',
      summary: "A person's handles",
      tag: 'persons',
      auth: 'key',
      success: { status: 200, result: Type.Array(Handle) },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: requirePerson(req.org.state, req.params['person_id'] as string).handles.map((h) => ({ type: h.type, value: h.value })) }),
    }),
    route({
      method: 'delete',
      path: '/persons/{person_id}/handles/{handle}',
      summary: 'Remove a handle from a person ({handle}: type:value, percent-encoded); a person with a password keeps its last one',
      tag: 'persons',
      auth: 'key',
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408, 409],
      handler: async (req) => {
        const handle = parseHandleParam(req.params['handle'] as string);
        await execute(deps, req, { kind: 'RemovePersonHandle', person_id: req.params['person_id'] as string, handle });
        return { status: 204 };
      },
    }),
  ];
}
