// The organization's token template: a Mustache template over the person that renders the JSON object of
// extra claims every identity token of the organization carries; checked when set, parsed once per
// organization, rendered in the issuing pipeline's claims step.
import Mustache from 'mustache';
import { badRequest } from '../errors.js';
import { BUCKETS } from '../domain/rules.js';
import type { Person } from '../domain/state.js';
import { jsonErrorOffset } from './json-error.js';
import { CUSTOM_CLAIMS_MAX_BYTES, reservedClaim, withoutReservedClaims } from './claims.js';

/** A template's own size; what it renders is held to CUSTOM_CLAIMS_MAX_BYTES like the API's custom claims. */
export const TOKEN_TEMPLATE_MAX_BYTES = 16 * 1024;

/** Buckets an end user may read: only these reach a token, which the person themselves can read. */
const READABLE_BUCKETS: readonly string[] = BUCKETS.filter((b) => b.end_user_permissions !== 'no_access').map((b) => b.name);

type Tokens = ReturnType<typeof Mustache.parse>;

/**
 * Values are written as JSON, never as HTML, and for where they land. Inside a string of the template
 * (`"{{person.person_id}}"`) a value is JSON-escaped without its quotes: a string as it is, anything else
 * (an object an end user stored in a writable bucket) as its JSON text. Outside a string an array, object,
 * number or boolean is written as its JSON text (`{{person.groups}}`). So no value can end the string it is
 * written into or break the template's JSON.
 */
const escapedInString = (value: unknown): string => JSON.stringify(typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null')).slice(1, -1);
const escapedOutside = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value).slice(1, -1) : (JSON.stringify(value) ?? 'null'));

/** Where the JSON written so far stands: outside a string, inside one, or inside one just after a backslash. */
const OUTSIDE = 0;
const IN_STRING = 1;
const ESCAPING = 2;
type JsonPlace = typeof OUTSIDE | typeof IN_STRING | typeof ESCAPING;

function placeAfter(text: string, from: JsonPlace): JsonPlace {
  let place = from;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (place === ESCAPING) place = IN_STRING;
    else if (c === 0x5c) place = place === IN_STRING ? ESCAPING : place;
    else if (c === 0x22) place = place === IN_STRING ? OUTSIDE : IN_STRING;
  }
  return place;
}

/** A text token's place after it, per place before it: worked out once, as the parsed template lives per organization. */
const textMoves = new WeakMap<string[], Array<JsonPlace | undefined>>();

/**
 * Mustache's writer, knowing whether the JSON written so far leaves a string open. It writes tokens in the
 * order they appear in the output (sections' bodies included), so the template's text moves that place, and
 * each value is escaped for where it lands. Rendering is synchronous: one writer serves every render.
 */
class JsonWriter extends Mustache.Writer {
  private place: JsonPlace = OUTSIDE;

  renderJson(tokens: Tokens, content: string, view: Record<string, unknown>): string {
    this.place = OUTSIDE;
    return this.renderTokens(tokens as string[][], new Mustache.Context(view), undefined, content);
  }

  override rawValue(token: string[]): string {
    const text = token[1] as string;
    let moves = textMoves.get(token);
    if (moves === undefined) textMoves.set(token, (moves = []));
    this.place = moves[this.place] ??= placeAfter(text, this.place);
    return text;
  }

  override escapedValue(token: string[], context: Mustache.Context): string {
    const value: unknown = context.lookup(token[1] as string);
    if (value === null || value === undefined) return '';
    // A backslash just before would take the value's first character as its escape.
    if (this.place === ESCAPING) throw new Error(`the value of "${token[1]}" follows a backslash inside a string`);
    return this.place === IN_STRING ? escapedInString(value) : escapedOutside(value);
  }
}

// Mustache's template cache off: the cache below holds one parsed template per organization, where
// Mustache's would keep every template ever seen.
const writer = new JsonWriter();
(writer as unknown as { templateCache?: unknown }).templateCache = undefined;

/** What a template sees: `person` and `organization`. */
export function templateView(orgId: string, orgName: string, person: Pick<Person, 'person_id' | 'region' | 'handles' | 'groups' | 'attributes'>): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const bucket of READABLE_BUCKETS) attributes[bucket] = person.attributes[bucket] ?? {};
  return {
    person: {
      person_id: person.person_id,
      region: person.region,
      handles: person.handles.map((h) => ({ type: h.type, value: h.value })),
      groups: [...person.groups],
      attributes,
    },
    organization: { id: orgId, name: orgName },
  };
}

/** Tags that would write a value unescaped ({{{x}}}, {{&x}}) or a partial, which there are none of. */
function checkTags(tokens: Tokens): void {
  for (const token of tokens) {
    const [type, name] = token;
    if (type === '&') throw badRequest(`content: the tag for "${name}" writes its value unescaped ({{{…}}} or {{&…}}), which could break the JSON; use {{${name}}}, which writes it JSON-escaped`);
    if (type === '>') throw badRequest(`content: partials are not available ("{{> ${name}}}")`);
    const children = token[4];
    if (Array.isArray(children)) checkTags(children as Tokens);
  }
}

