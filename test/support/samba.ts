// A real Active Directory domain controller for tests: Debian's Samba AD DC, provisioned once into a
// temporary template folder (kept across runs: provisioning takes tens of seconds), copied per test file,
// bound to loopback with LDAP only, and stopped by its pid. Absent samba-tool, tests skip with the reason.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { tempDir } from './server.js';

export const SAMBA_MISSING = 'samba-tool not found: the Active Directory tests need Debian samba-ad-dc and samba-ad-provision (.ci/run installs them)';
export const AD_PASSWORD = 'Identity-Test-Passw0rd!';
export const AD_BASE = 'DC=example,DC=test';
export const AD_DOMAIN = 'example.test';

export const sambaPresent = (): boolean => spawnSync('sh', ['-c', 'command -v samba-tool && command -v samba'], { encoding: 'utf8' }).status === 0;

export interface Samba {
  url: string;
  dir: string;
  stop(): Promise<void>;
}

const TEMPLATE = join(tmpdir(), 'identity-samba-template-v1');

function template(): string {
  if (existsSync(join(TEMPLATE, 'ready'))) return TEMPLATE;
  const building = `${TEMPLATE}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  execFileSync('samba-tool', ['domain', 'provision', '--use-rfc2307', '--realm=EXAMPLE.TEST', '--domain=EXAMPLE', '--server-role=dc', '--dns-backend=NONE', `--adminpass=${AD_PASSWORD}`, `--targetdir=${building}`, '--option=interfaces=lo', '--option=bind interfaces only=yes'], { stdio: 'ignore' });
  // The configuration names the folder it was provisioned into: name the template's final place instead.
  const conf = join(building, 'etc', 'smb.conf');
  writeFileSync(conf, readFileSync(conf, 'utf8').split(building).join(TEMPLATE));
  writeFileSync(join(building, 'ready'), '');
  try {
    renameSync(building, TEMPLATE);
  } catch {
    // another run made it meanwhile
    rmSync(building, { recursive: true, force: true });
  }
  return TEMPLATE;
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

/** Samba's LDAP port is fixed (389), so one domain controller runs at a time on a machine, whichever suite wants it. */
const LOCK = join(tmpdir(), 'identity-samba.lock');

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Takes the machine's Samba lock (a file holding the owner's pid), waiting while another live process holds it; a
 * lock whose process is gone is taken over. Without it, a second suite's Samba failed to bind and its test talked
 * to the first suite's domain controller.
 */
async function lockSamba(): Promise<() => void> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    try {
      writeFileSync(LOCK, String(process.pid), { flag: 'wx' });
      return () => rmSync(LOCK, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number(readFileSync(LOCK, { encoding: 'utf8', flag: 'r' }) || 0);
    if (owner > 0 && !alive(owner)) {
      try {
        unlinkSync(LOCK);
      } catch {
        // another waiter took it over first
      }
      continue;
    }
    if (Date.now() > deadline) throw new Error(`Samba is held by process ${owner} (${LOCK}) for 10 minutes`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function startSamba(): Promise<Samba> {
  const release = await lockSamba();
  try {
    return await startLocked(release);
  } catch (error) {
    release();
    throw error;
  }
}

async function startLocked(release: () => void): Promise<Samba> {
  const source = template();
  const dir = tempDir('identity-samba-');
  execFileSync('cp', ['-a', `${source}/.`, dir]);
  mkdirSync(join(dir, 'log'), { recursive: true });
  mkdirSync(join(dir, 'run'), { recursive: true });
  const conf = join(dir, 'etc', 'smb.conf');
  let text = readFileSync(conf, 'utf8').split(source).join(dir);
  text = text.replace(/\tserver services = .*\n/, '\tserver services = ldap\n\tldap server require strong auth = no\n\tpid directory = ' + join(dir, 'run') + '\n');
  text = text.replace(/\tlog file = .*\n/, `\tlog file = ${join(dir, 'log', 'log.%m')}\n`);
  writeFileSync(conf, text);
  if (await listening(389)) throw new Error('something already listens on 127.0.0.1:389');
  const child: ChildProcess = spawn('samba', ['-i', '-M', 'single', '-s', conf], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 120_000;
  while (!(await listening(389))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`samba did not start; see ${dir}/log, or run: samba -i -M single -s ${conf}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url: 'ldap://127.0.0.1:389',
    dir,
    async stop() {
      if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
      release();
    },
  };
}
