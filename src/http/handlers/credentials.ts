// A person's credentials, as the original's routes have them: list, import a password hash, remove, rotate
// to a fresh password shown once, and start a password reset by mail. No answer carries a hash.
import { randomBytes } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { checkImportedHash, type PasswordHasher } from '../../auth/password-hash.js';
import type { PasswordResets } from '../../auth/password-reset.js';
import { exportedCredentials, type ExportedCredential } from '../../domain/credentials.js';
import { requirePerson } from '../../domain/lookup.js';
import type { Handle as HandleValue } from '../../domain/state.js';
import { badRequest } from '../../errors.js';
import { route, type Route } from '../route.js';
import { Handle } from '../schemas.js';
import { execute, type HandlerDeps } from './deps.js';

const Credential = Type.Object({
  id: Type.String(),
  type: Type.Literal('password'),
  params: Type.Object({ algorithm: Type.String({ description: 'the hashing algorithm (scrypt, or an imported hash not yet replaced: bcrypt, pbkdf2, argon2i, argon2id); the hash itself is never returned' }) }),
});

/**
 * The original's body; only password credentials exist here, given as a hash: this service's scrypt form, or
 * bcrypt, pbkdf2 or argon2 from another system (re-hashed to scrypt at the person's first sign-in).
 */
const CredentialBody = Type.Object(
  {
    type: Type.String({ description: 'password (public-key and totp are not supported)' }),
    params: Type.Object({ password_hash: Type.Optional(Type.String({ maxLength: 512 })) }, { additionalProperties: true }),
    label: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

const ResetBody = Type.Object({ reset_handle: Type.Optional(Handle), force_change: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

/** 24 random bytes: 192 bits, 32 characters of base64url. */
const freshPassword = () => randomBytes(24).toString('base64url');

export function credentialRoutes(deps: HandlerDeps, auth: { passwords: PasswordHasher; resets: PasswordResets }): Route[] {
  const personOf = (params: Record<string, string>) => params['person_id'] as string;
  return [
    route({
      method: 'get',
      path: '/persons/{person_id}/credentials',
      summary: "A person's credentials (a password today), without any hash",
      tag: 'authentication',
      auth: 'key',
      success: { status: 200, result: Type.Array(Credential) },
      errors: [400, 401, 403, 404],
      handler: (req) => ({ status: 200, result: exportedCredentials(requirePerson(req.org.state, personOf(req.params))) }),
    }),
    route<Static<typeof CredentialBody>>({
      method: 'post',
      path: '/persons/{person_id}/credentials',
      summary: 'Import a password credential as its hash: scrypt, bcrypt, pbkdf2-sha256/sha512, argon2i or argon2id, each under its cost ceiling (emits PasswordChanged, initiated by AdminAPI); a person holds one password',
      tag: 'authentication',
      auth: 'key',
      body: CredentialBody,
      success: { status: 201, result: Credential },
      errors: [400, 401, 403, 404, 408, 409],
      handler: async (req) => {
        if (req.body.type !== 'password') throw badRequest(`type: only password credentials can be added, not ${JSON.stringify(req.body.type.slice(0, 32))}`);
        const hash = req.body.params.password_hash;
        if (hash === undefined) throw badRequest('params.password_hash: required for a password credential');
        checkImportedHash(hash, 'params.password_hash');
        const credential = await execute<ExportedCredential>(deps, req, { kind: 'AddPasswordCredential', person_id: personOf(req.params), password_hash: hash });
        return { status: 201, result: credential };
      },
    }),
    route({
      method: 'delete',
      path: '/persons/{person_id}/credentials',
      summary: "Remove all of a person's credentials",
      tag: 'authentication',
      auth: 'key',
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps, req, { kind: 'RemoveCredentials', person_id: personOf(req.params) });
        return { status: 204 };
      },
    }),
    route({
      method: 'delete',
      path: '/persons/{person_id}/credentials/{credential_id}',
      summary: 'Remove one credential of a person',
      tag: 'authentication',
      auth: 'key',
      success: { status: 204 },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        await execute(deps, req, { kind: 'RemoveCredentials', person_id: personOf(req.params), credential_id: req.params['credential_id'] as string });
        return { status: 204 };
      },
    }),
    route({
      method: 'post',
      path: '/persons/{person_id}/credentials/password-rotate',
      summary: 'Replace the password with a fresh random one, answered once (emits PasswordChanged, initiated by AdminAPI)',
      tag: 'authentication',
      auth: 'key',
      success: { status: 200, result: Type.Object({ new_password: Type.String() }) },
      errors: [400, 401, 403, 404, 408],
      handler: async (req) => {
        const personId = personOf(req.params);
        requirePerson(req.org.state, personId);
        const password = freshPassword();
        await execute(deps, req, { kind: 'SetPassword', person_id: personId, password_hash: await auth.passwords.hash(password) });
        return { status: 200, result: { new_password: password }, headers: { 'Cache-Control': 'no-store' } };
      },
    }),
    route<Static<typeof ResetBody> | undefined>({
      method: 'post',
      path: '/persons/{person_id}/credentials/password-reset',
      summary: "Mail a single-use, expiring password-reset link to one of the person's email handles (the organization's email_password_reset template); force_change removes the current password first",
      tag: 'authentication',
      auth: 'key',
      body: ResetBody,
      bodyOptional: true,
      success: { status: 202 },
      errors: [400, 401, 403, 404, 408, 502],
      handler: async (req) => {
        const body = req.body ?? {};
        const offset = await auth.resets.start(req.org, personOf(req.params), {
          ...(body.reset_handle !== undefined && { reset_handle: body.reset_handle as HandleValue }),
          ...(body.force_change !== undefined && { force_change: body.force_change }),
        });
        if (offset > 0) await deps.consistency.wait(req.org.id, offset, req.consistency);
        return { status: 202 };
      },
    }),
  ];
}
