// The layering check itself: on a small tree that keeps the rules it passes, and each kind of violation,
// planted in a copy of that tree, makes it fail and name the import.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkImports } from '../../scripts/check-imports.js';
import { removeDir, tempDir } from '../support/server.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
after(() => dirs.forEach(removeDir));

/** A src/ tree with one file per layer, each importing the layers below it as the rules allow. */
const CLEAN: Record<string, string> = {
  'errors.ts': 'export class ServiceError extends Error {}\n',
  'config.ts': "import { availableParallelism } from 'node:os';\nexport const threads = availableParallelism();\n",
  'lib/clock.ts': 'export const now = () => Date.now();\n',
  'domain/apply.ts': "import { ServiceError } from '../errors.js';\nimport { now } from '../lib/clock.js';\nexport const apply = () => (now() < 0 ? new ServiceError() : null);\n",
  'wal/log.ts': "import { open } from 'lmdb';\nimport { Packr } from 'msgpackr';\nimport type { apply } from '../domain/apply.js';\nexport type Apply = typeof apply;\nexport const store = [open, Packr];\n",
  'events/log.ts': "import { store } from '../wal/log.js';\nexport const events = store;\n",
  'org/actor.ts': "import { apply } from '../domain/apply.js';\nimport { events } from '../events/log.js';\nexport const actor = [apply, events];\n",
  'regions/replica-store.ts': "import { open } from 'lmdb';\nimport { actor } from '../org/actor.js';\nexport const replica = [open, actor];\n",
  'tokens/sign.ts': "import { SignJWT } from 'jose';\nexport const sign = SignJWT;\n",
  'auth/sign-in.ts': "import {\n  sign,\n} from '../tokens/sign.js';\nexport const signIn = sign;\n",
  'http/server.ts': "import uws from 'uWebSockets.js';\nimport { signIn } from '../auth/sign-in.js';\nimport { replica } from '../regions/replica-store.js';\nexport const front = [uws, signIn, replica];\n",
  'service.ts': "import { front } from './http/server.js';\nexport const service = front;\n",
  'main.ts': "import { service } from './service.js';\nimport { threads } from './config.js';\nconsole.log(service, threads);\n",
};

function tree(extra: Record<string, string> = {}): string {
  const root = tempDir('identity-imports-');
  dirs.push(root);
  for (const [path, text] of Object.entries({ ...CLEAN, ...extra })) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function run(root: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check-imports.ts', root], { cwd: repo, encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('scripts/check-imports.ts', () => {
  test('given a tree that keeps the layering, then it passes with exit code 0', () => {
    const r = run(tree());
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /the layering holds/);
  });

  test('given a deliberately upstream import, then it fails with exit code 1 and names the import', () => {
    const r = run(tree({ 'wal/upstream.ts': "import { front } from '../http/server.js';\nexport const x = front;\n" }));
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /wal\/upstream\.ts: imports http\/server\.ts, upstream \(http is a later layer than wal\)/);
  });

  test('given each kind of violation, then each is reported, and nothing else', () => {
    const problems = checkImports(
      tree({
        // domain/ may import errors.ts and lib/ alone, even from a layer below it.
        'domain/catalog-user.ts': "import type { Apply } from '../wal/log.js';\nexport type A = Apply;\n",
        'org/storage.ts': "import { open } from 'lmdb';\nexport const o = open;\n",
        'http/jwt.ts': "export { jwtVerify } from 'jose';\n",
        'regions/socket.ts': "import 'uWebSockets.js';\n",
        // Folders of one layer may import each other, but not in a loop.
        'tokens/hooks.ts': "import { signIn } from '../auth/sign-in.js';\nexport const h = signIn;\n",
        'events/lazy.ts': "export const later = () => import('../org/actor.js');\n",
        // A folder without a place is reported once, whatever it imports.
        'kiosk/main.ts': "import { service } from '../service.js';\nexport const g = service;\n",
      }),
    );
    assert.deepEqual(problems, [
      'domain/catalog-user.ts: imports wal/log.ts; domain/ imports nothing from src/ but errors.ts and lib/',
      'events/lazy.ts: imports org/actor.ts, upstream (org is a later layer than events)',
      'http/jwt.ts: imports jose, which only tokens, gate may import',
      'org/storage.ts: imports lmdb, which only wal, regions/replica-store.ts may import',
      'regions/socket.ts: imports uWebSockets.js, which only http may import',
      'kiosk: has no place in the layer order; add it to LAYERS in scripts/check-imports.ts',
      'folders import each other in a loop: auth, tokens (auth/sign-in.ts → tokens/sign.ts; tokens/hooks.ts → auth/sign-in.ts)',
      'folders import each other in a loop: domain, wal (domain/catalog-user.ts → wal/log.ts)',
      'folders import each other in a loop: events, org (events/lazy.ts → org/actor.ts)',
    ]);
  });
});
