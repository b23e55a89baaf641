// Schemas shared by several routes.
import { Type } from '@sinclair/typebox';
import { GROUP_NAME_MAX } from '../domain/rules.js';

export const HandleType = Type.Union([Type.Literal('email_address'), Type.Literal('phone_number'), Type.Literal('username')]);
export const Handle = Type.Object({ type: HandleType, value: Type.String({ minLength: 1, maxLength: 320 }) }, { additionalProperties: false });
export const Region = Type.String({ description: 'one of the configured regions: us-iowa, europe-belgium, asia-japan, europe-england, australia-sydney' });
export const GroupName = Type.String({ maxLength: GROUP_NAME_MAX, description: 'group name: 2-100 characters, ^[A-Za-z0-9]{1}[\\w\\.\\-]*[A-Za-z0-9]$' });
export const AttributeSet = Type.Record(Type.String(), Type.Unknown(), { description: 'attribute name (at most 70 bytes of UTF-8) → any JSON value (at most 64 KiB as JSON)' });

export const PersonRet = Type.Object({
  person_id: Type.String(),
  active: Type.Boolean(),
  person_type: Type.Union([Type.Literal('regular'), Type.Literal('anonymous')]),
  region: Type.String(),
  handles: Type.Array(Handle),
  groups: Type.Array(Type.String()),
});

export const Strings = Type.Array(Type.String());

/** A query parameter holding a comma-separated list. */
export const CommaList = (description: string) => Type.Optional(Type.String({ description }));

export function splitList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value.split(',').map((s) => s.trim()).filter((s) => s !== '');
}


/** A first factor's answer: the identity token, or, for a person who holds a second factor, a challenge. */
export const SignInOutcome = Type.Union([
  Type.Object({ token: Type.String({ description: 'the identity token (JWT)' }) }),
  Type.Object(
    {
      second_factor: Type.Object({
        challenge: Type.String({ description: 'answered at /authenticate/<method> with one of `methods`' }),
        methods: Type.Array(Type.String(), { description: "the second factors the person holds, e.g. ['totp']" }),
        expires_in: Type.Integer({ description: 'seconds the challenge may be answered' }),
      }),
    },
    { description: 'the person holds a second factor: no token yet' },
  ),
]);
