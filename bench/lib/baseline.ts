// An earlier version of the service to measure beside the current one in the same run (--baseline-ref): the
// tree of a git ref unpacked into a temporary directory with this checkout's node_modules linked in, so that
// its servers start like this one's (startService's `root`). git archive rather than git worktree add: nothing
// is recorded in the repository, so a run that is killed leaves only a temporary directory behind.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../test/support/process.js';

export interface Baseline {
  /** the ref as given, e.g. ad810ac^1 */
  ref: string;
  /** the commit it names */
  commit: string;
  /** the unpacked tree: startService(..., { root }) runs its src/main.ts */
  root: string;
  remove(): void;
}

/** Unpacks `ref` (any git revision of this repository); throws with git's message when it names no commit. */
export function checkoutBaseline(ref: string): Baseline {
  const git = (...args: string[]) => execFileSync('git', ['-C', REPO_ROOT, ...args], { encoding: 'buffer', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
  let commit: string;
  try {
    commit = git('rev-parse', '--verify', '--quiet', `${ref}^{commit}`).toString().trim();
  } catch {
    throw new Error(`--baseline-ref: ${ref} names no commit of this repository`);
  }
  const root = mkdtempSync(join(tmpdir(), `identity-baseline-${commit.slice(0, 8)}-`));
  try {
    execFileSync('tar', ['-x', '-C', root], { input: git('archive', '--format=tar', commit), stdio: ['pipe', 'ignore', 'pipe'] });
    // The shared install: the baseline runs on the same dependencies (a lockfile change between the two is not measured).
    symlinkSync(realpathSync(join(REPO_ROOT, 'node_modules')), join(root, 'node_modules'), 'dir');
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return { ref, commit, root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
