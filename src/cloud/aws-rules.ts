// Our own validation of AWS IAM role changes, made before anything reaches the provider: IAM's documented
// limits for names, paths, descriptions, durations, tags, ARNs and policy documents. moto accepts much that
// AWS refuses (CLOUD.md §2), so the provider's own checks are never relied on.
import { badRequest, quote } from '../errors.js';

const NAME = /^[\w+=,.@-]+$/;
const PATH = /^\/(?:[\x21-\x7e]*\/)?$/;
const DESCRIPTION = /^[\t\n\r\x20-\x7e\u00a1-\u00ff]*$/;
const POLICY_ARN = /^arn:aws(?:-[a-z]+)*:iam::(?:\d{12}|aws):policy\/[\x21-\x7e]{1,512}$/;
const TAG_TEXT = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;

export const MAX_SESSION_MIN = 3600;
export const MAX_SESSION_MAX = 43200;
/** IAM quotas: a trust policy at most 2048 characters (the default), a role's inline policies 10,240 together. */
const TRUST_MAX = 2048;
const INLINE_TOTAL_MAX = 10240;
const MANAGED_MAX = 20;
const TAGS_MAX = 50;

export function checkRoleName(name: string): void {
  if (name.length < 1 || name.length > 64 || !NAME.test(name)) throw badRequest(`role_name: ${quote(name)} must be 1 to 64 characters of letters, digits and +=,.@_-`);
}

export function checkRolePath(path: string): void {
  if (path.length > 512 || !PATH.test(path)) throw badRequest(`path: ${quote(path)} must start and end with / and hold printable ASCII, at most 512 characters`);
}

export function checkDescription(text: string): void {
  if (text.length > 1000 || !DESCRIPTION.test(text)) throw badRequest('description: at most 1000 characters, printable Latin-1');
}

export function checkMaxSessionDuration(seconds: number): void {
  if (!Number.isInteger(seconds) || seconds < MAX_SESSION_MIN || seconds > MAX_SESSION_MAX) {
    throw badRequest(`max_session_duration: ${seconds} must be a whole number of seconds from ${MAX_SESSION_MIN} to ${MAX_SESSION_MAX}`);
  }
}

export function checkPolicyArn(arn: string, field: string): void {
  if (!POLICY_ARN.test(arn)) throw badRequest(`${field}: ${quote(arn)} is not an IAM policy ARN (arn:aws:iam::<account or aws>:policy/<name>)`);
}

export function checkPolicyName(name: string, field: string): void {
  if (name.length < 1 || name.length > 128 || !NAME.test(name)) throw badRequest(`${field}: ${quote(name)} must be 1 to 128 characters of letters, digits and +=,.@_-`);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * An IAM policy document: a JSON object whose Statement is one statement or a non-empty list, each with
 * Effect Allow or Deny and an Action or NotAction; a trust policy's statements also name a Principal.
 */
export function checkPolicyDocument(text: string, field: string, trust: boolean): void {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw badRequest(`${field}: not valid JSON`);
  }
  if (!isObject(doc)) throw badRequest(`${field}: a policy document is a JSON object`);
  if (doc['Version'] !== undefined && doc['Version'] !== '2012-10-17' && doc['Version'] !== '2008-10-17') throw badRequest(`${field}: Version must be 2012-10-17 or 2008-10-17`);
  const raw = doc['Statement'];
  const statements = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  if (statements.length === 0) throw badRequest(`${field}: Statement is missing or empty`);
  for (const [i, s] of statements.entries()) {
    if (!isObject(s)) throw badRequest(`${field}: Statement[${i}] is not an object`);
    if (s['Effect'] !== 'Allow' && s['Effect'] !== 'Deny') throw badRequest(`${field}: Statement[${i}].Effect must be Allow or Deny`);
    if (s['Action'] === undefined && s['NotAction'] === undefined) throw badRequest(`${field}: Statement[${i}] needs Action or NotAction`);
    if (trust && s['Principal'] === undefined && s['NotPrincipal'] === undefined) throw badRequest(`${field}: Statement[${i}] of a trust policy needs a Principal`);
    if (!trust && (s['Principal'] !== undefined || s['NotPrincipal'] !== undefined)) throw badRequest(`${field}: Statement[${i}]: an identity policy has no Principal`);
    if (!trust && s['Resource'] === undefined && s['NotResource'] === undefined) throw badRequest(`${field}: Statement[${i}] needs Resource or NotResource`);
  }
  if (trust && text.length > TRUST_MAX) throw badRequest(`${field}: at most ${TRUST_MAX} characters`);
}

export interface InlinePolicy {
  policy_name: string;
  policy_document: string;
}

export function checkInlinePolicies(policies: readonly InlinePolicy[], field: string): void {
  const names = new Set<string>();
  let total = 0;
  for (const [i, p] of policies.entries()) {
    checkPolicyName(p.policy_name, `${field}[${i}].policy_name`);
    if (names.has(p.policy_name)) throw badRequest(`${field}: policy_name ${quote(p.policy_name)} given twice`);
    names.add(p.policy_name);
    checkPolicyDocument(p.policy_document, `${field}[${i}].policy_document`, false);
    // IAM counts the document without its white space.
    total += p.policy_document.replace(/\s+/g, '').length;
  }
  if (total > INLINE_TOTAL_MAX) throw badRequest(`${field}: the inline policies of a role hold at most ${INLINE_TOTAL_MAX} characters together`);
}

export function checkManagedPolicies(arns: readonly string[], field: string): void {
  if (arns.length > MANAGED_MAX) throw badRequest(`${field}: at most ${MANAGED_MAX} managed policies per role`);
  if (new Set(arns).size !== arns.length) throw badRequest(`${field}: a policy ARN is given twice`);
  for (const [i, arn] of arns.entries()) checkPolicyArn(arn, `${field}[${i}]`);
}

export function checkTags(tags: ReadonlyArray<{ key: string; value: string }>): void {
  if (tags.length > TAGS_MAX) throw badRequest(`tags: at most ${TAGS_MAX}`);
  const keys = new Set<string>();
  for (const [i, t] of tags.entries()) {
    if (t.key.length < 1 || t.key.length > 128 || !TAG_TEXT.test(t.key)) throw badRequest(`tags[${i}].key: 1 to 128 letters, digits, spaces and _.:/=+-@`);
    if (t.key.toLowerCase().startsWith('aws:')) throw badRequest(`tags[${i}].key: the aws: prefix is reserved`);
    if (t.value.length > 256 || !TAG_TEXT.test(t.value)) throw badRequest(`tags[${i}].value: at most 256 letters, digits, spaces and _.:/=+-@`);
    const k = t.key.toLowerCase();
    if (keys.has(k)) throw badRequest(`tags: key ${quote(t.key)} given twice (keys compare case-insensitively)`);
    keys.add(k);
  }
}
