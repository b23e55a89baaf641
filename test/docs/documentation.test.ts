// The documentation against the code: every variable src/config.ts reads and every route the service serves
// is written down somewhere in docs/, and every relative link of README.md and docs/ leads somewhere.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from '../support/server.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const docsDir = join(root, 'docs');
const markdownFiles = [join(root, 'README.md'), ...readdirSync(docsDir).filter((f) => f.endsWith('.md')).sort().map((f) => join(docsDir, f))];
const docsText = readdirSync(docsDir).filter((f) => f.endsWith('.md')).map((f) => readFileSync(join(docsDir, f), 'utf8')).join('\n');

/** Pages written on other branches: the README links them before they arrive, and once they do they are checked like any other. */
const PENDING_PAGES = new Set(['docs/one-time-codes.md', 'docs/step-up.md', 'docs/benchmarks-signin-oauth.md', 'docs/console-pages.md']);

/** A path template with every parameter name forgotten: `/persons/{person_id}` and `/persons/{id}` are one route. */
const normalised = (path: string) => path.replace(/\{[^}/]*\}/g, '{}');

/** The lines of a Markdown text outside fenced code blocks. */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (line.startsWith('```')) fenced = !fenced;
    return !fenced && !line.startsWith('```');
  });
}

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens; a repeated one gets -1, -2, ... */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const words = heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').toLowerCase();
    const base = words.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Whether some line of docs/ names the route's path template (parameter names aside), not as a prefix of a longer path. */
function documented(path: string, lines: string[]): boolean {
  const template = normalised(path);
  return lines.some((line) => {
    for (let at = line.indexOf(template); at !== -1; at = line.indexOf(template, at + 1)) {
      const next = line[at + template.length];
      const previous = line[at - 1];
      if ((next === undefined || !/[\w{}/.-]/.test(next)) && (previous === undefined || !/[\w}.-]/.test(previous))) return true;
    }
    return false;
  });
}

describe('the documentation', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('every environment variable src/config.ts reads is documented in docs/', () => {
    const config = readFileSync(join(root, 'src', 'config.ts'), 'utf8');
    const variables = [...new Set(config.match(/\bSERVICE_[A-Z0-9_]+\b/g))].sort();
    assert.ok(variables.length > 20, `found only ${variables.length} variables in src/config.ts`);
    const missing = variables.filter((name) => !new RegExp(`\\b${name}\\b`).test(docsText));
    assert.deepEqual(missing, [], `variables read by src/config.ts and named nowhere in docs/: ${missing.join(', ')}`);
  });

  test('every route of /openapi.json is documented in docs/ by its path template', async () => {
    const r = await server.client.as('', '').get('/openapi.json');
    assert.equal(r.status, 200);
    const routes = Object.entries(r.body.paths as Record<string, Record<string, unknown>>).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => ({ method: method.toUpperCase(), path })),
    );
    assert.ok(routes.length > 100, `the service serves only ${routes.length} routes`);
    const lines = docsText.split('\n').map(normalised);
    const missing = routes.filter(({ path }) => !documented(path, lines)).map(({ method, path }) => `${method} ${path}`);
    assert.deepEqual(missing, [], `routes served and not documented in docs/:\n${missing.join('\n')}`);
  });

  test('every relative link of README.md and docs/ resolves, its #anchor included', () => {
    const broken: string[] = [];
    const anchorCache = new Map<string, Set<string>>();
    const anchors = (file: string) => anchorCache.get(file) ?? anchorCache.set(file, anchorsOf(readFileSync(file, 'utf8'))).get(file)!;
    for (const file of markdownFiles) {
      const text = readFileSync(file, 'utf8');
      for (const line of proseLines(text)) {
        // Links in prose only: inline code spans show Markdown, they do not link.
        for (const [, target] of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue;
          const [pathPart, anchor] = target!.split('#', 2) as [string, string | undefined];
          const destination = pathPart === '' ? file : join(dirname(file), decodeURIComponent(pathPart));
          const where = `${relative(root, file)}: ${target}`;
          if (!existsSync(destination)) {
            if (!PENDING_PAGES.has(relative(root, destination))) broken.push(`${where} (no such file)`);
            continue;
          }
          if (anchor !== undefined && destination.endsWith('.md') && !anchors(destination).has(anchor)) broken.push(`${where} (no such heading)`);
        }
      }
    }
    assert.deepEqual(broken, [], `broken links:\n${broken.join('\n')}`);
  });
});
