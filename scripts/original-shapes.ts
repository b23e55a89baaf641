// Extracts the field shapes of the original's public OpenAPI document into test/fixtures/original-openapi.json:
// per operation (method and path template) its request body and each success response's schema, $refs resolved,
// descriptions and examples dropped. Tests check our answers against these shapes; the document itself
// cannot be fetched at test time.
//   npx tsx scripts/original-shapes.ts <slashid-api-openapi.yml> [source label]
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';

const [file, source = 'api-evangelist/slashid openapi/_original/slashid-api-openapi.yml'] = process.argv.slice(2);
if (!file) {
  console.error('usage: tsx scripts/original-shapes.ts <slashid-api-openapi.yml> [source label]');
  process.exit(2);
}
const doc = parse(readFileSync(file, 'utf8')) as {
  info: { title: string; version: string };
  paths: Record<string, Record<string, { requestBody?: unknown; responses?: Record<string, unknown> }>>;
};
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const DROPPED = new Set(['description', 'example', 'examples', 'title', 'externalDocs', 'x-go-name', 'deprecated', 'xml']);

function resolve(ref: string): unknown {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

/** The schema with references inlined (a cycle becomes `{}`) and prose dropped. */
function shape(node: unknown, seen: readonly string[] = []): unknown {
  if (Array.isArray(node)) return node.map((n) => shape(n, seen));
  if (node === null || typeof node !== 'object') return node;
  const ref = (node as { $ref?: string }).$ref;
  if (ref) return seen.includes(ref) ? {} : shape(resolve(ref), [...seen, ref]);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (DROPPED.has(k) && k !== 'properties') continue;
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, shape(s, seen)])) : shape(v, seen);
  }
  return out;
}

const jsonSchema = (content: unknown) => {
  const c = content as Record<string, { schema?: unknown }> | undefined;
  const media = c?.['application/json'] ?? (c ? Object.values(c)[0] : undefined);
  return media?.schema === undefined ? null : shape(media.schema);
};

const operations: Record<string, unknown> = {};
for (const [path, item] of Object.entries(doc.paths)) {
  for (const method of METHODS) {
    const op = item[method];
    if (!op) continue;
    const responses: Record<string, unknown> = {};
    // Refusals all use the error envelope; only the successes' shapes differ per operation.
    for (const [status, r] of Object.entries(op.responses ?? {})) {
      if (!status.startsWith('2')) continue;
      const resolved = shape(r) as { content?: unknown };
      responses[status] = jsonSchema(resolved.content);
    }
    const body = op.requestBody ? jsonSchema((shape(op.requestBody) as { content?: unknown }).content) : undefined;
    operations[`${method.toUpperCase()} ${path}`] = { ...(body !== undefined ? { requestBody: body } : {}), responses };
  }
}
const out = { document: `${doc.info.title} ${doc.info.version}`, source, operations };
writeFileSync(new URL('../test/fixtures/original-openapi.json', import.meta.url), JSON.stringify(out) + '\n');
console.log(`${Object.keys(operations).length} operations written to test/fixtures/original-openapi.json`);
