// The layering of STYLE.md, checked: which folders may import which, and which folders alone may import
// uWebSockets.js, lmdb, msgpackr and jose. `node --import tsx scripts/check-imports.ts [root]` (root: src)
// prints every violation and exits 1 when there is one; `npm test` runs it first.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The layers of src/, from the core that everything may use to the composition root that uses everything.
 * A folder (or top-level file) imports only from its own layer or those before it: the path of a request
 * reads front (http) → use cases (auth, tokens, webhooks) → regions → organization actor (org) → events →
 * WAL → pure domain. Folders of one layer must not import each other in a cycle. A new folder gets a place
 * here before it can be imported.
 */
export const LAYERS: ReadonlyArray<readonly string[]> = [
  ['lib', 'errors.ts', 'config.ts'],
  ['domain'],
  ['wal'],
  ['events'],
  ['org'],
  ['regions'],
  ['mail'],
  ['tokens', 'webhooks', 'auth', 'sso', 'oauth', 'persons', 'gate', 'browser', 'cloud'],
  ['http'],
  ['service.ts', 'main.ts'],
];

/** Packages only some places may import; each entry is a folder (`http`) or a file (`regions/replica-store.ts`). */
export const PACKAGE_OWNERS: Readonly<Record<string, readonly string[]>> = {
  'uWebSockets.js': ['http'],
  lmdb: ['wal', 'regions/replica-store.ts'],
  msgpackr: ['wal', 'regions/replica-store.ts'],
  jose: ['tokens', 'gate'],
  'csv-parse': ['persons'],
  nodemailer: ['mail'],
  '@aws-sdk/client-iam': ['cloud'],
  ldapts: ['cloud'],
  '@googleapis/iam': ['cloud'],
  '@googleapis/cloudresourcemanager': ['cloud'],
  '@node-rs/bcrypt': ['auth/password-formats.ts'],
  '@node-rs/argon2': ['auth/password-formats.ts'],
};

/** domain/ is pure: from src/ it imports errors.ts and lib/ alone. */
const DOMAIN_MAY_IMPORT = new Set(['domain', 'errors.ts', 'lib']);

const rank = new Map(LAYERS.flatMap((layer, i) => layer.map((unit) => [unit, i] as const)));

// Static imports and re-exports (`import x from`, `import { a } from`, `import * as n from`, `export { a } from`,
// `export * from`, type-only forms included), side-effect imports, and dynamic import() of a literal.
const STATIC = /^\s*(?:import|export)\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?(?:\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+)\s+from\s+['"]([^'"]+)['"]/gm;
const SIDE_EFFECT = /^\s*import\s+['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

export function specifiers(source: string): string[] {
  const out: string[] = [];
  for (const re of [STATIC, SIDE_EFFECT, DYNAMIC]) for (const m of source.matchAll(re)) out.push(m[1] as string);
  return out;
}

/** The folder a file of src/ belongs to, or the file itself when it sits at the top (`errors.ts`). */
function unitOf(path: string): string {
  const [first] = path.split('/');
  return first as string;
}

/** `lmdb` for `lmdb`, `@scope/pkg` for `@scope/pkg/sub`. */
function packageName(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

function ownedBy(path: string, owners: readonly string[]): boolean {
  return owners.some((o) => (o.endsWith('.ts') ? path === o : path.startsWith(`${o}/`)));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every violation under root (a src/ tree), one line each; none when the layering holds. */
export function checkImports(root: string): string[] {
  const problems: string[] = [];
  const edges = new Map<string, Map<string, string>>();
  const unplaced = new Set<string>();

  for (const file of sourceFiles(root).sort()) {
    const from = relative(root, file).split(sep).join('/');
    const fromUnit = unitOf(from);
    if (!rank.has(fromUnit)) unplaced.add(fromUnit);
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('node:')) continue;
      if (!spec.startsWith('.')) {
        const owners = PACKAGE_OWNERS[packageName(spec)];
        if (owners && !ownedBy(from, owners)) problems.push(`${from}: imports ${spec}, which only ${owners.join(', ')} may import`);
        continue;
      }
      const target = relative(root, resolve(dirname(file), spec)).split(sep).join('/').replace(/\.js$/, '.ts');
      if (target.startsWith('..')) {
        problems.push(`${from}: imports ${spec}, outside src/`);
        continue;
      }
      const toUnit = unitOf(target);
      if (toUnit === fromUnit) continue;
      if (!rank.has(toUnit)) unplaced.add(toUnit);
      if (fromUnit === 'domain' && !DOMAIN_MAY_IMPORT.has(toUnit)) {
        problems.push(`${from}: imports ${target}; domain/ imports nothing from src/ but errors.ts and lib/`);
      } else if ((rank.get(toUnit) ?? -1) > (rank.get(fromUnit) ?? Infinity)) {
        problems.push(`${from}: imports ${target}, upstream (${toUnit} is a later layer than ${fromUnit})`);
      }
      const out = edges.get(fromUnit) ?? new Map<string, string>();
      if (!out.has(toUnit)) out.set(toUnit, `${from} → ${target}`);
      edges.set(fromUnit, out);
    }
  }
  for (const unit of [...unplaced].sort()) problems.push(`${unit}: has no place in the layer order; add it to LAYERS in scripts/check-imports.ts`);
  for (const cycle of cycles(edges)) problems.push(`folders import each other in a loop: ${cycle}`);
  return problems;
}

/**
 * Each set of folders that import each other in a loop (a strongly connected component of the folder graph),
 * with the imports inside it that do not point down the layer order: those are the ones to remove.
 */
function cycles(edges: Map<string, Map<string, string>>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const components: string[][] = [];
  const visit = (u: string): void => {
    index.set(u, index.size);
    low.set(u, index.get(u) as number);
    stack.push(u);
    for (const v of edges.get(u)?.keys() ?? []) {
      if (!index.has(v)) {
        visit(v);
        low.set(u, Math.min(low.get(u) as number, low.get(v) as number));
      } else if (stack.includes(v)) {
        low.set(u, Math.min(low.get(u) as number, index.get(v) as number));
      }
    }
    if (low.get(u) === index.get(u)) {
      const component: string[] = [];
      let v: string;
      do {
        v = stack.pop() as string;
        component.push(v);
      } while (v !== u);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const u of [...edges.keys()].sort()) if (!index.has(u)) visit(u);
  return components.map((members) => {
    const against = members.flatMap((u) =>
      [...(edges.get(u) ?? [])].filter(([v]) => members.includes(v) && (rank.get(v) ?? -1) >= (rank.get(u) ?? -1)).map(([, first]) => first),
    );
    return `${members.join(', ')} (${against.sort().join('; ')})`;
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const root = resolve(process.argv[2] ?? 'src');
  const problems = checkImports(root);
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(`import check: ${problems.length} violation(s) of the layering in ${relative(process.cwd(), root) || '.'} (see scripts/check-imports.ts)`);
    process.exit(1);
  }
  console.log('import check: the layering holds');
}