function parse(content: string): Tokens {
  try {
    return writer.parse(content) as Tokens;
  } catch (error) {
    throw badRequest(`content: not a Mustache template: ${(error as Error).message}`);
  }
}

/** The 1-based line of `position` in `text`. */
function lineOf(text: string, position: number): number {
  let line = 1;
  for (let i = 0; i < position && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function render(tokens: Tokens, content: string, view: Record<string, unknown>): string {
  return writer.renderJson(tokens, content, view);
}

/** The claims a rendering gives, or why not: invalid JSON (with its line), not an object, too large. */
function claimsOf(rendered: string): { claims: Record<string, unknown> } | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rendered);
  } catch (error) {
    const offset = jsonErrorOffset(rendered);
    const where = offset < 0 ? '' : ` at line ${lineOf(rendered, offset)}`;
    return { problem: `renders invalid JSON${where}: ${(error as Error).message}` };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { problem: 'renders JSON that is not an object' };
  const bytes = Buffer.byteLength(rendered, 'utf8');
  if (bytes > CUSTOM_CLAIMS_MAX_BYTES) return { problem: `renders ${bytes} bytes; at most ${CUSTOM_CLAIMS_MAX_BYTES} are allowed` };
  return { claims: parsed as Record<string, unknown> };
}

/** Two sample persons a template must render valid JSON for: one with everything a person may have, one with nothing. */
function samplePersons(): Array<{ label: string; person: Parameters<typeof templateView>[2] }> {
  const attributes: Person['attributes'] = {};
  for (const bucket of READABLE_BUCKETS) attributes[bucket] = { sample: 'value' };
  return [
    {
      label: 'a sample person with handles, groups and attributes',
      person: {
        person_id: 'pid:sample',
        region: 'us-iso',
        handles: [{ type: 'email_address', value: 'sample"person@example.com' }, { type: 'phone_number', value: '+15550100' }],
        groups: ['sample-group', 'other-group'],
        attributes,
      },
    },
    { label: 'a sample person with one handle and no groups or attributes', person: { person_id: 'pid:sample', region: 'us-iso', handles: [{ type: 'username', value: 'sample' }], groups: [], attributes: {} } },
  ];
}

/**
 * Checks a template before it is stored (400s naming the problem): its size, its syntax, no unescaped tags
 * or partials, valid JSON of an object for both sample persons (the line named), and no reserved claim name
 * among the names it renders. A name that only a real person's data produces is dropped when rendered.
 */
export function checkTokenTemplate(content: string, orgId: string, orgName: string, groupsClaimName: string): void {
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > TOKEN_TEMPLATE_MAX_BYTES) throw badRequest(`content: ${bytes} bytes; at most ${TOKEN_TEMPLATE_MAX_BYTES} are allowed`);
  const tokens = parse(content);
  checkTags(tokens);
  for (const { label, person } of samplePersons()) {
    let rendered: string;
    try {
      rendered = render(tokens, content, templateView(orgId, orgName, person));
    } catch (error) {
      throw badRequest(`content: the template does not render for ${label}: ${(error as Error).message}`);
    }
    const out = claimsOf(rendered);
    if ('problem' in out) throw badRequest(`content: the template ${out.problem} (rendered for ${label})`);
    for (const name of Object.keys(out.claims)) {
      if (reservedClaim(name, groupsClaimName)) throw badRequest(`content: "${name}" is a reserved claim name and cannot be set by the token template`);
    }
  }
}

/** What rendering needs of an organization. */
export interface TemplateOrg {
  readonly id: string;
  readonly state: { readonly org_name: string; readonly token_template: string };
}

export interface TokenTemplates {
  /**
   * The template's claims for the person, reserved names dropped; undefined when the organization has no
   * template (one string comparison, nothing else) or when rendering fails, which is warned about and
   * leaves the token without them.
   */
  claims(org: TemplateOrg, person: Parameters<typeof templateView>[2], groupsClaimName: string): Record<string, unknown> | undefined;
}

export function createTokenTemplates(warn: (message: string) => void): TokenTemplates {
  // organization id → its template, parsed; replaced when the organization's template changes.
  const parsed = new Map<string, { content: string; tokens: Tokens }>();
  return {
    claims(org, person, groupsClaimName) {
      const content = org.state.token_template;
      if (content === '') return undefined;
      let entry = parsed.get(org.id);
      try {
        if (entry?.content !== content) {
          entry = { content, tokens: writer.parse(content) as Tokens };
          parsed.set(org.id, entry);
        }
        const out = claimsOf(render(entry.tokens, content, templateView(org.id, org.state.org_name, person)));
        if ('problem' in out) throw new Error(`the template ${out.problem}`);
        return withoutReservedClaims(out.claims, groupsClaimName);
      } catch (error) {
        // The sign-in goes on without the template's claims rather than fail on the organization's template;
        // the operator learns of it here (no person data in the message).
        warn(`organization ${org.id}: token template not applied to a token of person ${person.person_id}: ${(error as Error).message}`);
        return undefined;
      }
    },
  };
}
