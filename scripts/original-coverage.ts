// How many of the original's public operations a running service implements, compared by method and path
// template (parameter names aside), from its /openapi.json and test/fixtures/original-openapi.json.
//   npx tsx scripts/original-coverage.ts [http://127.0.0.1:8080]
import { readFileSync } from 'node:fs';

const base = process.argv[2] ?? 'http://127.0.0.1:8080';
const original = JSON.parse(readFileSync(new URL('../test/fixtures/original-openapi.json', import.meta.url), 'utf8')) as { document: string; operations: Record<string, unknown> };
const ours = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
const template = (op: string) => op.replace(/\{[^}]+\}/g, '{}');
const served = new Set(Object.entries(ours.paths).flatMap(([path, item]) => Object.keys(item).map((m) => template(`${m.toUpperCase()} ${path}`))));
const all = Object.keys(original.operations);
const missing = all.filter((op) => !served.has(template(op)));
console.log(`${all.length - missing.length} of ${all.length} operations of ${original.document} are served at ${base}`);
for (const op of missing) console.log(`  missing: ${op}`);
